package projections

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Maintenance rebuilds and verifies the read models of a running service
// (see aside.go), one job at a time, in the background: an operator starts
// a job and asks how far it has come until it ends.
type Maintenance struct {
	ctx       context.Context // jobs end with it
	projector *Projector
	stream    StreamChecker
	log       *slog.Logger

	mu      sync.Mutex
	running *job
	last    map[JobKind]*job // the newest job of each kind
	rebuilt []func()         // see AfterRebuild
}

// StreamChecker checks every event of the stream up to a sequence
// (eventstore.Store implements it; see Check there), reporting each event
// read to progress and each problem found to problem.
type StreamChecker interface {
	Check(ctx context.Context, to uint64, progress func(seq uint64), problem func(domain.StreamProblem)) error
	LastSequence(ctx context.Context) (uint64, error)
}

// JobKind is what a maintenance job does.
type JobKind string

const (
	// Rebuild builds fresh read models from the stream and swaps them in.
	Rebuild JobKind = "rebuild"
	// Verify checks every event of the stream and compares the read
	// models with a fresh replay.
	Verify JobKind = "verify"
)

// Job states.
const (
	JobRunning   = "running"
	JobSucceeded = "succeeded" // a rebuild swapped, a verification found nothing
	JobFailed    = "failed"    // it could not finish, or a verification found problems
)

// Job phases.
const (
	PhaseStarting       = "starting"
	PhaseCheckingStream = "checking the stream"
	PhaseReplaying      = "replaying the stream into fresh read models"
	PhaseSwapping       = "swapping the fresh read models in"
	PhaseComparing      = "comparing the read models with the fresh ones"
	PhaseDone           = "done"
)

// maxProblems is how many problems of the stream a verification lists;
// it counts the others.
const maxProblems = 1000

// JobStatus is how far a job has come, and what it found.
type JobStatus struct {
	Kind     JobKind
	State    string // JobRunning, JobSucceeded or JobFailed
	Phase    string // what it is doing now, a Phase* constant
	Done     uint64 // events of the phase done so far
	Total    uint64 // events of the phase
	Rate     float64
	Sequence uint64 // the read models' sequence swapped in or compared at, once there
	Started  time.Time
	Finished time.Time // zero while it runs
	Error    string    // why it could not finish
	// A verification's findings: problems of events, and read models
	// that differ from a fresh replay.
	StreamProblems []domain.StreamProblem
	MoreProblems   int // problems of events found beyond those listed
	Models         []ModelDifference
}

// job is one rebuild or verification.
type job struct {
	mu         sync.Mutex
	status     JobStatus
	phaseStart time.Time
	progress   func() (done, total uint64) // how far the phase has come
}

// NewMaintenance returns the maintenance of the projector's models; its
// jobs end when ctx does.
func NewMaintenance(ctx context.Context, p *Projector, stream StreamChecker, log *slog.Logger) *Maintenance {
	return &Maintenance{ctx: ctx, projector: p, stream: stream, log: log, last: map[JobKind]*job{}}
}

// AfterRebuild has f called after each rebuild has swapped fresh models
// in, before the projector applies anything again: for caches of what the
// models held (a rebuild may change what a model holds at the same
// sequence). Call it before any job starts.
func (m *Maintenance) AfterRebuild(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rebuilt = append(m.rebuilt, f)
}

// Start starts a job of kind, unless one runs (a domain.Conflict): both
// kinds double the read models' memory while they run. A stream that does
// not answer (ctx is the asker's) is its error, domain.ErrStoreUnavailable
// to retry, rather than a job accepted that fails at once.
func (m *Maintenance) Start(ctx context.Context, kind JobKind) (JobStatus, error) {
	if !m.projector.CaughtUp() {
		return JobStatus{}, domain.Errorf(domain.Conflict, "the read models are still being replayed at start: %s them once they are ready", kind)
	}
	if _, err := m.stream.LastSequence(ctx); err != nil {
		return JobStatus{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if j := m.running; j != nil {
		s := j.current()
		return JobStatus{}, domain.Errorf(domain.Conflict, "a %s of the read models is running since %s (%s, %d of %d events): one at a time",
			s.Kind, s.Started.Format(time.RFC3339), s.Phase, s.Done, s.Total)
	}
	j := &job{status: JobStatus{Kind: kind, State: JobRunning, Phase: PhaseStarting, Started: time.Now().UTC()}}
	m.running, m.last[kind] = j, j
	go m.run(j)
	return j.current(), nil
}

// Status is the newest job of kind, running or ended; domain.NotFound if
// none ran since this process started.
func (m *Maintenance) Status(kind JobKind) (JobStatus, error) {
	m.mu.Lock()
	j := m.last[kind]
	m.mu.Unlock()
	if j == nil {
		return JobStatus{}, domain.Errorf(domain.NotFound, "no %s of the read models ran on this replica since it started", kind)
	}
	return j.current(), nil
}

// progressEvery is how often a running job logs how far it has come.
const progressEvery = 5 * time.Second

func (m *Maintenance) run(j *job) {
	kind := j.current().Kind
	log := m.log.With("job", string(kind))
	log.Info("read models: "+string(kind)+" started", "appliedSequence", m.projector.Applied())
	stopLogging := make(chan struct{})
	go func() {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-stopLogging:
				return
			case <-tick.C:
				s := j.current()
				log.Info("read models: "+string(kind)+" progress", "phase", s.Phase, "done", s.Done, "total", s.Total, "eventsPerSecond", int(s.Rate))
			}
		}
	}()
	var err error
	if kind == Rebuild {
		err = m.rebuild(j)
	} else {
		err = m.verify(j)
	}
	close(stopLogging)
	// Ended and no longer running at once: a job may start as soon as
	// the status says this one ended.
	m.mu.Lock()
	s := j.finish(err)
	m.running = nil
	m.mu.Unlock()
	attrs := []any{"state", s.State, "sequence", s.Sequence, "took", s.Finished.Sub(s.Started).Round(time.Millisecond).String(),
		"eventsPerSecond", int(s.Rate)}
	switch {
	case err != nil && m.ctx.Err() != nil:
		log.Warn("read models: "+string(kind)+" stopped, as the service is stopping", append(attrs, "err", err)...)
	case err != nil:
		log.Error("read models: "+string(kind)+" failed", append(attrs, "err", err)...)
	case s.State == JobFailed:
		log.Warn("read models: verify found problems", append(attrs, "streamProblems", len(s.StreamProblems)+s.MoreProblems, "modelsDiffering", len(s.Models))...)
	default:
		log.Info("read models: "+string(kind)+" ended", attrs...)
	}
}

// rebuild builds the read models aside and swaps them in.
func (m *Maintenance) rebuild(j *job) error {
	return m.projector.aside(m.ctx, func(fresh *Projector) { j.phase(PhaseReplaying, fresh.progress) },
		func(live, fresh []snapshotter, seq uint64) {
			j.phase(PhaseSwapping, nil)
			for i := range live {
				install(live[i], fresh[i])
			}
			m.mu.Lock()
			rebuilt := m.rebuilt
			m.mu.Unlock()
			for _, f := range rebuilt {
				f()
			}
			j.at(seq)
		})
}

// verify builds the read models aside and compares, then checks the
// stream up to the sequence they were compared at: the sequence the
// verification reports, events stored while it ran included.
func (m *Maintenance) verify(j *job) error {
	var to uint64
	err := m.projector.aside(m.ctx, func(fresh *Projector) { j.phase(PhaseReplaying, fresh.progress) },
		func(live, fresh []snapshotter, seq uint64) {
			j.phase(PhaseComparing, nil)
			differences := compareModels(live, fresh)
			j.mu.Lock()
			j.status.Models = differences
			j.mu.Unlock()
			j.at(seq)
			to = seq
		})
	if err != nil {
		return err
	}
	var read uint64
	var readMu sync.Mutex
	j.phase(PhaseCheckingStream, func() (uint64, uint64) {
		readMu.Lock()
		defer readMu.Unlock()
		return read, to
	})
	return m.stream.Check(m.ctx, to, func(seq uint64) {
		readMu.Lock()
		read = seq
		readMu.Unlock()
	}, j.problem)
}

// phase starts a phase whose progress() says how many events of how
// many it has done. A phase that counts none (progress nil) keeps the
// counts of the one before.
func (j *job) phase(name string, progress func() (done, total uint64)) {
	s := j.current()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.Phase = name
	if progress == nil {
		j.status.Done, j.status.Total, j.status.Rate, j.progress = s.Done, s.Total, s.Rate, nil
		return
	}
	j.progress, j.phaseStart = progress, time.Now()
	j.status.Done, j.status.Total, j.status.Rate = 0, 0, 0
}

func (j *job) at(seq uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.Sequence = seq
}

func (j *job) problem(p domain.StreamProblem) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.status.StreamProblems) < maxProblems {
		j.status.StreamProblems = append(j.status.StreamProblems, p)
	} else {
		j.status.MoreProblems++
	}
}

// current is the job's status now.
func (j *job) current() JobStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.status
	if j.progress != nil {
		s.Done, s.Total = j.progress()
		if took := time.Since(j.phaseStart).Seconds(); took > 0 {
			s.Rate = float64(s.Done) / took
		}
	}
	return s
}

// finish ends the job, failed with err if not nil, and returns its
// status; its counts are the last phase's that counted events.
func (j *job) finish(err error) JobStatus {
	j.phase(PhaseDone, nil)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.Finished = time.Now().UTC()
	switch {
	case err != nil:
		j.status.State, j.status.Error = JobFailed, err.Error()
	case len(j.status.StreamProblems) > 0 || len(j.status.Models) > 0:
		j.status.State = JobFailed
	default:
		j.status.State = JobSucceeded
	}
	return j.status
}
