package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

// quoteViews keeps the JSON of quotes as their readers see them, each
// with the version of the quote it shows: a quote is read far more often
// than it changes, and encoding it is most of what a read does itself.
type quoteViews struct {
	mu    sync.Mutex
	views map[quoteViewKey]quoteView
	max   int // entries kept, at most
}

// quoteViewKey names what a reader sees of a quote: the price options of
// one carrier, or all of them (domain.PriceOptionsSeenBy).
type quoteViewKey struct {
	id      string
	all     bool
	carrier string
}

type quoteView struct {
	version uint64
	closed  uint64 // the options whose flights it shows closed (closedOptions)
	json    []byte // as writeJSON writes it, without the final newline
}

// maxQuoteViews bounds the views kept: some megabytes.
const maxQuoteViews = 10000

// of returns the JSON of quote q at version as p sees it, its options'
// flights closed as closed says (views.ToQuoteJSON), and which of the
// options p sees they are (closedOptions), what its ETag names
// (quoteETag): counted over all of them, an airline's ETag would move when
// another carrier's flight closed, its view unchanged, and tell it where
// the other carriers' options stand among its own. The bytes are shared:
// never change them.
func (v *quoteViews) of(q domain.Quote, version uint64, p domain.Principal, closed func(flightID string) bool) (body []byte, shut uint64) {
	k := quoteViewKey{id: q.ID}
	k.carrier, k.all = domain.PriceOptionsSeenBy(p)
	shut = closedOptions(q.AsSeenBy(p), closed)
	v.mu.Lock()
	view, ok := v.views[k]
	v.mu.Unlock()
	if ok && view.version == version && view.closed == shut {
		return view.json, shut
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(views.ToQuoteJSON(q, p, closed))
	view = quoteView{version: version, closed: shut, json: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.views == nil || len(v.views) >= v.max {
		v.views = map[quoteViewKey]quoteView{}
	}
	// Readers racing with a change of the quote, or of its flights, may
	// get here out of order: the newer view stays. A flight once closed
	// stays closed, so the view with more closed options is the newer.
	if old, ok := v.views[k]; !ok || old.version < version || old.version == version && old.closed&shut == old.closed {
		v.views[k] = view
	}
	return view.json, shut
}

// closedOptions is a bit for each of q's price options whose flight is
// closed, the first option's the lowest (a quote has at most 10).
func closedOptions(q domain.Quote, closed func(flightID string) bool) uint64 {
	var shut uint64
	for i, o := range q.Options {
		if closed(o.FlightID) {
			shut |= 1 << i
		}
	}
	return shut
}

// forget drops every view: after a rebuild of the read models, a quote
// may hold something else at the same version.
func (v *quoteViews) forget() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.views = nil
}

// writeQuoteListOfOne answers as writeJSON of a views.QuoteListJSON of
// one quote would, with view, the quote's JSON from quoteViews.
func writeQuoteListOfOne(w http.ResponseWriter, view []byte, p views.PaginationJSON) {
	b := make([]byte, 0, len(view)+100)
	b = append(append(b, `{"quotes":[`...), view...)
	b = fmt.Appendf(b, `],"pagination":{"page":%d,"limit":%d,"total":%d,"totalPages":%d}}`, p.Page, p.Limit, p.Total, p.TotalPages)
	writeEncoded(w, http.StatusOK, b)
}
