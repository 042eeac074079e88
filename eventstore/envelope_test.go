package eventstore

import (
	"testing"
	"time"
	"unsafe"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
)

// nats.go decodes a message's header values as slices of its whole header
// block: a record's envelope copies them, so that a read model keeping an
// event id or an actor keeps that string alone, not the block.
func TestARecordsEnvelopeKeepsNoSliceOfTheHeaderBlock(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	h, err := nats.DecodeHeadersMsg([]byte("NATS/1.0\r\n" + hdrEventID + ": e1\r\n" + hdrCommandID + ": c1\r\n" +
		hdrCorrelationID + ": r1\r\n" + hdrCausationID + ": k1\r\n" + hdrActor + ": client:tms\r\n" + hdrTenant + ": acme\r\n" +
		hdrClientIP + ": 192.0.2.1\r\n" + hdrType + ": Step\r\n" + hdrSchemaVersion + ": 1\r\n" +
		hdrOccurredAt + ": 2026-11-27T10:00:00Z\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.recordFrom(s.subject(domain.Aggregate{Type: "quote", ID: "q1"}), 1, time.Time{}, h, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for key, got := range map[string]string{hdrEventID: r.EventID, hdrCommandID: r.CommandID, hdrCorrelationID: r.CorrelationID,
		hdrCausationID: r.CausationID, hdrActor: r.Actor, hdrTenant: r.Tenant, hdrClientIP: r.ClientIP} {
		if decoded := h.Get(key); got != decoded || unsafe.StringData(got) == unsafe.StringData(decoded) {
			t.Errorf("%s = %q, the decoded %q itself: want a copy of it", key, got, decoded)
		}
	}
}
