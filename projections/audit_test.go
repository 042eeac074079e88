package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cargostream/cargostream/domain"
)

// auditEvent is one event as the audit log reads it: its payload, actor
// and tenant, on an aggregate.
type auditEvent struct {
	agg    domain.Aggregate
	tenant string
	event  domain.Event
}

// applyAudit applies events to m, from sequence 1 on, and returns them as
// the stream the log reads its entries from.
func applyAudit(t *testing.T, m *Audit, events ...auditEvent) recorded {
	t.Helper()
	stream := recorded{}
	for i, e := range events {
		data, err := json.Marshal(e.event)
		if err != nil {
			t.Fatal(err)
		}
		r := domain.Record{Aggregate: e.agg, Sequence: uint64(i + 1), Envelope: domain.Envelope{
			Type: e.event.EventType(), EventID: fmt.Sprintf("e%d", i+1), Actor: "client:" + e.tenant, Tenant: e.tenant, Data: data}}
		m.Apply(r, e.event)
		stream[r.Sequence] = r
	}
	return stream
}

// recorded is the events a test applied, by sequence, which the audit
// log reads back as it reads them from the event store (see
// eventstore.Store.RecordsAt).
type recorded map[uint64]domain.Record

func (s recorded) RecordsAt(_ context.Context, seqs []uint64) ([]domain.Record, error) {
	out := make([]domain.Record, len(seqs))
	for i, seq := range seqs {
		r, ok := s[seq]
		if !ok {
			return nil, fmt.Errorf("no event at sequence %d", seq)
		}
		out[i] = r
	}
	return out, nil
}

// lastEventsEntries applies events to a new log and returns the entries
// of the last of them.
func lastEventsEntries(t *testing.T, events []auditEvent) []AuditEntry {
	t.Helper()
	m := NewAudit()
	stream := applyAudit(t, m, events...)
	entries, _ := auditPage(t, m, stream, AuditFilter{}, 1, 100)
	last := fmt.Sprintf("e%d", len(events))
	return slices.DeleteFunc(entries, func(e AuditEntry) bool { return e.ID != last && !strings.HasPrefix(e.ID, last+"-") })
}

// lastEventsChanges is what lastEventsEntries say changed, "field: old →
// new", sorted and joined by ", ", but for the fields skipped.
func lastEventsChanges(t *testing.T, events []auditEvent, skipped ...string) string {
	t.Helper()
	var got []string
	for _, e := range lastEventsEntries(t, events) {
		if !slices.Contains(skipped, e.Details.Field) {
			got = append(got, e.Details.Field+": "+e.Details.OldValue+" → "+e.Details.NewValue)
		}
	}
	slices.Sort(got)
	return strings.Join(got, ", ")
}

// auditPage is a page of m's entries matching f, and how many match.
func auditPage(t *testing.T, m *Audit, stream recorded, f AuditFilter, page, limit int) ([]AuditEntry, int) {
	t.Helper()
	entries, total, err := m.Entries(t.Context(), stream, f, page, limit)
	if err != nil {
		t.Fatal(err)
	}
	return entries, total
}

func TestNoAuditEntryShowsAnotherOrganisationsValues(t *testing.T) {
	prefix := domain.Aggregate{Type: domain.AggregateAWBPrefix, ID: "020"}
	compliance := domain.Aggregate{Type: domain.AggregateCompliance, ID: "020-81140743"}
	tests := []struct {
		name   string
		events []auditEvent
		// secrets are values of one organisation that no entry another
		// organisation sees may carry.
		secrets map[string][]string
	}{
		{
			name: "two forwarders' ranges of one prefix, allocated and released by the airline",
			events: []auditEvent{
				{prefix, "lh", domain.RangeAllocated{Prefix: "020", RequestID: "req-a", OrganizationID: "fwd-a", Range: domain.AWBRange{First: 1, Count: 100}}},
				{prefix, "lh", domain.RangeAllocated{Prefix: "020", RequestID: "req-b", OrganizationID: "fwd-b", Range: domain.AWBRange{First: 101, Count: 50}}},
				{prefix, "lh", domain.RangeReleased{Prefix: "020", RequestID: "req-a", OrganizationID: "fwd-a", Range: domain.AWBRange{First: 1, Count: 100}}},
				{prefix, "lh", domain.RangeAllocated{Prefix: "020", RequestID: "req-a", OrganizationID: "fwd-a", Range: domain.AWBRange{First: 151, Count: 10}}},
				// Stored before releases named their organisation.
				{prefix, "lh", domain.RangeReleased{Prefix: "020", RequestID: "req-b", Range: domain.AWBRange{First: 101, Count: 50}}},
			},
			secrets: map[string][]string{"fwd-a": {"fwd-a", "req-a", `"first":1,`, `"first":151`}, "fwd-b": {"fwd-b", "req-b", `"first":101`}},
		},
		{
			name: "a forwarder's filing and the airline's security declaration on one shipment",
			events: []auditEvent{
				{compliance, "fwd-a", domain.PLACISubmitted{PLACIID: "placi-1", AWBNumber: "020-81140743", OrganizationID: "fwd-a", ShipperName: "ACME Tools"}},
				{compliance, "lh", domain.CSDSubmitted{CSDID: "csd-1", AWBNumber: "020-81140743", OrganizationID: "lh", SecurityStatus: "SPX"}},
			},
			secrets: map[string][]string{"fwd-a": {"fwd-a", "placi-1", "ACME Tools"}, "lh": {"csd-1", "SPX"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewAudit()
			stream := applyAudit(t, m, tt.events...)
			for reader := range tt.secrets {
				entries, _ := auditPage(t, m, stream, AuditFilter{Tenant: reader}, 1, 100)
				if len(entries) == 0 {
					t.Errorf("%s sees no entry", reader)
				}
				for _, e := range entries {
					text := fmt.Sprintf("%+v", e.Details)
					for owner, secrets := range tt.secrets {
						for _, s := range secrets {
							if owner != reader && strings.Contains(text, s) {
								t.Errorf("%s sees %q of %s in %s %s: %s", reader, s, owner, e.Action, e.ID, text)
							}
						}
					}
				}
			}
		})
	}
}

// TestAuditEntriesOfTheCredentialLifeCycle checks that a new secret and a
// status change are in the log, and that no entry shows a hash.
func TestAuditEntriesOfTheCredentialLifeCycle(t *testing.T) {
	client := domain.Aggregate{Type: domain.AggregateClient, ID: "tms"}
	m := NewAudit()
	stream := applyAudit(t, m,
		auditEvent{client, "ops", domain.ClientCreated{ClientID: "tms", OrganizationID: "acme", SecretHash: "$2a$old"}},
		auditEvent{client, "ops", domain.ClientSecretRotated{ClientID: "tms", OrganizationID: "acme", SecretHash: "$2a$new"}},
		auditEvent{client, "ops", domain.ClientStatusChanged{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusDisabled}},
	)
	entries, _ := auditPage(t, m, stream, AuditFilter{Tenant: "acme"}, 1, 10)
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+" "+e.Details.Field+": "+e.Details.OldValue+" → "+e.Details.NewValue)
	}
	want := []string{"update status: active → disabled", "update secretHash: [redacted] → [redacted]", "create :  → "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries, newest first:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An event that moves a resource to another status without a status field
// of its own (its type says it) shows the change of status as the API
// shows it, beside whatever fields it changed: none of these is an entry
// without a change, as they were.
func TestAuditEntriesShowTheStatusAnEventSets(t *testing.T) {
	booking := domain.Aggregate{Type: domain.AggregateBooking, ID: "b-1"}
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}
	request := domain.Aggregate{Type: domain.AggregateStockRequest, ID: "r-1"}
	webhook := domain.Aggregate{Type: domain.AggregateWebhook, ID: "hook-1"}
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	client := domain.Aggregate{Type: domain.AggregateClient, ID: "tms"}
	key := domain.Aggregate{Type: domain.AggregateAPIKey, ID: "k-1"}
	tests := []struct {
		name   string
		events []auditEvent
		want   string // the last event's entry of the status
	}{
		{"a booking confirmed", []auditEvent{
			{booking, "acme", domain.BookingRequested{BookingID: "b-1", OrganizationID: "acme"}},
			{booking, "", domain.BookingConfirmed{BookingID: "b-1", AWBNumber: "020-81140743"}},
		}, "status: pending → confirmed"},
		{"a booking cancelled after its confirmation", []auditEvent{
			{booking, "acme", domain.BookingRequested{BookingID: "b-1", OrganizationID: "acme"}},
			{booking, "", domain.BookingConfirmed{BookingID: "b-1"}},
			{booking, "acme", domain.BookingCancelled{BookingID: "b-1"}},
		}, "status: confirmed → cancelled"},
		{"a quote priced, accepted and reopened", []auditEvent{
			{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme"}},
			{quote, "", domain.QuotePriced{QuoteID: "q-1"}},
			{quote, "", domain.QuoteAccepted{QuoteID: "q-1", BookingID: "b-1"}},
			{quote, "", domain.QuoteReopened{QuoteID: "q-1"}},
		}, "status: accepted → priced"},
		{"a stock request replied", []auditEvent{
			{request, "acme", domain.StockRequested{RequestID: "r-1", OrganizationID: "acme"}},
			{request, "lh", domain.StockReplied{RequestID: "r-1", OrganizationID: "acme", Status: domain.StockStatusApproved}},
		}, "status: pending → approved"},
		{"a webhook deleted", []auditEvent{
			{webhook, "acme", domain.WebhookRegistered{WebhookID: "hook-1", OrganizationID: "acme"}},
			{webhook, "acme", domain.WebhookDeleted{WebhookID: "hook-1"}},
		}, "status: active → deleted"},
		{"a flight delayed", []auditEvent{
			{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH"}},
			{flight, "lh", domain.FlightStatusChanged{FlightID: "LH8400-2026-12-01", Status: domain.FlightStatusDelayed, Previous: domain.FlightStatusScheduled}},
		}, "status: scheduled → delayed"},
		{"a client disabled", []auditEvent{
			{client, "ops", domain.ClientCreated{ClientID: "tms", OrganizationID: "acme"}},
			{client, "ops", domain.ClientStatusChanged{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusDisabled}},
		}, "status: active → disabled"},
		{"an API key revoked", []auditEvent{
			{key, "acme", domain.APIKeyCreated{KeyID: "k-1", OrganizationID: "acme", Name: "tms"}},
			{key, "acme", domain.APIKeyRevoked{KeyID: "k-1"}},
		}, "status: active → revoked"},
		{"a flight's capacity released by the booking that reserved it", []auditEvent{
			{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH"}},
			{flight, "", domain.CapacityReserved{FlightID: "LH8400-2026-12-01", BookingID: "b-1", WeightKg: 120, VolumeM3: 0.5}},
			{flight, "", domain.CapacityReleased{FlightID: "LH8400-2026-12-01", BookingID: "b-1", WeightKg: 120, VolumeM3: 0.5}},
		}, "capacity:  → released"},
		{"a webhook disabled by its receiver", []auditEvent{
			{webhook, "acme", domain.WebhookRegistered{WebhookID: "hook-1", OrganizationID: "acme"}},
			{webhook, "", domain.WebhookDisabled{WebhookID: "hook-1", Reason: "410 Gone"}},
		}, "status: active → disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := ""
			for _, e := range lastEventsEntries(t, tt.events) {
				if e.Action != "update" || e.Details.Field == "" {
					t.Errorf("entry %s: %s %+v, want an update of a field", e.ID, e.Action, e.Details)
				}
				if e.Details.Field == "status" || e.Details.Field == "capacity" {
					status = e.Details.Field + ": " + e.Details.OldValue + " → " + e.Details.NewValue
				}
			}
			if status != tt.want {
				t.Errorf("the last event's status entry is %q, want %q", status, tt.want)
			}
		})
	}
}

// A flight flown by another aircraft shows its aircraft and capacity
// changed from what it had to what it has: the event's own record of what
// it had before is no field of the flight's.
func TestAFlightsAircraftChangedIsShownAsItsFieldsChanged(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	var got []string
	for _, e := range lastEventsEntries(t, []auditEvent{
		{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH", AircraftType: "B77F", CapacityKg: 102000, CapacityM3: 653}},
		{flight, "lh", domain.FlightAircraftChanged{FlightID: "LH8400-2026-12-01", AircraftType: "B744F", CapacityKg: 112000, CapacityM3: 700,
			PreviousAircraftType: "B77F", PreviousCapacityKg: 102000, PreviousCapacityM3: 653}},
	}) {
		got = append(got, e.Details.Field+": "+e.Details.OldValue+" → "+e.Details.NewValue)
	}
	slices.Sort(got)
	if want := []string{"aircraftType: B77F → B744F", "capacityKg: 102000 → 112000", "capacityM3: 653 → 700"}; !slices.Equal(got, want) {
		t.Errorf("the change's entries = %q, want %q", got, want)
	}
}

// An event of one of an aggregate's records (a flight's reservation for a
// booking, a ledger's number) is compared with the aggregate's own fields
// alone: a second booking's reservation is not the first's bookingId
// changed to the second's, nor a second number the first's awbNumber
// changed, nor a release the last reservation's booking changed back, nor
// a second revocation of a subject's tokens an edit of when it lapses, nor
// a forwarder's second range of a prefix, or of its ledger, the first's
// range replaced (the first event of a ledger or a prefix is a record of
// its own too: its range is not the aggregate's), nor an organisation's
// second webhook held by its quota the first's webhookId changed.
func TestAnEventOfOneOfAnAggregatesRecordsIsComparedWithTheAggregatesOwnFields(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	ledger := domain.Aggregate{Type: domain.AggregateStockLedger, ID: "acme-020"}
	user := domain.Aggregate{Type: domain.AggregateUser, ID: "alice"}
	scheduled := auditEvent{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH"}}
	reserved := func(booking string, kg float64) auditEvent {
		return auditEvent{flight, "", domain.CapacityReserved{FlightID: "LH8400-2026-12-01", BookingID: booking, WeightKg: kg}}
	}
	allocated := auditEvent{ledger, "lh", domain.StockAllocated{OrganizationID: "acme", Prefix: "020",
		Range: domain.LedgerRange{RequestID: "r-1", Range: domain.AWBRange{First: 1, Count: 10}, ValidFrom: "2026-11-01", ValidTo: "2027-10-31"}}}
	allocated2 := auditEvent{ledger, "lh", domain.StockAllocated{OrganizationID: "acme", Prefix: "020",
		Range: domain.LedgerRange{RequestID: "r-2", Range: domain.AWBRange{First: 11, Count: 10}, ValidFrom: "2026-11-01", ValidTo: "2027-10-31"}}}
	prefix := domain.Aggregate{Type: domain.AggregateAWBPrefix, ID: "020"}
	ranged := func(request string, first int) auditEvent {
		return auditEvent{prefix, "lh", domain.RangeAllocated{Prefix: "020", RequestID: request, OrganizationID: "acme",
			Range: domain.AWBRange{First: first, Count: 10}}}
	}
	used := func(awb, reference string) auditEvent {
		return auditEvent{ledger, "", domain.AWBNumberUsed{OrganizationID: "acme", AWBNumber: awb, Reference: reference}}
	}
	quota := domain.Aggregate{Type: domain.AggregateWebhookQuota, ID: "acme"}
	held := func(webhook string, held bool) auditEvent {
		return auditEvent{quota, "acme", domain.WebhookQuotaChanged{OrganizationID: "acme", WebhookID: webhook, Held: held}}
	}
	tests := []struct {
		name   string
		events []auditEvent
		want   string // the last event's entries, "field: old → new" sorted
	}{
		{"a second booking's reservation", []auditEvent{scheduled, reserved("b-1", 120), reserved("b-2", 80)},
			"bookingId:  → b-2, capacity:  → reserved, volumeM3:  → 0, weightKg:  → 80"},
		{"the first's release after the second's reservation",
			[]auditEvent{scheduled, reserved("b-1", 120), reserved("b-2", 80),
				{flight, "", domain.CapacityReleased{FlightID: "LH8400-2026-12-01", BookingID: "b-1", WeightKg: 120}}},
			"bookingId:  → b-1, capacity:  → released, volumeM3:  → 0, weightKg:  → 120"},
		{"a second number used", []auditEvent{allocated, used("020-00000011", "b-1"), used("020-00000022", "b-2")},
			"awbNumber:  → 020-00000022, reference:  → b-2"},
		{"a second range of the ledger", []auditEvent{allocated, allocated2},
			`range:  → {"requestId":"r-2","range":{"first":11,"count":10},"validFrom":"2026-11-01","validTo":"2027-10-31"}`},
		{"a second range of the prefix for one forwarder", []auditEvent{ranged("r-1", 1), ranged("r-2", 11)},
			`range:  → {"first":11,"count":10}, requestId:  → r-2`},
		{"a range released after a second range", []auditEvent{ranged("r-1", 1), ranged("r-2", 11),
			{prefix, "lh", domain.RangeReleased{Prefix: "020", RequestID: "r-1", OrganizationID: "acme", Range: domain.AWBRange{First: 1, Count: 10}}}},
			`organizationId:  → acme, prefix:  → 020, range:  → {"first":1,"count":10}, requestId:  → r-1`},
		{"a second webhook held by the quota", []auditEvent{held("w-1", true), held("w-2", true)},
			"webhookId:  → w-2"},
		{"the second webhook released", []auditEvent{held("w-1", true), held("w-2", true), held("w-2", false)},
			"held:  → false, webhookId:  → w-2"},
		{"the first webhook released after a second was held", []auditEvent{held("w-1", true), held("w-2", true), held("w-1", false)},
			"held:  → false"},
		{"a user's tokens revoked a second time", []auditEvent{
			{user, "ops", domain.UserCreated{Username: "alice", OrganizationID: "acme"}},
			{user, "ops", domain.TokensRevoked{Scope: "subject", Subject: "user:alice", KeepUntil: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}},
			{user, "ops", domain.TokensRevoked{Scope: "subject", Subject: "user:alice", KeepUntil: time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)}}},
			"keepUntil:  → 2026-11-29T22:00:00Z, scope:  → subject, subject:  → user:alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lastEventsChanges(t, tt.events); got != tt.want {
				t.Errorf("the last event's entries:\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A field an event states in full, set or not (domain.Restater), is
// shown emptied when the event leaves it out: a delay without an estimate
// withdraws the last one's, and its entry says so, where the log read as
// if the estimate stood; set again, it shows the change from empty. Left
// out where it never had a value, it makes no entry.
func TestAFieldAnEventStatesInFullIsShownEmptiedWhenItLeavesItOut(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	at := time.Date(2026, 12, 1, 10, 45, 0, 0, time.UTC)
	scheduled := auditEvent{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH"}}
	delayed := func(estimate time.Time) auditEvent {
		return auditEvent{flight, "lh", domain.FlightStatusChanged{FlightID: "LH8400-2026-12-01", Status: domain.FlightStatusDelayed,
			Previous: domain.FlightStatusDelayed, EstimatedDepartsAt: estimate}}
	}
	tests := []struct {
		name   string
		events []auditEvent
		want   string // the last event's entries, "field: old → new" sorted
	}{
		{"an estimate given", []auditEvent{scheduled, delayed(at)}, "estimatedDepartsAt:  → 2026-12-01T10:45:00Z"},
		{"the estimate withdrawn", []auditEvent{scheduled, delayed(at), delayed(time.Time{})}, "estimatedDepartsAt: 2026-12-01T10:45:00Z → "},
		{"the same estimate given again", []auditEvent{scheduled, delayed(at), delayed(time.Time{}), delayed(at)}, "estimatedDepartsAt:  → 2026-12-01T10:45:00Z"},
		{"no estimate, as before", []auditEvent{scheduled, delayed(time.Time{}), delayed(time.Time{})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lastEventsChanges(t, tt.events, "", "status", "previous"); got != tt.want {
				t.Errorf("the last event's entries:\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A revised manifest states what it takes off the flight (dropped) and
// what it found on board, as it states its differences: one without them
// empties them, and its entry says so, where the log read as if the last
// manifest's shipments were dropped again.
func TestARevisedManifestWithoutDropsShowsNoneDropped(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	a, b := domain.Load{AWBNumber: "020-00000011", Pieces: 1, WeightKg: 100}, domain.Load{AWBNumber: "020-00000022", Pieces: 1, WeightKg: 200}
	manifest := func(id string, loads []domain.Load, dropped []domain.Load, found []string) auditEvent {
		return auditEvent{flight, "lh", domain.ManifestSubmitted{ManifestID: id, FlightID: flight.ID, Shipments: loads, Dropped: dropped, FoundOnBoard: found}}
	}
	scheduled := auditEvent{flight, "lh", domain.FlightScheduled{FlightID: flight.ID, Carrier: "LH"}}
	tests := []struct {
		name   string
		events []auditEvent
		field  string
		want   string // the field's new value in the last event's entry (a value it holds); "-" for no entry
	}{
		{"a shipment dropped", []auditEvent{scheduled, manifest("m1", []domain.Load{a, b}, nil, nil), manifest("m2", []domain.Load{a}, []domain.Load{b}, nil)},
			"dropped", "020-00000022"},
		{"none dropped after one was", []auditEvent{scheduled, manifest("m1", []domain.Load{a, b}, nil, nil), manifest("m2", []domain.Load{a}, []domain.Load{b}, nil),
			manifest("m3", []domain.Load{a}, nil, nil)}, "dropped", ""},
		{"none dropped, as before", []auditEvent{scheduled, manifest("m1", []domain.Load{a}, nil, nil), manifest("m2", []domain.Load{a}, nil, nil)}, "dropped", "-"},
		{"none found on board after one was", []auditEvent{scheduled, manifest("m1", []domain.Load{a}, nil, nil), manifest("m2", []domain.Load{a, b}, nil, []string{b.AWBNumber}),
			manifest("m3", []domain.Load{a, b}, nil, nil)}, "foundOnBoard", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := "-"
			for _, e := range lastEventsEntries(t, tt.events) {
				if e.Details.Field == tt.field {
					got = e.Details.NewValue
				}
			}
			ok := got == tt.want
			if tt.want != "" && tt.want != "-" {
				ok = strings.Contains(got, tt.want) // a list, as the log renders it
			}
			if !ok {
				t.Errorf("the last event's entry of %s shows %q, want %q", tt.field, got, tt.want)
			}
		})
	}
}

// An aggregate whose events name no organisation is the one's that made
// it: a reactor's reservation on a flight is in the airline's log, where
// only admins saw it; another organisation's log has none of it.
func TestWhatReactorsDoToAFlightIsInTheLogOfTheAirlineThatScheduledIt(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	m := NewAudit()
	stream := applyAudit(t, m,
		auditEvent{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH"}},
		auditEvent{flight, "", domain.CapacityReserved{FlightID: "LH8400-2026-12-01", BookingID: "b-1", WeightKg: 120}},
	)
	for _, tt := range []struct {
		tenant string
		want   int
	}{{"lh", 2}, {"ek", 0}} {
		entries, _ := auditPage(t, m, stream, AuditFilter{Tenant: tt.tenant}, 1, 100)
		ids := map[string]bool{}
		for _, e := range entries {
			ids[strings.SplitN(e.ID, "-", 2)[0]] = true
		}
		if len(ids) != tt.want {
			t.Errorf("%s's log holds the entries of %d of the flight's events, want %d: %+v", tt.tenant, len(ids), tt.want, entries)
		}
	}
}

// An update lists the fields it changed, not the time it was made: that
// is the entry's timestamp (README, and the endpoint's description).
func TestNoAuditEntryIsTheTimeOfTheChangeItself(t *testing.T) {
	at := func(minute int) time.Time { return time.Date(2026, 11, 27, 9, minute, 0, 0, time.UTC) }
	webhook := domain.Aggregate{Type: domain.AggregateWebhook, ID: "hook-1"}
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}
	shipment := domain.Aggregate{Type: domain.AggregateShipment, ID: "020-81140743"}
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-11-27"}
	client := domain.Aggregate{Type: domain.AggregateClient, ID: "tms"}
	tests := []struct {
		name   string
		events []auditEvent
		field  string // the time of the last change, which no entry may name
	}{
		{"a webhook deleted", []auditEvent{
			{webhook, "acme", domain.WebhookRegistered{WebhookID: "hook-1", OrganizationID: "acme", CreatedAt: at(0)}},
			{webhook, "acme", domain.WebhookDeleted{WebhookID: "hook-1", DeletedAt: at(1)}},
		}, "deletedAt"},
		{"a webhook disabled", []auditEvent{
			{webhook, "acme", domain.WebhookRegistered{WebhookID: "hook-1", OrganizationID: "acme", CreatedAt: at(0)}},
			{webhook, "", domain.WebhookDisabled{WebhookID: "hook-1", Reason: "410 Gone", DisabledAt: at(1)}},
		}, "disabledAt"},
		{"a quote reopened", []auditEvent{
			{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", RequestedAt: at(0)}},
			{quote, "", domain.QuoteReopened{QuoteID: "q-1", BookingID: "b-1", ReopenedAt: at(1)}},
		}, "reopenedAt"},
		{"a second status event", []auditEvent{
			{shipment, "lh", domain.ShipmentStatusRecorded{AWBNumber: "020-81140743", StatusCode: "RCS", RecordedAt: at(0)}},
			{shipment, "lh", domain.ShipmentStatusRecorded{AWBNumber: "020-81140743", StatusCode: "DEP", RecordedAt: at(1)}},
		}, "recordedAt"},
		{"a second manifest", []auditEvent{
			{flight, "lh", domain.ManifestSubmitted{ManifestID: "m-1", FlightID: "LH8400-2026-11-27", SubmittedAt: at(0)}},
			{flight, "lh", domain.ManifestSubmitted{ManifestID: "m-2", FlightID: "LH8400-2026-11-27", SubmittedAt: at(1)}},
		}, "submittedAt"},
		{"an offload", []auditEvent{
			{flight, "lh", domain.ManifestSubmitted{ManifestID: "m-1", FlightID: "LH8400-2026-11-27", SubmittedAt: at(0)}},
			{flight, "lh", domain.OffloadReported{FlightID: "LH8400-2026-11-27", AWBNumber: "020-81140743", ReportedAt: at(1)}},
		}, "reportedAt"},
		{"tokens revoked", []auditEvent{
			{client, "ops", domain.ClientCreated{ClientID: "tms", OrganizationID: "acme", CreatedAt: at(0)}},
			{client, "ops", domain.TokensRevoked{Scope: domain.RevokeSubject, Subject: "client:tms", OrganizationID: "acme",
				IssuedBefore: at(1), KeepUntil: at(1).Add(time.Hour), RevokedAt: at(1)}},
		}, "issuedBefore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewAudit()
			stream := applyAudit(t, m, tt.events...)
			entries, _ := auditPage(t, m, stream, AuditFilter{}, 1, 100)
			for _, e := range entries {
				if e.Details.Field != "" && strings.Contains(" "+tt.field+" ", " "+e.Details.Field+" ") {
					t.Errorf("%s entry %s: %s %s → %s", e.Action, e.ID, e.Details.Field, e.Details.OldValue, e.Details.NewValue)
				}
			}
		})
	}
}

// The audit log's index keeps no string of an event's: its entries are
// read from the events when a page is read. What it keeps of the strings
// entries repeat (actors, organisations, field names) it keeps once, in
// memory of its own, and an event that repeats them adds none.
func TestTheAuditIndexKeepsNoStringOfAnEventButWhatItRepeats(t *testing.T) {
	m := NewAudit()
	stream := recorded{}
	var blocks []string
	symbolsAfter := make([]int, 2)
	for i, notes := range []string{"fragile", "keep-dry"} {
		// Each event's envelope and payload in memory of its own, as each
		// event's header block and data are.
		e := domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Origin: "FRA", Destination: "JFK", Notes: notes}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		block := fmt.Sprintf("e%d client:tms acme 192.0.2.1 %s", i+1, data)
		blocks = append(blocks, block)
		f := strings.Fields(block)
		r := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}, Sequence: uint64(i + 1),
			Envelope: domain.Envelope{Type: e.EventType(), EventID: f[0], Actor: f[1], Tenant: f[2], ClientIP: f[3], Data: []byte(f[4])}}
		m.Apply(r, e)
		stream[r.Sequence] = r
		symbolsAfter[i] = len(m.symbols.names)
	}
	if symbolsAfter[1] != symbolsAfter[0] {
		t.Errorf("the second event added %d strings to the index: %q", symbolsAfter[1]-symbolsAfter[0], m.symbols.names[symbolsAfter[0]:])
	}
	for _, name := range m.symbols.names {
		for _, block := range blocks {
			start := uintptr(unsafe.Pointer(unsafe.StringData(block)))
			if p := uintptr(unsafe.Pointer(unsafe.StringData(name))); name != "" && p >= start && p < start+uintptr(len(block)) {
				t.Errorf("the index keeps %q, a slice of an event", name)
			}
		}
	}
	entries, _ := auditPage(t, m, stream, AuditFilter{}, 1, 10)
	var got []string
	for _, e := range entries {
		got = append(got, strings.Join([]string{e.ID, e.Action, e.ResourceID, e.UserID, e.Tenant, e.Owner, e.IPAddress,
			e.Details.Field, e.Details.OldValue, e.Details.NewValue}, " "))
	}
	want := []string{"e2-0 update q-1 client:tms acme acme 192.0.2.1 notes fragile keep-dry", "e1 create q-1 client:tms acme acme 192.0.2.1   "}
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// An update's old value is the value the field had before it: the one
// the event that last changed it left, however many events came between.
func TestAnAuditEntrysOldValueIsTheOneTheFieldHadBefore(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH8400-2026-12-01"}
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}
	long := strings.Repeat("a long note ", 10)
	m := NewAudit()
	stream := applyAudit(t, m,
		auditEvent{flight, "lh", domain.FlightScheduled{FlightID: "LH8400-2026-12-01", Carrier: "LH", Origin: "FRA"}},
		auditEvent{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Notes: long, Pieces: 3}},
		// What the event says of how it was stored, and the status
		// before, which the status entry shows, make no entries.
		auditEvent{flight, "lh", domain.FlightStatusChanged{FlightID: "LH8400-2026-12-01", Status: domain.FlightStatusDelayed,
			Previous: domain.FlightStatusScheduled, StatusesStored: true}},
		auditEvent{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Notes: long, Pieces: 4}},
		auditEvent{flight, "lh", domain.FlightStatusChanged{FlightID: "LH8400-2026-12-01", Status: domain.FlightStatusDelayed}},
		auditEvent{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Notes: "short", Pieces: 4}},
		auditEvent{flight, "lh", domain.FlightStatusChanged{FlightID: "LH8400-2026-12-01", Status: domain.FlightStatusCancelled}},
	)
	entries, _ := auditPage(t, m, stream, AuditFilter{}, 1, 100)
	var got []string
	for _, e := range entries {
		if slices.Contains([]string{"status", "notes", "pieces"}, e.Details.Field) {
			got = append(got, e.ID+" "+e.Details.Field+": "+e.Details.OldValue+" → "+e.Details.NewValue)
		}
	}
	want := []string{
		"e7-0 status: delayed → cancelled",
		"e6-0 notes: " + long + " → short",
		"e4-0 pieces: 3 → 4",
		"e3-0 status: scheduled → delayed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries, newest first:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The filters of the log, each alone; a time window as wide as a date
// can say holds every entry, and a name no entry has matches none.
func TestTheAuditLogsFilters(t *testing.T) {
	at := func(hour int) time.Time { return time.Date(2026, 11, 27, hour, 0, 0, 0, time.UTC) }
	m := NewAudit()
	stream := recorded{}
	for i, e := range []struct {
		agg    domain.Aggregate
		actor  string
		tenant string
		event  domain.Event
	}{
		{domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}, "client:tms", "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme"}},
		{domain.Aggregate{Type: domain.AggregateBooking, ID: "b-1"}, "user:ann", "acme", domain.BookingRequested{BookingID: "b-1", OrganizationID: "acme"}},
		{domain.Aggregate{Type: domain.AggregateBooking, ID: "b-1"}, "reactor:bookings", "", domain.BookingConfirmed{BookingID: "b-1"}},
		{domain.Aggregate{Type: domain.AggregateAuthorization, ID: "a-1"}, "client:lh-ops", "lh", domain.AuthorizationRecorded{Action: domain.ActionTokenIssued,
			Subject: "client:lh-ops", OrganizationID: "lh", Detail: "client_credentials"}},
	} {
		data, err := json.Marshal(e.event)
		if err != nil {
			t.Fatal(err)
		}
		r := domain.Record{Aggregate: e.agg, Sequence: uint64(i + 1), Envelope: domain.Envelope{Type: e.event.EventType(), EventID: fmt.Sprintf("e%d", i+1),
			Actor: e.actor, Tenant: e.tenant, OccurredAt: at(9 + i), Data: data}}
		m.Apply(r, e.event)
		stream[r.Sequence] = r
	}
	tests := []struct {
		name   string
		filter AuditFilter
		want   string // the ids of the entries, newest first
	}{
		{"none", AuditFilter{}, "e4 e3-0 e2 e1"},
		{"an action", AuditFilter{Action: domain.ActionCreate}, "e2 e1"},
		{"an action no entry has", AuditFilter{Action: domain.ActionLoginFailed}, ""},
		{"a resource", AuditFilter{Resource: domain.AggregateBooking}, "e3-0 e2"},
		{"the authorization resource", AuditFilter{Resource: domain.AuditResourceAuthorization}, "e4"},
		{"a user", AuditFilter{UserID: "user:ann"}, "e2"},
		{"a user who did nothing", AuditFilter{UserID: "user:bob"}, ""},
		{"an organisation: its acts and what was done to its resources", AuditFilter{Tenant: "acme"}, "e3-0 e2 e1"},
		{"an organisation of no entry", AuditFilter{Tenant: "nobody"}, ""},
		{"from a time on", AuditFilter{From: at(10)}, "e4 e3-0 e2"},
		{"up to a time, not at it", AuditFilter{To: at(11)}, "e2 e1"},
		{"a window", AuditFilter{From: at(10), To: at(11)}, "e2"},
		{"from the first day there is to the last", AuditFilter{From: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}, "e4 e3-0 e2 e1"},
		{"a window before any event", AuditFilter{From: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
		{"a window after every event", AuditFilter{From: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, total := auditPage(t, m, stream, tt.filter, 1, 100)
			var ids []string
			for _, e := range entries {
				ids = append(ids, e.ID)
			}
			if got := strings.Join(ids, " "); got != tt.want || total != len(ids) {
				t.Errorf("entries %q of %d, want %q", got, total, tt.want)
			}
		})
	}
}

// A page of the log whose events cannot be read says so; it is not a page
// of entries without their details.
func TestAnAuditPageWhoseEventsCannotBeReadIsAnError(t *testing.T) {
	m := NewAudit()
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}
	stream := applyAudit(t, m, auditEvent{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme"}})
	delete(stream, 1)
	if entries, total, err := m.Entries(t.Context(), stream, AuditFilter{}, 1, 10); err == nil {
		t.Errorf("entries %+v of %d, and no error", entries, total)
	}
}

// The last values the log keeps to tell what changed leave out the time
// of each change, which no entry shows (see unaudited).
func TestTheAuditLogKeepsNoLastValueOfTheTimeOfAChange(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}
	tests := []struct {
		name   string
		events []auditEvent
		want   string // the names of the fields kept, sorted (status: see TestAuditEntriesShowTheStatusAnEventSets)
	}{
		{"a create", []auditEvent{
			{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Origin: "FRA", RequestedAt: at}},
		}, "commodity consignee destination grossWeightKg organizationId origin pieces quoteId shipper status volumeM3"},
		{"an update that adds fields", []auditEvent{
			{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Origin: "FRA", RequestedAt: at}},
			{quote, "", domain.QuoteAccepted{QuoteID: "q-1", BookingID: "b-1", FlightID: "LH8400", AcceptedAt: at}},
		}, "bookingId commodity consignee destination flightId grossWeightKg organizationId origin pieces quoteId shipper status volumeM3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewAudit()
			applyAudit(t, m, tt.events...)
			var names []string
			key := auditKey{Type: m.symbols.number(quote.Type), ID: m.symbols.number(quote.ID)}
			for _, f := range m.last[key].Fields {
				names = append(names, m.symbols.name(f.Name))
			}
			if got := strings.Join(names, " "); got != tt.want {
				t.Errorf("fields kept: %s\nwant %s", got, tt.want)
			}
		})
	}
}

// An event's entries share one head, kept once: each entry reads as if it
// were whole, with the event's id, or for the n-th changed field of an
// update the event's id and "-n".
func TestAnEventsEntriesShareItsHead(t *testing.T) {
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q-1"}
	auth := domain.Aggregate{Type: domain.AggregateAuthorization, ID: "a-1"}
	ref := domain.Aggregate{Type: domain.AggregateReference, ID: domain.RefAirports}
	m := NewAudit()
	stream := applyAudit(t, m,
		auditEvent{quote, "acme", domain.QuoteRequested{QuoteID: "q-1", OrganizationID: "acme", Origin: "FRA"}},
		auditEvent{quote, "acme", domain.QuoteAccepted{QuoteID: "q-1", BookingID: "b-1", FlightID: "LH8400"}},
		auditEvent{quote, "acme", domain.QuoteAccepted{QuoteID: "q-1", BookingID: "b-1", FlightID: "LH8400"}},
		auditEvent{auth, "acme", domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: "client:tms", OrganizationID: "acme",
			Detail: "client_credentials"}},
		auditEvent{ref, "ops", domain.ReferenceChanged{Kind: domain.RefAirports, Source: "built-in"}},
	)
	entries, total := auditPage(t, m, stream, AuditFilter{}, 1, 100)
	want := []struct{ id, action, resource, resourceID, user, field, value string }{
		{"e5", "update", domain.AggregateReference, domain.RefAirports, "client:ops", "", ""},
		{"e4", domain.ActionTokenIssued, "authorization", "client:tms", "client:acme", "detail", "client_credentials"},
		{"e3", "update", domain.AggregateQuote, "q-1", "client:acme", "", ""},
		{"e2-2", "update", domain.AggregateQuote, "q-1", "client:acme", "status", domain.QuoteStatusAccepted},
		{"e2-1", "update", domain.AggregateQuote, "q-1", "client:acme", "flightId", "LH8400"},
		{"e2-0", "update", domain.AggregateQuote, "q-1", "client:acme", "bookingId", "b-1"},
		{"e1", "create", domain.AggregateQuote, "q-1", "client:acme", "", ""},
	}
	if total != len(want) || len(entries) != len(want) {
		t.Fatalf("%d entries of %d, want %d", len(entries), total, len(want))
	}
	for i, w := range want {
		t.Run(w.id, func(t *testing.T) {
			e := entries[i]
			if e.ID != w.id || e.Action != w.action || e.Resource != w.resource || e.ResourceID != w.resourceID || e.UserID != w.user ||
				e.Details.Field != w.field || e.Details.NewValue != w.value {
				t.Errorf("entry %+v, want %+v", e, w)
			}
		})
	}
	if m.heads.n != 5 {
		t.Errorf("%d heads kept for 5 events", m.heads.n)
	}
}

// BenchmarkAuditPage measures reading a page of 100 entries of a log of
// 300k events of 50 organisations: an organisation's, an admin's of every
// entry, and an admin's of one action, which walks them all.
//
//	go test ./projections -run '^$' -bench AuditPage
func BenchmarkAuditPage(b *testing.B) {
	m := NewAudit()
	stream := recorded{}
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	const events, orgs = 300_000, 50
	for i := range events {
		org := "org-" + strconv.Itoa(i%orgs)
		e := domain.QuoteRequested{QuoteID: "q-" + strconv.Itoa(i), OrganizationID: org, Origin: "FRA", Destination: "JFK"}
		data, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		r := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: e.QuoteID}, Sequence: uint64(i + 1),
			Envelope: domain.Envelope{Type: e.EventType(), EventID: e.QuoteID, Actor: "client:" + org, Tenant: org,
				OccurredAt: at.Add(time.Duration(i) * time.Second), Data: data}}
		m.Apply(r, e)
		if i >= events-100*orgs { // the events the pages read
			stream[r.Sequence] = r
		}
	}
	for _, bb := range []struct {
		name string
		f    AuditFilter
	}{
		{"organisation", AuditFilter{Tenant: "org-7"}},
		{"admin", AuditFilter{}},
		{"admin-one-action", AuditFilter{Action: domain.ActionCreate}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if page, total, err := m.Entries(context.Background(), stream, bb.f, 1, 100); err != nil || len(page) != 100 || total == 0 {
					b.Fatal(len(page), total, err)
				}
			}
		})
	}
}

// A house waybill under its master, and each e-DGD of a shipment, is a
// record of its own: created, not the master's weight and parties
// changed to the house's, nor one declaration renumbered into the next.
func TestAnEventThatAddsARecordToItsAggregateIsACreate(t *testing.T) {
	waybill := domain.Aggregate{Type: domain.AggregateWaybill, ID: "020-00000022"}
	compliance := domain.Aggregate{Type: domain.AggregateCompliance, ID: "020-00000022"}
	m := NewAudit()
	stream := applyAudit(t, m,
		auditEvent{waybill, "acme", domain.MAWBCreated{AWBNumber: "020-00000022", OrganizationID: "acme", Pieces: 2, WeightKg: 350.5}},
		auditEvent{waybill, "acme", domain.HAWBCreated{HAWBNumber: "C26", MAWBNumber: "020-00000022", OrganizationID: "acme", Pieces: 1, WeightKg: 1}},
		auditEvent{waybill, "acme", domain.HAWBCreated{HAWBNumber: "C11", MAWBNumber: "020-00000022", OrganizationID: "acme", Pieces: 1, WeightKg: 2}},
		auditEvent{compliance, "acme", domain.DGDSubmitted{DGDID: "d1", AWBNumber: "020-00000022", OrganizationID: "acme", UNNumber: "UN1845"}},
		auditEvent{compliance, "acme", domain.DGDSubmitted{DGDID: "d2", AWBNumber: "020-00000022", OrganizationID: "acme", UNNumber: "UN3480"}},
	)
	entries, total := auditPage(t, m, stream, AuditFilter{}, 1, 100)
	var got []string
	for _, e := range entries {
		got = append(got, e.ID+" "+e.Action+" "+e.Resource+" "+e.ResourceID+" "+e.Details.Field)
	}
	want := []string{
		"e5 create compliance 020-00000022 ",
		"e4 create compliance 020-00000022 ",
		"e3 create waybill 020-00000022 ",
		"e2 create waybill 020-00000022 ",
		"e1 create waybill 020-00000022 ",
	}
	if !slices.Equal(got, want) || total != len(want) {
		t.Errorf("entries, newest first (%d):\n%s\nwant\n%s", total, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A user's aggregate id is a digest of its username, which no endpoint
// shows: an entry naming it told an admin that some user was disabled or
// given a new password, not which one.
func TestAUsersEntriesNameTheUserByItsUsername(t *testing.T) {
	user := domain.Aggregate{Type: domain.AggregateUser, ID: "89b2dc46-e6c0-58b3-95d2-154f372e18d9"}
	m := NewAudit()
	stream := applyAudit(t, m,
		auditEvent{user, "ops", domain.UserCreated{UserID: user.ID, Username: "Ana.Ops", OrganizationID: "acme", PasswordHash: "$2a$old"}},
		auditEvent{user, "ops", domain.UserPasswordSet{UserID: user.ID, Username: "Ana.Ops", OrganizationID: "acme", PasswordHash: "$2a$new"}},
		auditEvent{user, "ops", domain.UserStatusChanged{UserID: user.ID, Username: "Ana.Ops", OrganizationID: "acme", Status: domain.StatusDisabled}},
		auditEvent{user, "ops", domain.TokensRevoked{Scope: domain.RevokeSubject, Subject: "user:Ana.Ops", IssuedBefore: time.Unix(1, 0)}},
	)
	entries, _ := auditPage(t, m, stream, AuditFilter{}, 1, 10)
	if len(entries) < 4 {
		t.Fatalf("%d entries, want one of each of 4 events at least", len(entries))
	}
	for _, e := range entries {
		if e.ResourceID != "Ana.Ops" {
			t.Errorf("%s %s: resourceId %q, want the username Ana.Ops", e.Action, e.Details.Field, e.ResourceID)
		}
	}
}
