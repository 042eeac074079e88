//go:build race

package main

// startupEvents is the history TestReadyzIsNotReadyWhileAStartReplaysAHistory
// writes: fewer under the race detector, which makes the writing slow.
const startupEvents = 10_000
