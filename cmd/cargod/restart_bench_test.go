package main

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/internal/streamgen"
)

// restartEvents is the size of the history BenchmarkRestart starts on.
const restartEvents = 1_000_000

// BenchmarkRestart measures how long cargod takes, from the call of run
// to the API serving, on a stream of a million events written through
// the domain beforehand (some minutes: each is decided and durably
// stored). The first start has no snapshot and replays the whole stream
// (reported as cold-s); it stops once its reactors have worked through
// the history (as a replica's would have), which leaves a snapshot. Then
// each operation is a start from the snapshot the one before left, and a
// clean stop: ns/op is the time to ready.
//
//	go test ./cmd/cargod -run '^$' -bench Restart -benchtime 3x -timeout 60m
func BenchmarkRestart(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a history of a million events first")
	}
	dir := b.TempDir()
	store, n, err := streamgen.Embedded(context.Background(), dir, streamgen.Options{Events: restartEvents})
	if err != nil {
		b.Fatal(err)
	}
	store.Close()
	cold, stop := startTimed(b, dir)
	b.Logf("%d events: the first start, without a snapshot, took %s", n, cold.Round(time.Millisecond))
	// A replica's reactors keep up with the stream: those of the first
	// start work through the history before it stops, so that the starts
	// measured do not.
	untilIdle(time.Second, 10*time.Minute)
	stop()
	var ready time.Duration
	b.ResetTimer()
	for b.Loop() {
		took, stop := startTimed(b, dir)
		ready += took
		b.StopTimer()
		stop()
		b.StartTimer()
	}
	b.ReportMetric(cold.Seconds(), "cold-s")
	b.ReportMetric(ready.Seconds()/float64(b.N), "ready-s")
}

// snapshotLine is a log line about a snapshot, which the benchmark shows.
var snapshotLine = regexp.MustCompile(`"msg":"[^"]*snapshot`)

// startTimed starts cargod on dir, waits until its API serves, and
// returns how long that took, and how to stop it.
func startTimed(b *testing.B, dir string) (time.Duration, func()) {
	b.Helper()
	start := time.Now()
	r := startReplica(dir, map[string]string{"CARGO_LOG_LEVEL": "info", "CARGO_DEMO": "false"})
	for listening.FindString(r.stdout.String()) == "" {
		select {
		case <-r.done:
			b.Fatalf("cargod stopped at start: %v\n%s", r.err, r.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	took := time.Since(start)
	return took, func() {
		r.stop()
		<-r.done
		if r.err != nil {
			b.Fatalf("cargod ended with %v", r.err)
		}
		for line := range strings.Lines(r.stderr.String()) {
			if snapshotLine.MatchString(line) {
				b.Log(strings.TrimSpace(line))
			}
		}
	}
}

// untilIdle waits until this process has used less than a tenth of a
// core for a whole period, or at most max.
func untilIdle(period, max time.Duration) {
	for deadline := time.Now().Add(max); time.Now().Before(deadline); {
		before := processCPU()
		time.Sleep(period)
		if processCPU()-before < period/10 {
			return
		}
	}
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
