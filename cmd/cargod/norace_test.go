//go:build !race

package main

// startupEvents is the history TestReadyzIsNotReadyWhileAStartReplaysAHistory
// writes.
const startupEvents = 100_000
