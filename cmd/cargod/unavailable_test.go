package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/nats-io/nats-server/v2/server"
)

// restartableNATS is an external NATS server on a port of its own, which
// start starts (again, on the same files, as a node restarts).
func restartableNATS(t *testing.T) (natsURL string, start func() *server.Server) {
	t.Helper()
	natsPort := natstest.FreePorts(t, 1)[0]
	storeDir := t.TempDir()
	return fmt.Sprintf("nats://127.0.0.1:%d", natsPort), func() *server.Server {
		return natstest.Start(t, &server.Options{Port: natsPort, StoreDir: storeDir})
	}
}

// While NATS is out of reach, every request that needs the store (a write
// or an upload, a history, a past state, a document's file, a page of the
// audit log) is a 503 with Retry-After (nothing stored, a retry is safe),
// never a bare 500; a read the in-memory read models answer is still a
// 200.
func TestEveryEndpointThatNeedsTheStoreIsA503WhileNATSIsAway(t *testing.T) {
	t.Parallel()
	natsURL, startNATS := restartableNATS(t)
	nats := startNATS()
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": natsURL, "CARGO_NATS_REPLICAS": "1",
		"CARGO_DEMO": "true", "CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey, "CARGO_SNAPSHOTS": "false",
		"CARGO_WEBHOOK_ALLOW_PRIVATE": "true"})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: r.base(t), doc: loadDoc(t)}
	fwd, lh, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-admin")

	// Something of every kind to read and change.
	awb := bookedShipment(t, s, fwd)
	var bookings struct{ Bookings []booking }
	s.do(t, request{method: "GET", path: "/api/bookings", token: fwd}).json(t, &bookings)
	if len(bookings.Bookings) != 1 {
		t.Fatalf("bookings = %+v", bookings)
	}
	b := bookings.Bookings[0]
	s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	var stockReq struct{ RequestID string }
	s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": 5, "validityPeriod": 6}).json(t, &stockReq)
	var f struct{ ID string }
	s.mustCreate(t, lh, "/api/flights", shortFlight("LH1600")).json(t, &f)
	var doc struct{ DocumentID string }
	// The airline of the prefix files it, needing no shipment of its own.
	if r := s.upload(t, lh, documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(1000))...); r.status != http.StatusCreated {
		t.Fatalf("upload = %d %s", r.status, r.body)
	} else {
		r.json(t, &doc)
	}
	rc := newReceiver(t)
	hook := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	if r := s.do(t, request{method: "POST", path: "/api/webhooks/" + hook + "/ping", token: fwd}); r.status != http.StatusAccepted {
		t.Fatalf("ping = %d %s", r.status, r.body)
	}
	s.mustCreate(t, fwd, "/api/quotes", rfq())
	type deliveries struct {
		Deliveries []struct{ DeliveryID, EventName string }
	}
	logged := eventually(t, "the ping and the quote's event in the log", func() deliveries {
		var d deliveries
		s.do(t, request{method: "GET", path: "/api/webhooks/" + hook + "/deliveries", token: fwd}).json(t, &d)
		return d
	}, func(d deliveries) bool { return len(d.Deliveries) == 2 })
	delivered := map[string]string{} // event name → delivery
	for _, d := range logged.Deliveries {
		delivered[d.EventName] = d.DeliveryID
	}
	var key struct{ ID string }
	created := s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "demo-forwarder", "name": "to revoke"})
	created.json(t, &key)
	lastWrite := created.header.Get("Cargo-Sequence")
	flightVersion := s.read(t, lh, "/api/flights/"+f.ID).etag
	between := url.QueryEscape(moment())

	nats.Shutdown()
	nats.WaitForShutdown()

	const ok, unavailable = http.StatusOK, http.StatusServiceUnavailable
	screened := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	probes := []struct {
		name   string
		req    request
		status int
	}{
		// Writes.
		{"quote", request{method: "POST", path: "/api/quotes", token: fwd, body: rfq()}, unavailable},
		{"quote with an idempotency key", request{method: "POST", path: "/api/quotes", token: fwd, body: rfq(), header: map[string]string{"Idempotency-Key": "probe-1"}}, unavailable},
		{"flight change with If-Match", request{method: "PATCH", path: "/api/flights/" + f.ID, token: lh, body: map[string]any{"status": "delayed"}, header: map[string]string{"If-Match": flightVersion}}, unavailable},
		{"booking", request{method: "POST", path: "/api/bookings", token: fwd, body: map[string]any{"quoteId": b.QuoteID, "flightId": b.FlightID}}, unavailable},
		{"flight", request{method: "POST", path: "/api/flights", token: lh, body: shortFlight("LH1601")}, unavailable},
		{"flight change", request{method: "PATCH", path: "/api/flights/" + f.ID, token: lh, body: map[string]any{"status": "delayed"}}, unavailable},
		{"rate card", request{method: "PUT", path: "/api/rates/FRA/LHR", token: lh, body: map[string]any{"currency": "EUR", "minimumCharge": 60,
			"weightBreaks": map[string]any{"N": 3.0, "45": 2.5}, "validFrom": "2026-01-01", "validTo": "2099-12-31"}}, unavailable},
		{"stock request", request{method: "POST", path: "/api/awb-stock/requests", token: fwd, body: map[string]any{"airlinePrefix": "020", "requestedStock": 5, "validityPeriod": 6}}, unavailable},
		{"stock reply", request{method: "PUT", path: "/api/awb-stock/reply/" + stockReq.RequestID, token: lh,
			body: map[string]any{"status": "approved", "allocatedStock": 5, "validFrom": today(0), "validTo": today(180)}}, unavailable},
		{"MAWB", request{method: "POST", path: "/api/mawb", token: fwd, body: mawbBody("020-00000022")}, unavailable},
		{"HAWB", request{method: "POST", path: "/api/hawb", token: fwd, body: map[string]any{"hawbNumber": "HAWB1", "mawbNumber": awb, "pieces": 1, "weight": 100,
			"shipper": party("ACME Machine Tools"), "consignee": party("Globex Inc")}}, unavailable},
		{"DGD", request{method: "POST", path: "/api/dangerous-goods", token: fwd, body: dgdBody(awb, nil)}, unavailable},
		{"PLACI", request{method: "POST", path: "/api/placi", token: fwd, body: map[string]any{"awbNumber": awb, "origin": "FRA", "destination": "JFK", "departureDate": tomorrow,
			"cargoDescription": "CNC milling machine spare parts", "shipperName": "ACME Machine Tools", "consigneeName": "Globex Inc"}}, unavailable},
		{"CSD", request{method: "POST", path: "/api/csd", token: fwd, body: map[string]any{"awbNumber": awb, "screeningMethod": "XRY", "screeningDate": screened, "screeningResult": "pass"}}, unavailable},
		{"status event", request{method: "POST", path: "/api/shipments/" + awb + "/events", token: lh,
			body: map[string]any{"eventType": "RCS", "eventDate": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339), "location": "FRA", "pieces": 2}}, unavailable},
		{"manifest", request{method: "POST", path: "/api/flights/" + b.FlightID + "/manifests", token: lh, body: map[string]any{"awbNumbers": []string{awb}}}, unavailable},
		{"offload", request{method: "POST", path: "/api/offloads", token: lh, body: map[string]any{"awbNumber": awb, "flightId": b.FlightID, "reason": "Weight restriction", "pieces": 1, "weight": 100.5}}, unavailable},
		{"cancel", request{method: "POST", path: "/api/bookings/" + b.ID + "/cancel", token: fwd}, unavailable},
		{"webhook", request{method: "POST", path: "/api/webhooks", token: fwd, body: map[string]any{"url": rc.srv.URL + "/hooks", "events": []string{"quote.created"}}}, unavailable},
		{"ping", request{method: "POST", path: "/api/webhooks/" + hook + "/ping", token: fwd}, unavailable},
		{"redelivery of a ping", request{method: "POST", path: "/api/webhooks/" + hook + "/deliveries/" + delivered["webhook.ping"] + "/redeliver", token: fwd}, unavailable},
		// It reads its event from the store.
		{"redelivery of an event", request{method: "POST", path: "/api/webhooks/" + hook + "/deliveries/" + delivered["quote.created"] + "/redeliver", token: fwd}, unavailable},
		{"webhook delete", request{method: "DELETE", path: "/api/webhooks/" + hook, token: fwd}, unavailable},
		{"reference import", request{method: "POST", path: "/api/admin/reference/airports", token: admin, contentType: "text/csv", body: `"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"` + "\n" +
			`"EDXW","GWT","Westerland Sylt Airport","Westerland","Schleswig-Holstein","DE",51,54.91,8.34,"Europe/Berlin",""` + "\n"}, unavailable},
		{"organisation", request{method: "POST", path: "/api/admin/organizations", token: admin, body: map[string]any{"id": "qr-cargo", "name": "QR", "role": "airline", "awbPrefix": "157", "iataCode": "QR"}}, unavailable},
		{"rate limits", request{method: "PUT", path: "/api/admin/organizations/demo-forwarder/rate-limits", token: admin, body: map[string]any{"requestsPerMinute": 5}}, unavailable},
		{"organisation disabled", request{method: "POST", path: "/api/admin/organizations/demo-forwarder/disable", token: admin}, unavailable},
		{"organisation deleted", request{method: "DELETE", path: "/api/admin/organizations/demo-forwarder", token: admin}, unavailable},
		{"client", request{method: "POST", path: "/api/admin/clients", token: admin, body: map[string]any{"organizationId": "demo-forwarder", "clientId": "demo-erp", "clientSecret": "erp-secret-123"}}, unavailable},
		{"client disabled", request{method: "POST", path: "/api/admin/clients/demo-forwarder/disable", token: admin}, unavailable},
		{"client secret", request{method: "POST", path: "/api/admin/clients/demo-forwarder/secret", token: admin}, unavailable},
		{"user", request{method: "POST", path: "/api/admin/users", token: admin, body: map[string]any{"organizationId": "demo-airline-lh", "username": "ops@lh", "password": "a long enough password"}}, unavailable},
		{"user disabled", request{method: "POST", path: "/api/admin/users/forwarder/disable", token: admin}, unavailable},
		{"password", request{method: "PUT", path: "/api/admin/users/forwarder/password", token: admin, body: map[string]any{"password": "another long password"}}, unavailable},
		{"revocation", request{method: "POST", path: "/api/admin/token-revocations", token: admin, body: map[string]string{"subject": "client:demo-airline-ek"}}, unavailable},
		{"API key", request{method: "POST", path: "/api/admin/api-keys", token: admin, body: map[string]any{"organizationId": "demo-forwarder", "name": "another"}}, unavailable},
		{"API key revoked", request{method: "DELETE", path: "/api/admin/api-keys/" + key.ID, token: admin}, unavailable},
		{"token, client credentials", request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}}, unavailable},
		{"token, password", request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "password", "username": "forwarder", "password": "forwarder-password"}}, unavailable},
		{"upload", uploadRequest(lh, documentParts("020-81140743", "INVOICE", "b.pdf", pdfOf(1000))...), unavailable},
		// Reads of the store.
		{"quote history", request{method: "GET", path: "/api/quotes/" + b.QuoteID + "/history", token: fwd}, unavailable},
		{"booking history", request{method: "GET", path: "/api/bookings/" + b.ID + "/history", token: fwd}, unavailable},
		{"stock request history", request{method: "GET", path: "/api/awb-stock/requests/" + stockReq.RequestID + "/history", token: fwd}, unavailable},
		{"shipment history", request{method: "GET", path: "/api/shipments/" + awb + "/history", token: fwd}, unavailable},
		{"flight history", request{method: "GET", path: "/api/flights/" + f.ID + "/history", token: lh}, unavailable},
		{"booking then", request{method: "GET", path: "/api/bookings/" + b.ID + "?at=" + between, token: fwd}, unavailable},
		{"quote then", request{method: "GET", path: "/api/quotes/" + b.QuoteID + "?at=" + between, token: fwd}, unavailable},
		{"shipment then", request{method: "GET", path: "/api/shipments/" + awb + "?at=" + between, token: fwd}, unavailable},
		{"stock request then", request{method: "GET", path: "/api/awb-stock/requests/" + stockReq.RequestID + "?at=" + between, token: fwd}, unavailable},
		{"flight then", request{method: "GET", path: "/api/flights/" + f.ID + "?at=" + between, token: lh}, unavailable},
		{"flight at its sequence", request{method: "GET", path: "/api/flights/" + f.ID + "?seq=" + strings.Trim(flightVersion, `"`), token: lh}, unavailable},
		{"document", request{method: "GET", path: "/api/documents/" + doc.DocumentID, token: lh}, unavailable},
		{"HEAD of the document", request{method: "HEAD", path: "/api/documents/" + doc.DocumentID, token: lh}, unavailable},
		{"usage", request{method: "GET", path: "/api/usage", token: fwd}, unavailable},
		{"audit", request{method: "GET", path: "/api/audit-logs", token: admin}, unavailable},
		// A job of the read models reads the whole stream: not started.
		{"rebuild", request{method: "POST", path: "/api/admin/rebuild", token: admin}, unavailable},
		{"verify", request{method: "POST", path: "/api/admin/verify", token: admin}, unavailable},
		// Reads of the read models.
		{"booking", request{method: "GET", path: "/api/bookings/" + b.ID, token: fwd}, ok},
		{"shipment", request{method: "GET", path: "/api/shipments/" + awb, token: fwd}, ok},
		{"shipment events", request{method: "GET", path: "/api/shipments/" + awb + "/events", token: fwd}, ok},
		{"deliveries", request{method: "GET", path: "/api/webhooks/" + hook + "/deliveries", token: fwd}, ok},
		{"booking at the sequence of a write", request{method: "GET", path: "/api/bookings/" + b.ID, token: fwd, header: map[string]string{"Cargo-Sequence": lastWrite}}, ok},
		{"webhooks", request{method: "GET", path: "/api/webhooks", token: fwd}, ok},
		{"organisations", request{method: "GET", path: "/api/admin/organizations", token: admin}, ok},
		{"API keys", request{method: "GET", path: "/api/admin/api-keys", token: admin}, ok},
	}
	// All at once: one after another, each write waiting out its timeout,
	// they took minutes; and a replica meets an outage with many at once.
	answers := s.doAtOnce(t, len(probes), func(i int) request { return probes[i].req })
	for i, tt := range probes {
		t.Run(tt.name, func(t *testing.T) {
			got := answers[i]
			if got.status != tt.status || tt.status == unavailable && got.header.Get("Retry-After") == "" {
				t.Errorf("%s %s = %d, Retry-After %q: %s", tt.req.method, tt.req.path, got.status, got.header.Get("Retry-After"), got.body)
			}
		})
	}
	// Back, and the replica with it, so that it stops as it should.
	startNATS()
	eventually(t, "a read of the store once NATS is back", func() int {
		return s.do(t, request{method: "GET", path: "/api/bookings/" + b.ID + "/history", token: fwd}).status
	}, func(status int) bool { return status == http.StatusOK })
}

// A cluster that has lost two of its three nodes has no leader: every
// write is a 503 with Retry-After, as while NATS is away, never a 500; so
// is a token request, which waits for the read models to hold the whole
// stream (a node without a leader answers with its own copy's end, which
// may lack a revocation: a token was granted so after some seconds).
// (A leader cut off from the others goes on answering for some seconds,
// from a copy that is complete: a token it leads to is granted rightly.)
func TestEveryWriteIsA503WhileTheClusterHasNoLeader(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t)
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": c.URL(), "CARGO_NATS_REPLICAS": "3", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey, "CARGO_SNAPSHOTS": "false"})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: r.base(t), doc: loadDoc(t)}
	fwd, lh, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-admin")
	s.mustCreate(t, fwd, "/api/quotes", rfq())

	// The node left is a follower, and the leader goes last, so that the
	// follower is never elected (two nodes of three would elect it).
	leader := streamLeader(t, c)
	kept := streamFollower(t, c, leader)
	for _, last := range []bool{false, true} {
		for _, n := range c.Nodes {
			if n.Name() != kept && (n.Name() == leader) == last {
				n.Shutdown()
				n.WaitForShutdown()
			}
		}
	}
	// On a loaded machine, the leader may have moved to the node kept
	// before the others stopped: it then goes on answering as the
	// stream's leader, from a copy that holds every acknowledged write,
	// until it sees that it has lost its quorum and steps down.
	for _, n := range c.Nodes {
		if n.Name() == kept {
			eventually(t, "the node left not leading the stream", func() bool { return n.JetStreamIsStreamLeader("$G", "CARGO") },
				func(leads bool) bool { return !leads })
		}
	}
	// Until the node left answers for the stream from its own copy: then
	// /readyz answers ready again (the read models hold all of that copy,
	// and reads are answered well), and only then could a token be
	// granted on it.
	eventually(t, "the follower answering for a stream without a leader", func() (r struct{ Status, Reason string }) {
		s.do(t, request{method: "GET", path: "/readyz", token: admin}).json(t, &r)
		return r
	}, func(r struct{ Status, Reason string }) bool { return r.Status == "ready" })
	probes := []struct {
		name string
		req  request
	}{
		{"quote", request{method: "POST", path: "/api/quotes", token: fwd, body: rfq()}},
		{"quote with an idempotency key", request{method: "POST", path: "/api/quotes", token: fwd, body: rfq(), header: map[string]string{"Idempotency-Key": "probe-1"}}},
		{"flight", request{method: "POST", path: "/api/flights", token: lh, body: shortFlight("LH1700")}},
		{"API key", request{method: "POST", path: "/api/admin/api-keys", token: admin, body: map[string]any{"organizationId": "demo-forwarder", "name": "another"}}},
		{"stock request", request{method: "POST", path: "/api/awb-stock/requests", token: fwd, body: map[string]any{"airlinePrefix": "020", "requestedStock": 5, "validityPeriod": 6}}},
		{"token, client credentials", request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}}},
		{"token, password", request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "password", "username": "forwarder", "password": "forwarder-password"}}},
	}
	// All at once: one after another, each write waiting out its timeout,
	// they took minutes; and a replica meets an outage with many at once.
	answers := s.doAtOnce(t, len(probes), func(i int) request { return probes[i].req })
	for i, tt := range probes {
		t.Run(tt.name, func(t *testing.T) {
			got := answers[i]
			if got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") == "" {
				t.Errorf("%s %s = %d, Retry-After %q: %s", tt.req.method, tt.req.path, got.status, got.header.Get("Retry-After"), got.body)
			}
		})
	}
}
