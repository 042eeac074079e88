package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

type auditLog struct {
	Logs []struct {
		ID, Action, Resource, ResourceID, UserID, IPAddress string
		Details                                             *auditDetails
	}
	Pagination struct{ Total int }
}

type auditDetails struct{ Field, OldValue, NewValue string }

func TestAuditLog(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	lh := s.demoToken(t, "demo-airline-lh")
	// A create and an update: a rate card set twice, the second time
	// with another minimum charge.
	card := map[string]any{"currency": "EUR", "minimumCharge": 60, "weightBreaks": map[string]any{"N": 2.5}, "validFrom": "2026-01-01", "validTo": "2099-12-31"}
	for _, min := range []int{60, 80} {
		card["minimumCharge"] = min
		if r := s.do(t, request{method: "PUT", path: "/api/rates/FRA/LHR", token: lh, body: card}); r.status != 200 {
			t.Fatalf("rate card: %d %s", r.status, r.body)
		}
	}
	// A failed login, tried again in other cases: a username ignores
	// case, and the failures against one user are folded into one entry
	// under its name.
	for _, name := range []string{"forwarder", "Forwarder", "FORWARDER"} {
		s.do(t, request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "password", "username": name, "password": "wrong"}})
	}
	// A failed login under a name no client can have is recorded under
	// its first 256 characters: the audit log keeps everything.
	long := strings.Repeat("z", 60000)
	if r := s.do(t, request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "client_credentials", "clientId": long, "clientSecret": "x"}}); r.status != 401 {
		t.Errorf("a login with a 60 000-character client id = %d", r.status)
	}
	// A forbidden attempt.
	s.do(t, request{method: "POST", path: "/api/quotes", token: lh, body: rfq()})

	var log auditLog
	s.do(t, request{method: "GET", path: "/api/audit-logs?resource=ratecard&userId=client:demo-airline-lh", token: lh}).json(t, &log)
	var create, update bool
	for _, e := range log.Logs {
		if e.UserID != "client:demo-airline-lh" || e.IPAddress != "127.0.0.1" || e.ResourceID != "LH-FRA-LHR" {
			t.Errorf("entry = %+v", e)
		}
		create = create || e.Action == "create"
		if e.Action == "update" && e.Details != nil && e.Details.Field == "minimumCharge" {
			update = e.Details.OldValue == "60" && e.Details.NewValue == "80"
		}
	}
	if !create || !update {
		t.Errorf("rate card entries = %+v", log.Logs)
	}

	admin := s.demoToken(t, "demo-admin")
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=login.failed", token: admin}).json(t, &log)
	failed := map[string]bool{}
	for _, e := range log.Logs {
		failed[e.ResourceID] = e.IPAddress == "127.0.0.1"
	}
	if len(log.Logs) != 2 || !failed["user:forwarder"] || !failed["client:"+long[:192]+"…"] {
		t.Errorf("failed logins = %d entries, of %d names", len(log.Logs), len(failed))
	}
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=access.denied&userId=client:demo-airline-lh", token: admin}).json(t, &log)
	if len(log.Logs) != 1 || !strings.Contains(log.Logs[0].Details.NewValue, "POST /api/quotes") {
		t.Errorf("forbidden attempts = %+v", log.Logs)
	}
	// A failed login against the airline's own client is the airline's to see.
	s.do(t, request{method: "POST", path: "/api/auth/token", body: map[string]string{"grantType": "client_credentials", "clientId": "demo-airline-lh", "clientSecret": "guess"}})
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=login.failed", token: lh}).json(t, &log)
	if len(log.Logs) != 1 || log.Logs[0].ResourceID != "client:demo-airline-lh" {
		t.Errorf("the airline's failed logins = %+v", log.Logs)
	}
	// What others do to the forwarder's resources is in its log: here an
	// admin deleting its webhook, without the admin's address, as the
	// change of the webhook's status.
	fwd := s.demoToken(t, "demo-forwarder")
	var hook struct{ WebhookID string }
	s.mustCreate(t, fwd, "/api/webhooks", map[string]any{"url": "https://127.0.0.1:9/hooks", "events": []string{"quote.*"}}).json(t, &hook)
	if r := s.do(t, request{method: "DELETE", path: "/api/webhooks/" + hook.WebhookID, token: admin}); r.status != 204 {
		t.Fatalf("the admin deletes the webhook: %d %s", r.status, r.body)
	}
	s.do(t, request{method: "GET", path: "/api/audit-logs?resource=webhook&userId=client:demo-admin", token: fwd}).json(t, &log)
	if len(log.Logs) == 0 || log.Logs[0].ResourceID != hook.WebhookID || log.Logs[0].IPAddress != "" || log.Logs[0].Details == nil ||
		*log.Logs[0].Details != (auditDetails{Field: "status", OldValue: "active", NewValue: "deleted"}) {
		t.Errorf("the admin's deletion in the forwarder's log = %+v", log.Logs)
	}
	// A forwarder sees none of the airline's entries.
	s.do(t, request{method: "GET", path: "/api/audit-logs?resource=ratecard", token: s.demoToken(t, "demo-forwarder")}).json(t, &log)
	if log.Pagination.Total != 0 {
		t.Errorf("the forwarder sees %d rate card entries", log.Pagination.Total)
	}
	if r := s.do(t, request{method: "GET", path: "/api/audit-logs?from=yesterday", token: admin}); r.status != 400 {
		t.Errorf("from=yesterday = %d", r.status)
	}
}

func TestUsageCountsSurviveARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	tok := s.demoToken(t, "demo-forwarder")
	const n = 7
	for range n {
		s.do(t, request{method: "GET", path: "/api/flights?limit=1", token: tok})
	}
	type usage struct {
		TotalRequests      int
		RequestsByEndpoint map[string]int
		RequestsByStatus   map[string]int
		RateLimits         struct{ RequestsPerMinute, RequestsPerHour, RequestsPerDay int }
	}
	var u usage
	s.do(t, request{method: "GET", path: "/api/usage", token: tok}).json(t, &u)
	if u.RequestsByEndpoint["/api/flights"] != n || u.RateLimits.RequestsPerMinute != 1000000 { // the harness raises the default
		t.Errorf("usage = %+v", u)
	}
	s.stop()

	s = startServer(t, dir, nil)
	tok = s.demoToken(t, "demo-forwarder")
	s.do(t, request{method: "GET", path: "/api/usage?groupBy=status&period=week", token: tok}).json(t, &u)
	if u.RequestsByEndpoint["/api/flights"] != n || u.RequestsByStatus["200"] < n+1 {
		t.Errorf("after a restart, usage = %+v", u)
	}
	if r := s.do(t, request{method: "GET", path: "/api/usage?organizationId=demo-airline-lh", token: tok}); r.status != http.StatusForbidden {
		t.Errorf("a forwarder reading another's usage = %d", r.status)
	}
	if r := s.do(t, request{method: "GET", path: "/api/usage?organizationId=demo-forwarder", token: s.demoToken(t, "demo-admin")}); r.status != 200 {
		t.Errorf("an admin reading a forwarder's usage = %d", r.status)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	if r := s.do(t, request{method: "PUT", path: "/api/admin/organizations/demo-forwarder/rate-limits", token: admin,
		body: map[string]any{"requestsPerMinute": 5}}); r.status != 200 {
		t.Fatalf("set limits = %d %s", r.status, r.body)
	}
	tok := s.demoToken(t, "demo-forwarder")
	var last response
	for i := range 6 {
		last = s.do(t, request{method: "GET", path: "/api/flights?limit=1", token: tok})
		if i < 5 && last.status != 200 {
			t.Fatalf("request %d = %d", i+1, last.status)
		}
	}
	if last.status != http.StatusTooManyRequests || last.apiError(t).Error != "rate_limited" || last.header.Get("Retry-After") == "" ||
		!strings.Contains(last.header.Get("RateLimit-Policy"), `"minute";q=5;w=60`) || !strings.HasPrefix(last.header.Get("RateLimit"), `"minute";r=0`) {
		t.Errorf("sixth request = %d %v %s", last.status, last.header, last.body)
	}
	// Another organisation is not affected.
	if r := s.do(t, request{method: "GET", path: "/api/flights?limit=1", token: s.demoToken(t, "demo-airline-ek")}); r.status != 200 {
		t.Errorf("another organisation = %d", r.status)
	}
	if r := s.do(t, request{method: "PUT", path: "/api/admin/organizations/demo-forwarder/rate-limits", token: admin,
		body: map[string]any{"requestsPerMinute": -1}}); r.status != 400 {
		t.Errorf("negative limit = %d", r.status)
	}
}

// Two forwarders' ranges of one prefix are guarded by one aggregate; each
// forwarder's audit log shows its own allocations, and nothing of the
// other's.
func TestAForwardersAuditLogShowsNothingOfAnothersStock(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	other := s.forwarders(t, 1)[0] // organisation uploader-0
	fwd := s.demoToken(t, "demo-forwarder")
	mine := s.approvedStock(t, fwd, "020", 10, "", "")
	theirs := s.approvedStock(t, other, "020", 10, "", "")
	s.approvedStock(t, fwd, "020", 5, "", "")
	for _, tt := range []struct {
		name, token, own string
		secrets          []string
	}{
		// Ranges are allocated from the lowest free serial: the demo
		// forwarder's 1–10, the other's 11–20, the demo forwarder's 21–25.
		{"the demo forwarder", fwd, mine, []string{"uploader-0", theirs, `"first":11,`}},
		{"the other forwarder", other, theirs, []string{"demo-forwarder", mine, `"first":1,`, `"first":21,`}},
	} {
		var log auditLog
		s.do(t, request{method: "GET", path: "/api/audit-logs?resource=awbprefix", token: tt.token}).json(t, &log)
		if len(log.Logs) == 0 {
			t.Errorf("%s sees no entry of the prefix's ranges", tt.name)
		}
		for _, e := range log.Logs {
			for _, secret := range tt.secrets {
				if d := e.Details; d != nil && (strings.Contains(d.OldValue, secret) || strings.Contains(d.NewValue, secret)) {
					t.Errorf("%s sees %q in %s %s: %+v", tt.name, secret, e.Action, e.ID, *d)
				}
			}
		}
	}
}

// Failed logins the audit log folded, with none after them to carry their
// count, are recorded at the stop: five wrong passwords read as two
// records, the second saying how many more there were, where they read as
// the first alone.
func TestFailedLoginsFoldedWithNoneAfterThemAreRecordedAtTheStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	for range 5 {
		if r := s.do(t, request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "password", "username": "forwarder", "password": "wrong"}}); r.status != http.StatusUnauthorized {
			t.Fatalf("a wrong password = %d %s", r.status, r.body)
		}
	}
	s.stop()
	again := startServer(t, dir, nil)
	var log auditLog
	again.do(t, request{method: "GET", path: "/api/audit-logs?action=login.failed&userId=user:forwarder", token: again.demoToken(t, "demo-admin")}).json(t, &log)
	var details []string
	for _, e := range log.Logs {
		if e.Details != nil {
			details = append(details, e.Details.NewValue)
		}
	}
	if len(log.Logs) != 2 || !slices.ContainsFunc(details, func(d string) bool { return strings.HasSuffix(d, "(and 3 more like it before)") }) {
		t.Errorf("the failed logins are %d entries, saying %q; want 2, one with the 3 more", len(log.Logs), details)
	}
}

// Behind a load balancer the operator trusts (CARGO_TRUSTED_PROXIES), the
// audit log records the client's address it forwarded, not its own; a
// client that claims another address in front of it is not believed.
func TestTheAuditLogRecordsTheClientBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_TRUSTED_PROXIES": "127.0.0.0/8"})
	for _, forwarded := range []string{"198.51.100.7", "203.0.113.66, 198.51.100.8"} {
		s.do(t, request{method: "POST", path: "/api/auth/token", header: map[string]string{"X-Forwarded-For": forwarded},
			body: map[string]string{"grantType": "password", "username": "forwarder", "password": "wrong"}})
	}
	var log auditLog
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=login.failed", token: s.demoToken(t, "demo-admin")}).json(t, &log)
	var got []string
	for _, e := range log.Logs {
		got = append(got, e.IPAddress)
	}
	if slices.Sort(got); !slices.Equal(got, []string{"198.51.100.7", "198.51.100.8"}) {
		t.Errorf("failed logins recorded from %q, want the forwarded clients 198.51.100.7 and 198.51.100.8", got)
	}
}

// A usage period's dates are checked each once: a date that does not
// parse is its own field's problem, not also the other's for being out of
// range.
func TestAUsagePeriodWithAMalformedDateNamesThatDateOnly(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	s.runCases(t, "GET", []apiCase{
		{name: "a malformed from", token: fwd, path: "/api/usage?from=yesterday", status: 400, fields: "from:INVALID_DATE"},
		{name: "a malformed to", token: fwd, path: "/api/usage?to=2026-13-01", status: 400, fields: "to:INVALID_DATE"},
		{name: "both malformed", token: fwd, path: "/api/usage?from=x&to=y", status: 400, fields: "from:INVALID_DATE to:INVALID_DATE"},
		{name: "to before from", token: fwd, path: "/api/usage?from=2026-11-02&to=2026-11-01", status: 400, fields: "to:INVALID_DATE"},
		// A date left out is today: the problem is the one sent.
		{name: "from after today, to left out", token: fwd, path: "/api/usage?from=2099-12-01", status: 400, fields: "from:INVALID_DATE"},
		{name: "to long before today, from left out", token: fwd, path: "/api/usage?to=2020-11-01", status: 400, fields: "to:INVALID_DATE"},
		{name: "a period and dates", token: fwd, path: "/api/usage?period=week&from=2026-11-01&to=2026-11-02", status: 400, fields: "period:INVALID_VALUE"},
	})
	today := time.Now().UTC().Format(time.DateOnly)
	e := s.do(t, request{method: "GET", path: "/api/usage?from=2099-12-01", token: fwd}).apiError(t)
	if want := "must be from 0 to 366 days before to (left out: today, " + today + ")"; len(e.ValidationErrors) != 1 || e.ValidationErrors[0].Message != want {
		t.Errorf("a from after today = %+v, want %q", e.ValidationErrors, want)
	}
}

// organizationId on the usage endpoint is an id: one no organisation can
// have is INVALID_FORMAT, as the OpenAPI pattern says, not a search that
// finds nothing.
func TestAUsageOrganizationIDNoOrganisationCanHaveIsInvalidFormat(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	s.runCases(t, "GET", []apiCase{
		{name: "a dot", token: admin, path: "/api/usage?organizationId=demo.forwarder", status: 400, fields: "organizationId:INVALID_FORMAT"},
		{name: "a space", token: admin, path: "/api/usage?organizationId=demo%20forwarder", status: 400, fields: "organizationId:INVALID_FORMAT"},
		{name: "well formed but unknown", token: admin, path: "/api/usage?organizationId=nobody", status: 404},
	})
}

// An audit log filter that no entry can have (a resource by its name in
// the API rather than in the log) is refused, naming the values accepted,
// rather than answered with an empty log, as if nothing had happened.
func TestAnAuditLogFilterNoEntryCanHaveIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	s.runCases(t, "GET", []apiCase{
		{name: "a resource by its API name", token: admin, path: "/api/audit-logs?resource=awbStockRequest", status: 400, fields: "resource:INVALID_VALUE"},
		{name: "an action no entry has", token: admin, path: "/api/audit-logs?action=delete", status: 400, fields: "action:INVALID_VALUE"},
		{name: "both", token: admin, path: "/api/audit-logs?action=created&resource=quotes", status: 400, fields: "action:INVALID_VALUE resource:INVALID_VALUE"},
	})
	for _, path := range []string{"/api/audit-logs?resource=stockrequest", "/api/audit-logs?resource=authorization&action=token.issued"} {
		if r := s.do(t, request{method: "GET", path: path, token: admin}); r.status != 200 {
			t.Errorf("%s = %d %s", path, r.status, r.body)
		}
	}
	e := s.do(t, request{method: "GET", path: "/api/audit-logs?resource=awbStockRequest", token: admin}).apiError(t)
	if len(e.ValidationErrors) != 1 || !strings.Contains(e.ValidationErrors[0].Message, "stockrequest") || !strings.Contains(e.ValidationErrors[0].Message, "authorization") {
		t.Errorf("the refusal = %+v, want it to name the resources accepted", e)
	}
}

// Every endpoint reads a query parameter once, but a set of ids
// (eventId): one given twice is refused, where the first would have won.
func TestAQueryParameterGivenTwiceIsRefusedOnEveryEndpoint(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	s.runCases(t, "GET", []apiCase{
		{name: "a quote filter", token: admin, path: "/api/quotes?status=priced&status=rejected", status: 400, fields: "status:DUPLICATE"},
		{name: "a flight filter", token: admin, path: "/api/flights?origin=FRA&origin=JFK&date=2026-11-28", status: 400, fields: "origin:DUPLICATE"},
		{name: "two reference filters", token: admin, path: "/api/airports?country=DE&country=FR&name=a&name=b", status: 400,
			fields: "country:DUPLICATE name:DUPLICATE"},
	})
}

func TestAnAuditLogParameterGivenTwiceIsRefusedAndABoundAtTheZeroTimeIsABound(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	s.runCases(t, "GET", []apiCase{
		{name: "a page given twice", token: admin, path: "/api/audit-logs?page=2&page=5", status: 400, fields: "page:DUPLICATE"},
		{name: "a limit given twice, the second out of range", token: admin, path: "/api/audit-logs?limit=1&limit=1000", status: 400, fields: "limit:DUPLICATE"},
		{name: "an action given twice, the second no entry has", token: admin, path: "/api/audit-logs?action=create&action=delete", status: 400,
			fields: "action:DUPLICATE"},
		{name: "a resource and a user given twice", token: admin, path: "/api/audit-logs?resource=quote&resource=&userId=a&userId=b", status: 400,
			fields: "resource:DUPLICATE userId:DUPLICATE"},
		{name: "a from given twice", token: admin, path: "/api/audit-logs?from=2026-11-28&from=2020-01-01", status: 400, fields: "from:DUPLICATE"},
		{name: "to at the zero time, before from", token: admin, path: "/api/audit-logs?from=2026-01-01&to=0001-01-01", status: 400, fields: "to:INVALID_DATE"},
		{name: "a from finer than a nanosecond", token: admin, path: "/api/audit-logs?from=2026-11-28T10:00:00.1234567890Z", status: 400,
			fields: "from:INVALID_DATE"},
		{name: "a userId that is not UTF-8 once decoded", token: admin, path: "/api/audit-logs?userId=%FF", status: 400, fields: "userId:INVALID_FORMAT"},
	})
	e := s.do(t, request{method: "GET", path: "/api/audit-logs?from=2026-11-28T10:00:00+01:00", token: admin}).apiError(t)
	if len(e.ValidationErrors) != 1 || e.ValidationErrors[0].Field != "from" || e.ValidationErrors[0].Code != "INVALID_DATE" ||
		!strings.Contains(e.ValidationErrors[0].Message, "write the offset's + as %2B") {
		t.Errorf("the refusal of an offset's + sent as a space = %+v, want it to say to write %%2B", e)
	}
	for _, tt := range []struct {
		query string
		none  bool
	}{
		{"to=0001-01-01", true},
		{"to=0001-01-01T00:00:00Z", true},
		{"from=0001-01-01", false},
		{"from=2026-11-28T10:00:00%2B01:00&to=9999-12-31", false},
	} {
		var page struct{ Pagination struct{ Total int } }
		if r := s.do(t, request{method: "GET", path: "/api/audit-logs?" + tt.query, token: admin}); r.status != 200 {
			t.Errorf("%s = %d %s", tt.query, r.status, r.body)
		} else if r.json(t, &page); (page.Pagination.Total == 0) != tt.none {
			t.Errorf("%s: %d entries, want none: %v", tt.query, page.Pagination.Total, tt.none)
		}
	}
}

// A client with IPv6 has a /64 to send from (RFC 6177): a new source
// address for each try must not buy it new guessing limits, nor an audit
// record for each refused request. The addresses of one /64 are counted
// as one.
func TestTheAddressesOfOneIPv6SubnetAreCountedAsOneClient(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_TRUSTED_PROXIES": "127.0.0.0/8"})
	from := func(i int) map[string]string {
		return map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:1:2::%x", i+1)}
	}
	guess := func(i int) response {
		return s.do(t, request{method: "POST", path: "/api/auth/token", header: from(i),
			body: map[string]string{"grantType": "password", "username": "forwarder", "password": "wrong guess " + strconv.Itoa(i)}})
	}
	startOfAMinute(t, 20*time.Second)
	for i := range 20 {
		if r := guess(i); r.status != http.StatusUnauthorized {
			t.Fatalf("guess %d = %d %s, want 401", i+1, r.status, r.body)
		}
	}
	if r := guess(20); r.status != http.StatusTooManyRequests {
		t.Errorf("the 21st guess at one name from the /64, from an address of its own = %d %s, want 429", r.status, r.body)
	} else if msg := r.apiError(t).ErrorDescription; !strings.Contains(msg, "for user:forwarder from 2001:db8:1:2::/64;") {
		t.Errorf("the refusal says %q, want it to name the /64 counted", msg)
	}
	for i := range 2 {
		if r := s.do(t, request{method: "GET", path: "/api/airports", header: from(100 + i)}); r.status != http.StatusUnauthorized {
			t.Fatalf("a request without credentials = %d %s", r.status, r.body)
		}
	}
	var log auditLog
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=token.rejected", token: s.demoToken(t, "demo-admin")}).json(t, &log)
	if len(log.Logs) != 1 {
		t.Errorf("requests without credentials from two addresses of one /64 recorded %d times within a minute, want once: %+v", len(log.Logs), log.Logs)
	}
}

// An admin asks for one organisation's audit log as for its usage, with
// organizationId, and gets that organisation's log: the entries it sees
// itself. The parameter was not read, so such a page was every
// organisation's, handed on as one tenant's.
func TestAnAdminReadsOneOrganisationsAuditLogByItsID(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin, fwd := s.demoToken(t, "demo-admin"), s.demoToken(t, "demo-forwarder")
	s.demoToken(t, "demo-airline-lh")
	var own, asked auditLog
	s.do(t, request{method: "GET", path: "/api/audit-logs?limit=100", token: fwd}).json(t, &own)
	s.do(t, request{method: "GET", path: "/api/audit-logs?limit=100&organizationId=demo-forwarder", token: admin}).json(t, &asked)
	if asked.Pagination.Total != own.Pagination.Total || len(asked.Logs) != len(own.Logs) {
		t.Fatalf("the forwarder's log as an admin asked for it has %d entries, as the forwarder reads it %d", asked.Pagination.Total, own.Pagination.Total)
	}
	for i := range own.Logs {
		if asked.Logs[i].ID != own.Logs[i].ID {
			t.Errorf("entry %d = %s as the admin asked for it, %s as the forwarder reads it", i, asked.Logs[i].ID, own.Logs[i].ID)
		}
	}
	if r := s.do(t, request{method: "GET", path: "/api/audit-logs?organizationId=demo-forwarder", token: fwd}); r.status != 200 {
		t.Errorf("the forwarder naming its own organisation = %d %s", r.status, r.body)
	}
	s.runCases(t, "GET", []apiCase{
		{name: "another organisation's, not an admin", token: fwd, path: "/api/audit-logs?organizationId=demo-airline-lh", status: 403},
		{name: "an organisation that does not exist", token: admin, path: "/api/audit-logs?organizationId=nobody", status: 404},
		{name: "no organisation's id", token: admin, path: "/api/audit-logs?organizationId=demo.forwarder", status: 400, fields: "organizationId:INVALID_FORMAT"},
	})
}
