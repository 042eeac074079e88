package projections

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	ID         string
	Timestamp  time.Time
	Action     string // one of domain.AuditActions
	Resource   string // one of domain.AuditResources: the aggregate type, quote, booking, flight, …
	ResourceID string
	UserID     string // the actor: client:<id>, user:<name>, reactor:<name>, system:…
	IPAddress  string
	Tenant     string // the actor's organisation
	Owner      string // the organisation the resource is of, as its events name it
	Details    AuditDetail
}

// AuditDetail is one changed field of an update, the detail of an
// authorization entry, or nothing (a create, an import).
type AuditDetail struct {
	Field, OldValue, NewValue string
}

// The audit log keeps an index of its entries in memory, and reads what
// each says from its event when a page of the log is read: an entry's id,
// resource id, address and details are its event's, and an update's old
// value is that of the event that left it. Kept whole in memory, with the
// last value of every field of every aggregate to tell what changed, the
// entries were 0.8 kB an event, about 70 % of a replica's heap.

// auditHead is what the index keeps of one event: where it is in the
// stream, and what the log's filters ask of it.
type auditHead struct {
	Sequence uint64
	Time     int64 // the event's time, Unix nanoseconds
	Action   symbol
	Resource symbol
	User     symbol // the actor
	Tenant   symbol // the actor's organisation
	Owner    symbol // the organisation the resource is of, as its events name it
}

// auditLine is an entry of the log as kept: its event's head, by number,
// and the field it changed. Its id is made when it is read: the event's,
// or for the n-th changed field of an update (Change n from 0), the
// event's and "-n".
type auditLine struct {
	Head     uint32
	Change   int32  // -1: the event's only entry
	Field    symbol // the field changed; 0 for an only entry
	Previous uint64 // the sequence of the event that left the field's old value; 0: it had none
}

// Audit is the read model of the audit log: data changes (one entry per
// changed field of an update), and authorization events. It keeps, of
// each field of each aggregate, a digest of its last value and the event
// that left it, to tell what changed and to read the old value.
//
// Some aggregates are shared by organisations: one per AWB prefix guards
// the ranges of every forwarder, and an AWB's compliance filings come from
// its forwarder and its airline. An event is compared only with the
// earlier events of its own organisation on the aggregate (the one the
// event names, else the aggregate's owner), so that no entry shows a value
// that came from another. On a shared aggregate, an event that names no
// organisation (a range release stored before releases named theirs) is
// compared with those its actor's organisation made, and is in that
// organisation's log only.
type Audit struct {
	mu      sync.RWMutex
	heads   appendLog[auditHead]     // one an event, oldest first
	lines   appendLog[auditLine]     // the entries, oldest first
	last    map[auditKey]auditFields // what the events of an aggregate left
	shared  map[auditKey]bool        // aggregates whose events named more than one organisation
	symbols symbols
	// The entries in each organisation's log (of its actor's or its
	// owner's, as the tenant filter takes them), by number, oldest
	// first: an organisation's page walks its own entries, not all.
	// Made again on restore, from the entries.
	byOrg map[symbol][]uint32

	// Used by Apply alone, which runs on one goroutine: the members of
	// the event at hand, and the status members (see statusMember).
	members  []jsonMember
	statuses map[string]jsonMember
}

// auditKey names what the events of an aggregate left, or on a shared
// aggregate those of one organisation. Its strings are symbols: a key
// restored from a snapshot holding strings would hold the snapshot's
// whole section of keys and fields, of which they are slices (see
// snapcodec.go).
type auditKey struct {
	Type, ID symbol // the aggregate's
	Org      symbol
}

// auditFields is what the events of an aggregate left: the organisation
// they name as its owner (the last organizationId), and its fields.
type auditFields struct {
	Owner  symbol
	Fields []auditField // sorted by name
}

// auditField is the last value of one field: a digest of its text (see
// jsonMember.digest), and the event whose value it is.
type auditField struct {
	Name     symbol
	Digest   textDigest
	Sequence uint64
}

// NewAudit returns an empty audit read model.
func NewAudit() *Audit {
	return &Audit{last: map[auditKey]auditFields{}, shared: map[auditKey]bool{}, symbols: newSymbols(), byOrg: map[symbol][]uint32{},
		statuses: map[string]jsonMember{}}
}

// unaudited fields are the time of the change itself, which is the
// entry's timestamp: they change with every event and say nothing of
// their own; and what an event says of how it was decided and stored,
// not of its resource: the statuses stored with it, the yes-or-no fields
// an import stated, a flight's status, aircraft and capacity before (the
// entries of the change show them as the old values).
var unaudited = map[string]bool{"at": true, "setAt": true, "changedAt": true, "repliedAt": true, "pricedAt": true,
	"rejectedAt": true, "confirmedAt": true, "cancelledAt": true, "acceptedAt": true, "revokedAt": true,
	"createdAt": true, "requestedAt": true, "submittedAt": true, "reportedAt": true, "recordedAt": true,
	"reopenedAt": true, "deletedAt": true, "disabledAt": true, "uploadedAt": true, "claimedAt": true, "issuedBefore": true,
	"statusesStored": true, "capacityReleased": true, "stated": true, "previous": true,
	"previousAircraftType": true, "previousCapacityKg": true, "previousCapacityM3": true}

// hashed fields hold a credential's hash: an entry says that it changed
// (a rotated secret, a new password), not what to try guesses against.
var hashed = map[string]bool{"secretHash": true, "passwordHash": true, "keyHash": true}

// redacted stands for a hashed field's value in an entry.
const redacted = "[redacted]"

// auditMembers appends to out the members of an event the log compares:
// its fields as they are in its JSON, but the time of the change (see
// unaudited), the status it sets (see domain.StatusSetter) as a member
// "status", made by status, and a flight's capacity reserved or released
// as a member "capacity"; sorted by name, a name given twice
// once, with its last value, as the decoder would keep it.
func auditMembers(r domain.Record, e domain.Event, out []jsonMember, status func(string) jsonMember) []jsonMember {
	out = slices.DeleteFunc(jsonMembers(r.Data, out), func(mem jsonMember) bool { return unaudited[string(mem.name)] })
	if s, ok := e.(domain.StatusSetter); ok {
		out = append(out, status(s.SetsStatus()))
	}
	// A release names what its reservation named (the booking, its
	// weight and volume): without a member of its own, its entry would
	// show no field changed.
	switch e.(type) {
	case domain.CapacityReserved:
		out = append(out, capacityReserved)
	case domain.CapacityReleased:
		out = append(out, capacityReleased)
	}
	if rs, ok := e.(domain.Restater); ok {
		for _, name := range rs.Restates() {
			if !slices.ContainsFunc(out, func(mem jsonMember) bool { return string(mem.name) == name }) {
				left := textMember(name, "")
				left.leftOut = true
				out = append(out, left)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b jsonMember) int { return bytes.Compare(a.name, b.name) })
	kept := out[:0]
	for i, mem := range out {
		if i+1 < len(out) && bytes.Equal(mem.name, out[i+1].name) {
			continue
		}
		kept = append(kept, mem)
	}
	return kept
}

// member is the member name of members, which auditMembers sorted.
func member(members []jsonMember, name string) (jsonMember, bool) {
	i, ok := slices.BinarySearchFunc(members, name, func(mem jsonMember, name string) int { return strings.Compare(string(mem.name), name) })
	if !ok {
		return jsonMember{}, false
	}
	return members[i], true
}

// Apply implements ReadModel. It reads the event's fields from its JSON
// as they are, without decoding them again, and compares them with the
// last values in one walk: it runs for every event, and most fields of an
// update are unchanged.
func (m *Audit) Apply(r domain.Record, e domain.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	head := auditHead{Sequence: r.Sequence, Time: r.OccurredAt.UnixNano(), Resource: m.symbols.number(r.Aggregate.Type),
		User: m.symbols.number(r.Actor), Tenant: m.symbols.number(r.Tenant)}
	if a, ok := e.(domain.AuthorizationRecorded); ok {
		// Its detail is read from the event (see render).
		head.Action, head.Resource = m.symbols.number(a.Action), m.symbols.number(domain.AuditResourceAuthorization)
		if a.OrganizationID != "" {
			head.Tenant = m.symbols.number(a.OrganizationID)
		}
		m.addLine(auditLine{Head: m.addHead(head), Change: -1})
		return
	}
	if _, isRef := e.(domain.ReferenceChanged); isRef {
		// Imports are rows by the thousand: one entry, no field diff.
		head.Action = m.symbols.number(domain.ActionUpdate)
		m.addLine(auditLine{Head: m.addHead(head), Change: -1})
		return
	}
	m.members = auditMembers(r, e, m.members[:0], m.statusMember)
	key := auditKey{Type: head.Resource, ID: m.symbols.number(r.Aggregate.ID)}
	first, existed := m.last[key]
	head.Action = m.symbols.number(domain.ActionUpdate)
	if !existed {
		head.Action = m.symbols.number(domain.ActionCreate)
	}
	// What others do to an organisation's resource (an airline replying to
	// its stock request, a reactor confirming its booking, an admin
	// deleting its webhook) is in its log too.
	var named, owner symbol
	org, hasOwner := member(m.members, "organizationId")
	if hasOwner {
		owner = m.symbols.textOf(org)
		if _, isText := org.str(); isText {
			named = owner
		}
	}
	if !existed && !hasOwner {
		// An aggregate whose events name no organisation (a flight, a
		// shipment) is the one's that made it: what reactors do to it
		// later (a flight's capacity reserved, a shipment's MAN) is in
		// that organisation's log, where it was in the admins' alone.
		owner, named = head.Tenant, head.Tenant
	}
	head.Owner = first.Owner
	at := key
	switch {
	case named == 0 && m.shared[key]:
		head.Owner, at.Org = 0, head.Tenant
	case named == 0 || named == head.Owner || head.Owner == 0:
		head.Owner = cmp.Or(named, head.Owner)
	default:
		m.shared[key] = true
		head.Owner, at.Org = named, named
	}
	if _, adds := e.(domain.Addition); adds && existed {
		// A record of its own beside the aggregate's others: nothing
		// of theirs changed, and what they left stays to compare with.
		head.Action = m.symbols.number(domain.ActionCreate)
		m.addLine(auditLine{Head: m.addHead(head), Change: -1})
		return
	}
	if !existed {
		// A create: every field is new, and none makes an entry. One it
		// leaves out is none of them.
		fields := make([]auditField, 0, len(m.members))
		for _, mem := range m.members {
			if !mem.leftOut {
				fields = append(fields, auditField{Name: m.symbols.numberOf(mem.name), Digest: mem.digest(), Sequence: r.Sequence})
			}
		}
		m.last[at] = auditFields{Owner: owner, Fields: fields}
		m.addLine(auditLine{Head: m.addHead(head), Change: -1})
		return
	}
	// Both lists are sorted by name: one walk through them finds the old
	// value of each field sent. Values changed in place need no store
	// into the map: only a list that grows, a new one, or a new owner
	// does.
	old, stored := first, true
	if at != key {
		old, stored = m.last[at]
	}
	// An event of one of several records is compared with the
	// aggregate's own fields, which it repeats (the flight's id, the
	// ledger's organisation), not with the last record's, and leaves them
	// as they are.
	_, ofRecord := e.(domain.OfRecord)
	var added []auditField
	h, changed, i := m.addHead(head), int32(0), 0
	for _, mem := range m.members {
		for i < len(old.Fields) && m.symbols.name(old.Fields[i].Name) < string(mem.name) {
			i++
		}
		had := i < len(old.Fields) && m.symbols.name(old.Fields[i].Name) == string(mem.name)
		digest := mem.digest()
		if had && old.Fields[i].Digest == digest || !had && mem.leftOut {
			continue // unchanged, or still without a value
		}
		line := auditLine{Head: h, Change: changed}
		switch {
		case had && ofRecord:
			// A field of the record the aggregate's first event
			// made (a ledger's or a prefix's first range): another
			// record's, not a value before this one's.
			line.Field = old.Fields[i].Name
		case had:
			line.Field, line.Previous = old.Fields[i].Name, old.Fields[i].Sequence
			old.Fields[i].Digest, old.Fields[i].Sequence = digest, r.Sequence
		default:
			line.Field = m.symbols.numberOf(mem.name)
			if !ofRecord {
				added = append(added, auditField{Name: line.Field, Digest: digest, Sequence: r.Sequence})
			}
		}
		m.addLine(line)
		changed++
	}
	newOwner := at == key && hasOwner && owner != old.Owner
	if newOwner {
		old.Owner = owner
	}
	if (len(added) > 0 || !stored || newOwner) && !ofRecord {
		old.Fields = m.mergeFields(old.Fields, added)
		m.last[at] = old
	}
	if changed == 0 && ofRecord {
		// The record the aggregate's first event made, again (a
		// prefix's first range released): its fields, each new.
		for _, mem := range m.members {
			if !mem.leftOut {
				m.addLine(auditLine{Head: h, Change: changed, Field: m.symbols.numberOf(mem.name)})
				changed++
			}
		}
	}
	if changed == 0 {
		m.addLine(auditLine{Head: h, Change: -1})
	}
}

// statusMember is the member "status" that an event setting a status
// without a field of its own (see domain.StatusSetter) stands for. Apply
// makes each once.
func (m *Audit) statusMember(status string) jsonMember {
	mem, ok := m.statuses[status]
	if !ok {
		mem = newStatusMember(status)
		m.statuses[status] = mem
	}
	return mem
}

func newStatusMember(status string) jsonMember {
	return textMember("status", status)
}

// capacityReserved and capacityReleased are the member "capacity" that a
// flight's capacity events stand for in the log.
var capacityReserved, capacityReleased = textMember("capacity", "reserved"), textMember("capacity", "released")

// textMember is a member of the log's own, name with the text value.
func textMember(name, value string) jsonMember {
	return jsonMember{name: []byte(name), value: []byte(strconv.Quote(value)), plain: true}
}

// addLine keeps an entry, in the log and in the logs of the organisations
// it is of.
func (m *Audit) addLine(l auditLine) {
	m.lines.add(l)
	m.indexLine(uint32(m.lines.n - 1))
}

// indexLine adds entry n to the logs of the organisations it is of.
func (m *Audit) indexLine(n uint32) {
	h := m.heads.ref(int(m.lines.ref(int(n)).Head))
	if h.Tenant != 0 {
		m.byOrg[h.Tenant] = append(m.byOrg[h.Tenant], n)
	}
	if h.Owner != 0 && h.Owner != h.Tenant {
		m.byOrg[h.Owner] = append(m.byOrg[h.Owner], n)
	}
}

// addHead keeps the head of an event's entries, and returns its number.
func (m *Audit) addHead(h auditHead) uint32 {
	m.heads.add(h)
	return uint32(m.heads.n - 1)
}

// mergeFields returns the fields of old and added, two lists sorted by
// name that share none, in one list sorted by name.
func (m *Audit) mergeFields(old, added []auditField) []auditField {
	if len(added) == 0 {
		return old
	}
	merged := make([]auditField, 0, len(old)+len(added))
	for len(old) > 0 && len(added) > 0 {
		if m.symbols.name(old[0].Name) < m.symbols.name(added[0].Name) {
			merged, old = append(merged, old[0]), old[1:]
		} else {
			merged, added = append(merged, added[0]), added[1:]
		}
	}
	return append(append(merged, old...), added...)
}

// AuditFilter narrows the audit log; empty fields match everything.
type AuditFilter struct {
	Action, Resource, UserID string
	From, To                 time.Time
	Tenant                   string // "" for every organisation (admins)
}

// EventsAt is what the audit log reads its entries from (eventstore.Store
// implements it): the events at the given stream sequences, in their
// order, a zero record (Sequence 0) where there is none.
type EventsAt interface {
	RecordsAt(ctx context.Context, seqs []uint64) ([]domain.Record, error)
}

// Entries returns one page of the entries matching f, newest first, and
// how many match in all. What the entries say is read from their events
// in events, which the index names.
func (m *Audit) Entries(ctx context.Context, events EventsAt, f AuditFilter, page, limit int) ([]AuditEntry, int, error) {
	// The walk through the entries, which may be millions, is made
	// without the lock, which would hold up Apply meanwhile: entries are
	// only ever added, and the copies of the lists of chunks hold those
	// there are now.
	m.mu.RLock()
	match, ok := m.matcher(f)
	if !ok {
		m.mu.RUnlock()
		return nil, 0, nil
	}
	heads, lines := m.heads.frozen(), m.lines.frozen()
	var ofOrg []uint32
	if f.Tenant != "" {
		org, _ := m.symbols.find(f.Tenant) // there: matcher found it
		ofOrg = m.byOrg[org]
	}
	m.mu.RUnlock()
	keep := func(l auditLine) bool { return match(heads.ref(int(l.Head))) }
	if f == (AuditFilter{}) {
		keep = nil // every entry: the page alone is read
	}
	var found []auditLine
	var total int
	if f.Tenant != "" {
		found, total = pageOf(ofOrg, true, func(n uint32) auditLine { return lines.at(int(n)) }, keep, page, limit)
	} else {
		found, total = pageOfN(lines.n, true, lines.at, keep, page, limit)
	}

	entries := make([]AuditEntry, len(found))
	pageHeads := make([]auditHead, len(found))
	var seqs []uint64
	m.mu.RLock()
	for i, l := range found {
		h := *heads.ref(int(l.Head))
		pageHeads[i] = h
		entries[i] = AuditEntry{Action: m.symbols.name(h.Action), Resource: m.symbols.name(h.Resource), UserID: m.symbols.name(h.User),
			Tenant: m.symbols.name(h.Tenant), Owner: m.symbols.name(h.Owner), Details: AuditDetail{Field: m.symbols.name(l.Field)}}
		seqs = append(seqs, h.Sequence)
		if l.Previous != 0 && !hashed[entries[i].Details.Field] {
			seqs = append(seqs, l.Previous)
		}
	}
	m.mu.RUnlock()
	if len(seqs) == 0 {
		return entries, total, nil
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	records, err := events.RecordsAt(ctx, seqs)
	if err != nil {
		return nil, 0, err
	}
	read := entryEvents{}
	for _, r := range records {
		if r.Sequence == 0 {
			continue // see render
		}
		if read[r.Sequence], err = readEntryEvent(r); err != nil {
			return nil, 0, err
		}
	}
	for i, l := range found {
		read.render(&entries[i], pageHeads[i], l)
	}
	return entries, total, nil
}

// matcher is the test of f on an event's head, under m.mu; false when f
// names what no entry has.
func (m *Audit) matcher(f AuditFilter) (func(*auditHead) bool, bool) {
	var want [4]symbol // action, resource, user, tenant; 0: any
	for i, name := range []string{f.Action, f.Resource, f.UserID, f.Tenant} {
		if name == "" {
			continue
		}
		n, ok := m.symbols.find(name)
		if !ok {
			return nil, false
		}
		want[i] = n
	}
	from, to := unixNanos(f.From, math.MinInt64), unixNanos(f.To, math.MaxInt64)
	return func(h *auditHead) bool {
		return (want[0] == 0 || h.Action == want[0]) && (want[1] == 0 || h.Resource == want[1]) && (want[2] == 0 || h.User == want[2]) &&
			(want[3] == 0 || h.Tenant == want[3] || h.Owner == want[3]) && h.Time >= from && h.Time < to
	}, true
}

// unixNanos is t in Unix nanoseconds, or unset when t is the zero time;
// a time before or after those an int64 holds (from 1678 to 2262) is the
// least or the greatest.
func unixNanos(t time.Time, unset int64) int64 {
	switch {
	case t.IsZero():
		return unset
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// entryEvent is an event a page of the log reads, with its members as
// the log compares them (see auditMembers).
type entryEvent struct {
	record  domain.Record
	event   domain.Event
	members []jsonMember
}

func readEntryEvent(r domain.Record) (entryEvent, error) {
	e, err := domain.DecodeEvent(r.Type, r.Data)
	if err != nil {
		return entryEvent{}, fmt.Errorf("projections: the audit log's event at sequence %d: %w", r.Sequence, err)
	}
	return entryEvent{record: r, event: e, members: auditMembers(r, e, nil, newStatusMember)}, nil
}

// text is the text of the field name in the event, "" if it has none.
func (e entryEvent) text(name string) string {
	mem, ok := member(e.members, name)
	if !ok {
		return ""
	}
	return mem.text()
}

// entryEvents are the events a page of the log reads, by sequence.
type entryEvents map[uint64]entryEvent

// render completes the entry of line l, of the event of head h, with what
// its event says.
//
// An event the stream no longer holds (deleted from a stream made by hand
// that allows it) still has its entry, as the index has it: its time,
// action, resource, actor and field. What only the event held (its id,
// the resource's id, the address, the values) is empty: an audit log
// that hid the entry, or failed every page that shows it, would hide
// that something happened then. An old value whose event is gone is
// empty too.
func (read entryEvents) render(entry *AuditEntry, h auditHead, l auditLine) {
	e, ok := read[h.Sequence]
	if !ok {
		entry.Timestamp = time.Unix(0, h.Time).UTC()
		return
	}
	entry.ID, entry.Timestamp, entry.ResourceID, entry.IPAddress = e.record.EventID, e.record.OccurredAt, e.record.Aggregate.ID, e.record.ClientIP
	if l.Change >= 0 {
		entry.ID += "-" + strconv.Itoa(int(l.Change))
	}
	if e.record.Aggregate.Type == domain.AggregateUser {
		// A user's aggregate id is a digest of its username, which no
		// endpoint shows: the entry names the user as the API's paths
		// do, by the username its event (a revocation: its subject)
		// names.
		entry.ResourceID = cmp.Or(e.text("username"), strings.TrimPrefix(e.text("subject"), "user:"), entry.ResourceID)
	}
	if a, ok := e.event.(domain.AuthorizationRecorded); ok {
		entry.ResourceID = a.Subject
		detail := a.Detail
		if a.Repeats > 0 {
			detail += fmt.Sprintf(" (and %d more like it before)", a.Repeats)
		}
		entry.Details = AuditDetail{Field: "detail", NewValue: strings.TrimSpace(detail)}
		return
	}
	switch field := entry.Details.Field; {
	case field == "":
	case hashed[field]:
		entry.Details.OldValue, entry.Details.NewValue = redacted, redacted
	default:
		entry.Details.NewValue = e.text(field)
		if l.Previous != 0 {
			entry.Details.OldValue = read[l.Previous].text(field)
		}
	}
}
