package views

import (
	"time"

	"github.com/cargostream/cargostream/projections"
)

// MaintenanceJobJSON is a rebuild or a verification of the read models.
type MaintenanceJobJSON struct {
	Kind                 string                `json:"kind"`
	State                string                `json:"state"`
	Phase                string                `json:"phase"`
	EventsDone           uint64                `json:"eventsDone"`
	EventsTotal          uint64                `json:"eventsTotal"`
	EventsPerSecond      float64               `json:"eventsPerSecond"`
	Sequence             uint64                `json:"sequence"`
	StartedAt            time.Time             `json:"startedAt"`
	FinishedAt           *time.Time            `json:"finishedAt,omitempty"`
	Failure              string                `json:"failure,omitempty"`
	StreamProblems       []StreamProblemJSON   `json:"streamProblems"`
	MoreStreamProblems   int                   `json:"moreStreamProblems"`
	ReadModelDifferences []ModelDifferenceJSON `json:"readModelDifferences"`
}

// StreamProblemJSON is something wrong with one event of the stream.
type StreamProblemJSON struct {
	Sequence  uint64 `json:"sequence"`
	Aggregate string `json:"aggregate"`
	Check     string `json:"check"`
	Problem   string `json:"problem"`
}

// ModelDifferenceJSON is a field of a read model that differs from a
// fresh replay.
type ModelDifferenceJSON struct {
	Model       string   `json:"model"`
	Field       string   `json:"field"`
	Entries     int      `json:"entries"`
	Keys        []string `json:"keys"`
	Detail      string   `json:"detail"`
	Description string   `json:"description"`
}

func ToMaintenanceJobJSON(s projections.JobStatus) MaintenanceJobJSON {
	out := MaintenanceJobJSON{Kind: string(s.Kind), State: s.State, Phase: s.Phase, EventsDone: s.Done, EventsTotal: s.Total,
		EventsPerSecond: float64(int64(s.Rate*10)) / 10, Sequence: s.Sequence, StartedAt: s.Started, Failure: s.Error,
		StreamProblems: []StreamProblemJSON{}, MoreStreamProblems: s.MoreProblems, ReadModelDifferences: []ModelDifferenceJSON{}}
	if !s.Finished.IsZero() {
		out.FinishedAt = &s.Finished
	}
	for _, p := range s.StreamProblems {
		out.StreamProblems = append(out.StreamProblems, StreamProblemJSON{Sequence: p.Sequence, Aggregate: p.Aggregate.String(), Check: p.Check, Problem: p.Problem})
	}
	for _, d := range s.Models {
		out.ReadModelDifferences = append(out.ReadModelDifferences, ModelDifferenceJSON{Model: d.Model, Field: d.Field, Entries: d.Entries,
			Keys: append([]string{}, d.Keys...), Detail: d.Detail, Description: d.String()})
	}
	return out
}
