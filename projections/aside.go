package projections

import (
	"context"
	"fmt"
)

// Read models are rebuilt, or verified, on a running service beside the
// live ones: fresh, empty models are built from the stream up to where the
// live ones are, while the live ones go on serving reads and applying new
// events. Then, with the projector held (it applies nothing meanwhile),
// the fresh models are caught up to exactly the live ones' sequence and
// swapped in, or compared with them. Until then the fresh models take as
// much memory as the live ones.

// aside builds fresh models like p's from the stream and calls at with
// the live models and the fresh ones at the same sequence seq, while p
// is held. started is told of the projector that builds the fresh
// models, to follow its progress.
func (p *Projector) aside(ctx context.Context, started func(fresh *Projector), at func(live, fresh []snapshotter, seq uint64)) error {
	live, err := p.snapshotters()
	if err != nil {
		return err
	}
	fresh := make([]snapshotter, len(live))
	models := make([]ReadModel, len(live))
	for i, m := range live {
		fresh[i] = m.empty()
		models[i] = fresh[i]
	}
	f := NewProjector(p.stream, p.log, models...)
	to := p.Applied()
	f.mu.Lock()
	f.target, f.targetKnown = to, true
	f.mu.Unlock()
	started(f)
	if err := f.replay(ctx, to); err != nil {
		return fmt.Errorf("replaying the stream into fresh read models: %w", err)
	}
	// The events applied meanwhile, a few seconds' worth, are replayed
	// with the live models waiting.
	p.hold.Lock()
	defer p.hold.Unlock()
	seq := p.Applied()
	f.mu.Lock()
	f.target = seq
	f.mu.Unlock()
	if err := f.replay(ctx, seq); err != nil {
		return fmt.Errorf("catching fresh read models up to sequence %d: %w", seq, err)
	}
	at(live, fresh, seq)
	return nil
}

// progress is how many events a projector building models aside has
// applied, of how many it is to.
func (p *Projector) progress() (done, total uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.applied, p.target
}
