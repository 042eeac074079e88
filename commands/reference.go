package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

// referenceChunk is how many rows one reference event holds at most: an
// event stays far below NATS's message limit, and a 28,000-row import is
// some sixty appends, not 28,000.
const referenceChunk = 500

// ImportResult counts what an import changed.
type ImportResult struct {
	Rows     int    // rows offered
	Changed  int    // rows new or different, now stored
	Sequence uint64 // the stream sequence to wait for to read them
}

// ImportReference stores rows of one kind of reference data. Only rows
// that are new or differ from what is stored become events, so importing
// the same file again appends nothing.
func (h *Handler) ImportReference(ctx context.Context, m Meta, batch domain.ReferenceChanged) (ImportResult, error) {
	batch.ChangedAt = h.now().UTC()
	// A key repeated in a batch counts once, its last row: deciding the
	// whole batch against nothing keeps exactly that. Otherwise a key in
	// two chunks would flip between its rows on every import. (Parsing
	// rejects a key a request repeats, keeping its first row: a batch
	// that reaches here has each key once.)
	if events, _ := domain.DecideReferenceChange(domain.Reference{}, batch); len(events) == 1 {
		batch = events[0].(domain.ReferenceChanged)
	}
	agg := domain.Aggregate{Type: domain.AggregateReference, ID: batch.Kind}
	out := ImportResult{Rows: len(batch.Airports) + len(batch.Airlines) + len(batch.Commodities)}
	for i, chunk := range referenceChunks(batch) {
		sub := m
		sub.CommandID = m.CommandID + ":" + itoa(i)
		changed := 0
		res, err := execute(ctx, h, agg, sub, domain.EvolveReference, func(r domain.Reference) ([]domain.Event, error) {
			events, err := domain.DecideReferenceChange(r, chunk)
			changed = 0
			for _, e := range events {
				c := e.(domain.ReferenceChanged)
				changed += len(c.Airports) + len(c.Airlines) + len(c.Commodities)
			}
			return events, err
		})
		if err != nil {
			return out, err
		}
		out.Changed += changed
		out.Sequence = max(out.Sequence, res.Sequence)
	}
	return out, nil
}

// referenceChunks splits a batch into batches of referenceChunk rows.
func referenceChunks(b domain.ReferenceChanged) []domain.ReferenceChanged {
	var out []domain.ReferenceChanged
	part := func() domain.ReferenceChanged {
		return domain.ReferenceChanged{Kind: b.Kind, Source: b.Source, ChangedAt: b.ChangedAt}
	}
	for rows := b.Airports; len(rows) > 0; rows = rows[min(referenceChunk, len(rows)):] {
		c := part()
		c.Airports = rows[:min(referenceChunk, len(rows))]
		out = append(out, c)
	}
	for rows := b.Airlines; len(rows) > 0; rows = rows[min(referenceChunk, len(rows)):] {
		c := part()
		c.Airlines = rows[:min(referenceChunk, len(rows))]
		out = append(out, c)
	}
	for rows := b.Commodities; len(rows) > 0; rows = rows[min(referenceChunk, len(rows)):] {
		c := part()
		c.Commodities = rows[:min(referenceChunk, len(rows))]
		// What its rows state, and nothing of the others'.
		for _, row := range c.Commodities {
			if stated, ok := b.Stated[row.Key()]; ok {
				if c.Stated == nil {
					c.Stated = map[string][]string{}
				}
				c.Stated[row.Key()] = stated
			}
		}
		out = append(out, c)
	}
	return out
}
