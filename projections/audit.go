package projections

import (
	"bytes"
	"cmp"
	"fmt"
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

// auditHead is what the entries of one event have in common: all of an
// entry but its id and details. It is kept once an event, not once an
// entry (an update's entries are one a changed field).
type auditHead struct {
	EventID    string `snapshot:"text"`
	Timestamp  time.Time
	Action     string
	Resource   string
	ResourceID string
	UserID     string
	IPAddress  string
	Tenant     string
	Owner      string
}

// auditLine is an entry of the log as kept: its event's head, by number,
// and the change. Its id is made when it is read: the event's, or for
// the n-th changed field of an update (Change n from 0), the event's and
// "-n".
type auditLine struct {
	Head    int
	Change  int // -1: the event's only entry
	Details AuditDetail
}

// entry is the line as the log shows it.
func (l auditLine) entry(h auditHead) AuditEntry {
	id := h.EventID
	if l.Change >= 0 {
		id += "-" + strconv.Itoa(l.Change)
	}
	return AuditEntry{ID: id, Timestamp: h.Timestamp, Action: h.Action, Resource: h.Resource, ResourceID: h.ResourceID,
		UserID: h.UserID, IPAddress: h.IPAddress, Tenant: h.Tenant, Owner: h.Owner, Details: l.Details}
}

// Audit is the read model of the audit log: data changes (one entry per
// changed field of an update), and authorization events. It keeps the
// last value of each field of each aggregate to tell what changed.
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
	mu     sync.RWMutex
	heads  appendLog[auditHead]      // one an event, oldest first
	lines  appendLog[auditLine]      // the entries, oldest first
	last   map[auditKey][]auditField // the fields' last values, by name
	shared map[domain.Aggregate]bool // aggregates whose events named more than one organisation

	// Used by Apply alone, which runs on one goroutine: the strings
	// entries repeat, fields' names among them (see share), and the
	// members of the event at hand.
	shares   map[string]string
	members  []jsonMember
	statuses map[string]jsonMember
}

// auditKey names the last values of an aggregate's fields, or on a shared
// aggregate those an organisation's events left.
type auditKey struct {
	Aggregate domain.Aggregate
	Org       string
}

// auditField is the last value of one field: a string's text, or the
// JSON of anything else.
type auditField struct{ Name, Value string }

// NewAudit returns an empty audit read model.
func NewAudit() *Audit {
	return &Audit{last: map[auditKey][]auditField{}, shared: map[domain.Aggregate]bool{},
		shares: map[string]string{}, statuses: map[string]jsonMember{}}
}

// unaudited fields are the time of the change itself, which is the
// entry's timestamp: they change with every event and say nothing of
// their own.
var unaudited = map[string]bool{"at": true, "setAt": true, "changedAt": true, "repliedAt": true, "pricedAt": true,
	"rejectedAt": true, "confirmedAt": true, "cancelledAt": true, "acceptedAt": true, "revokedAt": true,
	"createdAt": true, "requestedAt": true, "submittedAt": true, "reportedAt": true, "recordedAt": true,
	"reopenedAt": true, "deletedAt": true, "disabledAt": true, "uploadedAt": true, "claimedAt": true, "issuedBefore": true}

// hashed fields hold a credential's hash: an entry says that it changed
// (a rotated secret, a new password), not what to try guesses against.
var hashed = map[string]bool{"secretHash": true, "passwordHash": true, "keyHash": true}

// redacted stands for a hashed field's value in an entry.
const redacted = "[redacted]"

// Apply implements ReadModel. It reads the event's fields from its JSON
// as they are, without decoding them again, and compares them with the
// last values in one walk, copying only those that changed: it runs for
// every event, and most fields of an update are unchanged.
func (m *Audit) Apply(r domain.Record, e domain.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// What entries repeat from event to event is held once.
	base := auditHead{EventID: r.EventID, Timestamp: r.OccurredAt, Resource: m.share(r.Aggregate.Type),
		ResourceID: r.Aggregate.ID, UserID: m.share(r.Actor), IPAddress: m.share(r.ClientIP), Tenant: m.share(r.Tenant)}
	if a, ok := e.(domain.AuthorizationRecorded); ok {
		base.Action, base.Resource, base.ResourceID = m.share(a.Action), domain.AuditResourceAuthorization, m.share(a.Subject)
		if a.OrganizationID != "" {
			base.Tenant = m.share(a.OrganizationID)
		}
		detail := a.Detail
		if a.Repeats > 0 {
			detail += fmt.Sprintf(" (and %d more like it before)", a.Repeats)
		}
		m.lines.add(auditLine{Head: m.addHead(base), Change: -1,
			Details: AuditDetail{Field: "detail", NewValue: m.share(strings.TrimSpace(detail))}})
		return
	}
	if _, isRef := e.(domain.ReferenceChanged); isRef {
		// Imports are rows by the thousand: one entry, no field diff.
		base.Action = domain.ActionUpdate
		m.lines.add(auditLine{Head: m.addHead(base), Change: -1})
		return
	}
	// Sorted by name; a name given twice keeps its last value, as the
	// decoder would. The time of the change is no field of the log's (see
	// unaudited): its last value is not kept either, as nothing reads it.
	m.members = slices.DeleteFunc(jsonMembers(r.Data, m.members[:0]), func(mem jsonMember) bool { return unaudited[string(mem.name)] })
	if s, ok := e.(domain.StatusSetter); ok {
		m.members = append(m.members, m.statusMember(s.SetsStatus()))
	}
	slices.SortStableFunc(m.members, func(a, b jsonMember) int { return bytes.Compare(a.name, b.name) })
	key := auditKey{Aggregate: r.Aggregate}
	first, existed := m.last[key]
	base.Action = domain.ActionUpdate
	if !existed {
		base.Action = domain.ActionCreate
	}
	// What others do to an organisation's resource (an airline replying to
	// its stock request, a reactor confirming its booking, an admin
	// deleting its webhook) is in its log too.
	named := ""
	for _, mem := range m.members {
		if string(mem.name) == "organizationId" {
			named, _ = mem.str()
			named = m.share(named)
		}
	}
	base.Owner = fieldValue(first, "organizationId")
	at := key
	switch {
	case named == "" && m.shared[r.Aggregate]:
		base.Owner, at.Org = "", base.Tenant
	case named == "" || named == base.Owner || base.Owner == "":
		base.Owner = cmp.Or(named, base.Owner)
	default:
		m.shared[r.Aggregate] = true
		base.Owner, at.Org = named, named
	}
	if !existed {
		// A create: every field is new, and none makes an entry.
		fields := make([]auditField, 0, len(m.members))
		for _, mem := range m.members {
			if n := len(fields); n > 0 && fields[n-1].Name == string(mem.name) {
				fields[n-1].Value = m.value(mem)
			} else {
				fields = append(fields, auditField{m.name(mem.name), m.value(mem)})
			}
		}
		m.last[at] = fields
		m.lines.add(auditLine{Head: m.addHead(base), Change: -1})
		return
	}
	// Both lists are sorted by name: one walk through them finds the old
	// value of each field sent. Values changed in place need no store
	// into the map: only a list that grows, or a new one, does.
	old, stored := first, true
	if at != key {
		old, stored = m.last[at]
	}
	var added []auditField
	head, changed, i := m.addHead(base), 0, 0
	for _, mem := range m.members {
		for i < len(old) && old[i].Name < string(mem.name) {
			i++
		}
		had := i < len(old) && old[i].Name == string(mem.name)
		if had && mem.is(old[i].Value) {
			continue
		}
		value, before, name := m.value(mem), "", ""
		switch n := len(added); {
		case had:
			name, before, old[i].Value = old[i].Name, old[i].Value, value
		case n > 0 && added[n-1].Name == string(mem.name):
			name, before, added[n-1].Value = added[n-1].Name, added[n-1].Value, value
		default:
			name = m.name(mem.name)
			added = append(added, auditField{name, value})
		}
		if hashed[name] {
			before, value = redacted, redacted
		}
		m.lines.add(auditLine{Head: head, Change: changed, Details: AuditDetail{Field: name, OldValue: before, NewValue: value}})
		changed++
	}
	if len(added) > 0 || !stored {
		m.last[at] = mergeFields(old, added)
	}
	if changed == 0 {
		m.lines.add(auditLine{Head: head, Change: -1})
	}
}

// statusMember is the member "status" that an event setting a status
// without a field of its own stands for (see domain.StatusSetter), as if
// the event had it: the log then shows a booking's pending → confirmed as
// it shows any changed field. Statuses are few, each made once.
func (m *Audit) statusMember(status string) jsonMember {
	mem, ok := m.statuses[status]
	if !ok {
		mem = jsonMember{name: []byte("status"), value: []byte(strconv.Quote(status)), plain: true}
		m.statuses[status] = mem
	}
	return mem
}

// addHead keeps the head of an event's entries, and returns its number.
func (m *Audit) addHead(h auditHead) int {
	m.heads.add(h)
	return m.heads.n - 1
}

// mergeFields returns the fields of old and added, two lists sorted by
// name that share none, in one list sorted by name.
func mergeFields(old, added []auditField) []auditField {
	if len(added) == 0 {
		return old
	}
	merged := make([]auditField, 0, len(old)+len(added))
	for len(old) > 0 && len(added) > 0 {
		if old[0].Name < added[0].Name {
			merged, old = append(merged, old[0]), old[1:]
		} else {
			merged, added = append(merged, added[0]), added[1:]
		}
	}
	return append(append(merged, old...), added...)
}

// name is a field's name, shared (see share): looked up as it is, it
// is copied only the first time.
func (m *Audit) name(b []byte) string {
	if name, ok := m.shares[string(b)]; ok {
		return name
	}
	return m.share(string(b))
}

// maxShares bounds shares: past it, the strings shared so far are let go
// (the entries that hold them still share them) and sharing starts anew,
// so that strings that never repeat do not pile up in it for ever.
const maxShares = 1 << 16

// share returns s, or a string equal to it that share returned before:
// what entries repeat (actors, organisations, addresses, actions, short
// values) is held once, not once per entry or aggregate.
func (m *Audit) share(s string) string {
	if kept, ok := m.shares[s]; ok {
		return kept
	}
	if len(m.shares) >= maxShares {
		clear(m.shares)
	}
	s = strings.Clone(s) // not a slice of something bigger
	m.shares[s] = s
	return s
}

// maxSharedValue is the longest value of a field the log shares: codes,
// statuses, dates and organisations repeat from aggregate to aggregate;
// longer values (ids, text, the JSON of objects) rarely do.
const maxSharedValue = 16

// value is a member's text (see jsonMember.text), shared if it is short
// (see maxSharedValue).
func (m *Audit) value(mem jsonMember) string {
	text := mem.text()
	if len(text) > maxSharedValue {
		return text
	}
	return m.share(text)
}

// fieldValue is the last value of the field name, or "".
func fieldValue(fields []auditField, name string) string {
	i, ok := slices.BinarySearchFunc(fields, name, func(f auditField, name string) int { return strings.Compare(f.Name, name) })
	if !ok {
		return ""
	}
	return fields[i].Value
}

// AuditFilter narrows the audit log; empty fields match everything.
type AuditFilter struct {
	Action, Resource, UserID string
	From, To                 time.Time
	Tenant                   string // "" for every organisation (admins)
}

// Entries returns one page of the entries matching f, newest first, and
// how many match in all.
func (m *Audit) Entries(f AuditFilter, page, limit int) ([]AuditEntry, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	lines, total := pageOfN(m.lines.n, true, m.lines.at, func(l auditLine) bool {
		e := m.heads.ref(l.Head)
		return (f.Tenant == "" || e.Tenant == f.Tenant || e.Owner == f.Tenant) && (f.Action == "" || e.Action == f.Action) &&
			(f.Resource == "" || e.Resource == f.Resource) && (f.UserID == "" || e.UserID == f.UserID) &&
			(f.From.IsZero() || !e.Timestamp.Before(f.From)) && (f.To.IsZero() || e.Timestamp.Before(f.To))
	}, page, limit)
	entries := make([]AuditEntry, len(lines))
	for i, l := range lines {
		entries[i] = l.entry(*m.heads.ref(l.Head))
	}
	return entries, total
}
