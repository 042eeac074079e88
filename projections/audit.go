package projections

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cargostream/cargostream/domain"
)

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	ID         string
	Timestamp  time.Time
	Action     string // create, update, or an authorization action
	Resource   string // the aggregate type: quote, booking, flight, …
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
	mu      sync.RWMutex
	entries []AuditEntry                 // oldest first
	fields  map[string]map[string]string // aggregate, or aggregate and organisation if shared → field → last value
	shared  map[string]bool              // aggregates whose events named more than one organisation
}

// NewAudit returns an empty audit read model.
func NewAudit() *Audit {
	return &Audit{fields: map[string]map[string]string{}, shared: map[string]bool{}}
}

// unaudited fields change with every event and say nothing of their own.
var unaudited = map[string]bool{"at": true, "setAt": true, "changedAt": true, "repliedAt": true, "pricedAt": true,
	"rejectedAt": true, "confirmedAt": true, "cancelledAt": true, "acceptedAt": true, "revokedAt": true}

// Apply implements ReadModel.
func (m *Audit) Apply(r domain.Record, e domain.Event) {
	base := AuditEntry{ID: r.EventID, Timestamp: r.OccurredAt, Resource: r.Aggregate.Type, ResourceID: r.Aggregate.ID,
		UserID: r.Actor, IPAddress: r.ClientIP, Tenant: r.Tenant}
	m.mu.Lock()
	defer m.mu.Unlock()
	if a, ok := e.(domain.AuthorizationRecorded); ok {
		base.Action, base.Resource, base.ResourceID = a.Action, "authorization", a.Subject
		if a.OrganizationID != "" {
			base.Tenant = a.OrganizationID
		}
		detail := a.Detail
		if a.Repeats > 0 {
			detail += fmt.Sprintf(" (and %d more like it before)", a.Repeats)
		}
		base.Details = AuditDetail{Field: "detail", NewValue: strings.TrimSpace(detail)}
		m.entries = append(m.entries, base)
		return
	}
	if _, isRef := e.(domain.ReferenceChanged); isRef {
		// Imports are rows by the thousand: one entry, no field diff.
		base.Action = "update"
		m.entries = append(m.entries, base)
		return
	}
	var data map[string]json.RawMessage
	json.Unmarshal(r.Data, &data)
	key := r.Aggregate.String()
	first, existed := m.fields[key]
	base.Action = "update"
	if !existed {
		first = map[string]string{}
		m.fields[key] = first
		base.Action = "create"
	}
	// What others do to an organisation's resource (an airline replying to
	// its stock request, a reactor confirming its booking, an admin
	// deleting its webhook) is in its log too.
	named, _ := unquote(data["organizationId"])
	base.Owner = first["organizationId"]
	old := first
	switch {
	case named == "" && m.shared[key]:
		base.Owner = ""
		old = m.fieldsOf(key, base.Tenant)
	case named == "" || named == base.Owner || base.Owner == "":
		base.Owner = cmp.Or(named, base.Owner)
	default:
		m.shared[key] = true
		base.Owner = named
		old = m.fieldsOf(key, named)
	}
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	slices.Sort(names)
	changed := 0
	for _, name := range names {
		value := string(data[name])
		if s, err := unquote(data[name]); err == nil {
			value = s
		}
		before, had := old[name]
		old[name] = value
		if !existed || unaudited[name] || (had && before == value) {
			continue
		}
		entry := base
		entry.ID = fmt.Sprintf("%s-%d", r.EventID, changed)
		entry.Details = AuditDetail{Field: name, OldValue: before, NewValue: value}
		m.entries = append(m.entries, entry)
		changed++
	}
	if !existed || changed == 0 {
		m.entries = append(m.entries, base)
	}
}

// fieldsOf returns the last values of the fields of a shared aggregate
// as one organisation's events left them.
func (m *Audit) fieldsOf(key, org string) map[string]string {
	key += "\x00" + org
	f, ok := m.fields[key]
	if !ok {
		f = map[string]string{}
		m.fields[key] = f
	}
	return f
}

// unquote reads a JSON string. Most have no escapes: those are cut out
// as they are, without the decoder, as this runs for every field of
// every event.
func unquote(raw json.RawMessage) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !bytes.ContainsAny(raw[1:len(raw)-1], "\\\"") && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
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
	return pageOf(m.entries, true, func(e AuditEntry) AuditEntry { return e }, func(e AuditEntry) bool {
		return (f.Tenant == "" || e.Tenant == f.Tenant || e.Owner == f.Tenant) && (f.Action == "" || e.Action == f.Action) &&
			(f.Resource == "" || e.Resource == f.Resource) && (f.UserID == "" || e.UserID == f.UserID) &&
			(f.From.IsZero() || !e.Timestamp.Before(f.From)) && (f.To.IsZero() || e.Timestamp.Before(f.To))
	}, page, limit)
}
