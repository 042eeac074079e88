package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Row is one line of the report.
type Row struct {
	Scenario string  `json:"scenario"`
	Name     string  `json:"name"`
	Count    int     `json:"count"` // successful operations measured
	Unit     string  `json:"unit"`  // what Rate counts per second
	Rate     float64 `json:"rate"`
	P50Ms    float64 `json:"p50Ms"`
	P99Ms    float64 `json:"p99Ms"`
	// Errors counts failures by kind: an HTTP status, or a word such as
	// "timeout"; Examples shows the first few.
	Errors   map[string]int `json:"errors"`
	Examples []string       `json:"examples,omitempty"`
	// Ratio is Rate over the Rate of the bare handler's row, on rows that
	// have one.
	Ratio float64 `json:"ratio,omitempty"`
}

// ErrorCount is the number of failures of the row.
func (r Row) ErrorCount() int {
	n := 0
	for _, c := range r.Errors {
		n += c
	}
	return n
}

// tally collects the outcomes of a row, from many goroutines.
type tally struct {
	mu        sync.Mutex
	latencies []time.Duration
	errors    map[string]int
	examples  []string
	// For progress: the outcomes so far, successes and failures apart (a
	// server gone away fails fast, and its failures read as operations).
	done, failed atomic.Int64
}

const maxExamples = 3

func newTally() *tally { return &tally{errors: map[string]int{}} }

func (t *tally) ok(d time.Duration) {
	t.done.Add(1)
	t.mu.Lock()
	t.latencies = append(t.latencies, d)
	t.mu.Unlock()
}

func (t *tally) fail(err error) {
	t.failed.Add(1)
	kind := "error"
	var f *failure
	if errors.As(err, &f) {
		kind = f.kind
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errors[kind]++
	if len(t.examples) < maxExamples {
		t.examples = append(t.examples, err.Error())
	}
}

// row sums the tally up; the rate is count over elapsed.
func (t *tally) row(scenario, name, unit string, elapsed time.Duration) Row {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := slices.Clone(t.latencies)
	slices.Sort(l)
	r := Row{Scenario: scenario, Name: name, Unit: unit, Count: len(l), P50Ms: ms(percentile(l, 0.50)), P99Ms: ms(percentile(l, 0.99)),
		Errors: t.errors, Examples: t.examples}
	if elapsed > 0 {
		r.Rate = float64(len(l)) / elapsed.Seconds()
	}
	return r
}

// percentile is the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(0, int(math.Ceil(p*float64(len(sorted))))-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// op is one operation of a row by client number worker. It returns how
// long the measured part of it took, which may be less than the whole (a
// booking is cancelled after it is measured).
type op func(ctx context.Context, worker int) (time.Duration, error)

// timed measures all of f.
func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// measure runs op from clients goroutines for the warm-up and then the
// duration, and counts the operations whose measured part ends within the
// duration (as wrk does): operations slower than the warm-up still count.
func measure(ctx context.Context, cfg Config, scenario, name, unit string, clients int, o op) Row {
	t := newTally()
	stopProgress := progress(cfg.Progress, scenario+" "+name, "operations", &t.done, &t.failed)
	measured := time.Now().Add(cfg.Warmup)
	end := measured.Add(cfg.Duration)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(end) {
				start := time.Now()
				d, err := o(ctx, w)
				at := time.Now()
				if err == nil {
					at = start.Add(d) // when the measured part ended: a booking is confirmed before it is cancelled
				}
				switch {
				case ctx.Err() != nil: // interrupted: not an outcome of the server's
				case at.Before(measured) || at.After(end):
					// Shown in progress, not measured.
					if err != nil {
						t.failed.Add(1)
					} else {
						t.done.Add(1)
					}
				case err != nil:
					t.fail(err)
				default:
					t.ok(d)
				}
			}
		})
	}
	wg.Wait()
	stopProgress()
	return t.row(scenario, name, unit, cfg.Duration)
}

// progress prints a line a second on w: the time, how many things so far
// and how many in the last second, and how many failures so far if any
// (failed may be nil), until the returned stop is called.
func progress(w io.Writer, label, things string, count, failed *atomic.Int64) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last := int64(0)
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				n := count.Load()
				line := fmt.Sprintf("%-45s %5.0fs %9d %s %8d/s", label, now.Sub(start).Seconds(), n, things, n-last)
				if failed != nil && failed.Load() > 0 {
					line += fmt.Sprintf(" %9d failed", failed.Load())
				}
				fmt.Fprintln(w, line)
				last = n
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
