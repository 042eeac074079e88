package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
)

// createOrganizations creates organisations org-<from> to org-<to-1>,
// eight at a time.
func createOrganizations(ctx context.Context, t *testing.T, cmds *commands.Handler, from, to int) {
	var wg sync.WaitGroup
	ids := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range ids {
				meta := commands.NewMeta(domain.Principal{Subject: "system:test"}, "", "")
				_, err := cmds.CreateOrganization(ctx, meta, domain.CreateOrganization{OrganizationID: fmt.Sprint("org-", i), Name: "Org", Role: domain.RoleForwarder})
				if err != nil && ctx.Err() == nil {
					t.Error(err)
				}
			}
		})
	}
	for i := from; i < to && ctx.Err() == nil; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
}

// adminToken is a bearer token of the admin client.
func adminToken(t *testing.T, url string) map[string]string {
	t.Helper()
	status, body := send(t, url, "/api/auth/token", nil, `{"grantType":"client_credentials","clientId":"admin","clientSecret":"`+adminSecret+`"}`)
	token, _ := body["accessToken"].(string)
	if status != http.StatusOK || token == "" {
		t.Fatalf("token: %d %v", status, body)
	}
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestRebuildOnARunningServerKeepsReadsAnsweringAndEndsEqualToAFreshReplay(t *testing.T) {
	svc := startService(t)
	ctx := context.Background()
	const seeded = 400
	createOrganizations(ctx, t, svc.cmds, 0, seeded)
	auth := adminToken(t, svc.url)
	for deadline := time.Now().Add(time.Minute); ; {
		_, body := send(t, svc.url, "/api/admin/organizations", auth, "")
		if orgs, _ := body["organizations"].([]any); len(orgs) == seeded+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read models did not show the %d organisations within a minute", seeded+1)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// While the rebuild runs, a reader lists the organisations: every
	// answer is 200 and never holds fewer than the one before (a swap of
	// models caught up short would lose some), and a writer adds more.
	busy, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var reads, failures int
	wg.Go(func() {
		seen := 0
		for busy.Err() == nil {
			status, body := send(t, svc.url, "/api/admin/organizations", auth, "")
			orgs, _ := body["organizations"].([]any)
			if status != http.StatusOK || len(orgs) < max(seen, seeded+1) {
				failures++
				t.Errorf("a read during the rebuild: %d with %d organisations, after %d", status, len(orgs), seen)
				continue
			}
			seen = len(orgs)
			reads++
		}
	})
	wg.Go(func() { createOrganizations(busy, t, svc.cmds, seeded, 1_000_000) })

	out, errOut, err := runCmd(t, adminEnv(svc.url), "rebuild")
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("rebuild: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "read models rebuilt: ") || !strings.Contains(errOut, "rebuild: done: ") {
		t.Errorf("rebuild printed\n%s\nand on stderr\n%s", out, errOut)
	}
	t.Logf("%d reads during the rebuild; it printed %q and %q", reads, out, errOut)
	if reads == 0 || failures > 0 {
		t.Errorf("%d reads answered during the rebuild, %d failed", reads, failures)
	}

	out, errOut, err = runCmd(t, adminEnv(svc.url), "verify")
	if err != nil || out != "" || !strings.Contains(errOut, "verified: every event up to sequence") {
		t.Errorf("verify after the rebuild: %v\n%s\n%s", err, out, errOut)
	}
}

func TestVerifyNamesAReadModelThatDiffersFromAFreshReplay(t *testing.T) {
	svc := startService(t)
	// A quote the stream never had, as a bug in a read model would keep.
	svc.quotes.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: "ghost"}, Sequence: 1},
		domain.QuoteRequested{QuoteID: "ghost", OrganizationID: "operator"})
	out, _, err := runCmd(t, adminEnv(svc.url), "verify")
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "fields of read models that differ from a fresh replay") {
		t.Errorf("verify of a corrupted read model ended with %v", err)
	}
	if want := `read model Quotes.byID["ghost"]: not in a fresh replay`; !strings.Contains(out, want) {
		t.Errorf("verify printed\n%s\nwant a line %s", out, want)
	}

	out, _, err = runCmd(t, adminEnv(svc.url), "verify", "--json")
	got := decode(t, out)
	if diffs, _ := got["readModelDifferences"].([]any); err == nil || got["state"] != "failed" || len(diffs) == 0 {
		t.Errorf("verify --json of a corrupted read model: %v\n%s", err, out)
	}

	// A rebuild replaces it with a fresh replay.
	if _, errOut, err := runCmd(t, adminEnv(svc.url), "rebuild"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, errOut)
	}
	if out, _, err := runCmd(t, adminEnv(svc.url), "verify"); err != nil {
		t.Errorf("verify after the rebuild: %v\n%s", err, out)
	}
}

func TestVerifyListsEventsThatDoNotDecodeOrHaveNoWholeEnvelope(t *testing.T) {
	svc := startService(t)
	ctx := context.Background()
	// Stored around the commands: a payload that is not its type's, and
	// an envelope without its correlation id.
	_, err := svc.store.Append(ctx, domain.Aggregate{Type: domain.AggregateQuote, ID: "bad"}, 0, []domain.Envelope{{
		Type: "QuoteRequested", SchemaVersion: 1, EventID: "bad-1", CommandID: "c1", CorrelationID: "c1", Actor: "system:test",
		OccurredAt: time.Now(), Data: []byte(`{"quoteId": 7}`)}})
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := svc.store.Append(ctx, domain.Aggregate{Type: domain.AggregateQuote, ID: "bare"}, 0, []domain.Envelope{{
		Type: "QuoteRequested", SchemaVersion: 1, EventID: "bare-1", CommandID: "c2", Actor: "system:test",
		OccurredAt: time.Now(), Data: []byte(`{"quoteId": "bare"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, adminEnv(svc.url), "verify")
	// (The test server's reference data, put into its read model directly
	// rather than through the stream, differs from a fresh replay too.)
	if err == nil || !strings.Contains(err.Error(), "verify found 2 problems of events and ") {
		t.Errorf("verify ended with %v", err)
	}
	for _, want := range []string{
		fmt.Sprintf("event %d (quote/bad): decodes: domain: decoding QuoteRequested: json: cannot unmarshal number", seqs[0]-1),
		fmt.Sprintf("event %d (quote/bare): envelope: no Cargo-Correlation-Id header", seqs[0]),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify printed\n%s\nwant a line starting %s", out, want)
		}
	}
}

// The plain progress lines of rebuild and verify (stderr not a terminal)
// come as often as those of a read of the stream, progressEvery: an
// operator watching a log sees every command move at one pace.
func TestRebuildAndVerifyWriteAProgressLineAsOftenAsAReadOfTheStream(t *testing.T) {
	defer func(every time.Duration) { progressEvery = every }(progressEvery)
	for _, tt := range []struct {
		name  string
		every time.Duration
		lines int
	}{
		{"every poll when progressEvery has passed since the last line", 0, 3},
		{"the first only while progressEvery has not passed and the phase is the same", time.Hour, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			progressEvery = tt.every
			var buf strings.Builder
			bar := newProgressBar(&buf, "rebuild")
			for done := range uint64(3) {
				bar.show(job{State: "running", Phase: "replaying", EventsDone: done, EventsTotal: 10})
			}
			if got := strings.Count(buf.String(), "\n"); got != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", got, tt.lines, buf.String())
			}
		})
	}
}

// Interrupted while it follows a job, cargoctl says that the job goes on
// in cargod, and where to follow it, in its own words.
func TestAnInterruptedRebuildSaysTheJobGoesOnInCargod(t *testing.T) {
	polled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/auth/token":
			fmt.Fprint(w, `{"accessToken":"t","tokenType":"Bearer","expiresIn":3600}`)
		case r.URL.Path == "/api/admin/rebuild":
			if r.Method == http.MethodGet {
				select {
				case polled <- struct{}{}:
				default:
				}
			}
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"state":"running","phase":"replaying"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx, interrupt := context.WithCancel(context.Background())
	go func() { <-polled; interrupt() }()
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"rebuild"}, adminEnv(srv.URL), &out, &errOut)
	if want := "interrupted: the rebuild goes on in cargod, if it began (GET /api/admin/rebuild shows it)"; err == nil || err.Error() != want {
		t.Errorf("interrupted, rebuild says %v, want %s", err, want)
	}
}

// A job ends with the cargod that runs it. One that stops answering once
// the job began (stopped, or restarted) leaves cargoctl with the words of
// a server that does not answer, and with what they mean for the job,
// where they said nothing of it: whether it was swapped in, or verified,
// was left to guess. The real API is behind a proxy that stops taking
// connections once it has passed the job's start on.
func TestAJobWhoseCargodStopsAnsweringSaysTheJobEndsWithIt(t *testing.T) {
	api := startServer(t)
	for _, kind := range []string{"rebuild", "verify"} {
		t.Run(kind, func(t *testing.T) {
			proxy := proxyTo(t, api)
			var front *httptest.Server
			front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				proxy.ServeHTTP(w, r)
				if r.Method == http.MethodPost && r.URL.Path == "/api/admin/"+kind {
					// Close waits for this answer to be written.
					go front.Close()
				}
			}))
			t.Cleanup(front.Close)
			_, _, err := runCmd(t, adminEnv(front.URL), kind)
			want := fmt.Sprintf("does not answer: connection refused\n(the %s ends with the cargod that runs it", kind)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s whose cargod stopped answering: %v, want %q", kind, err, want)
			}
		})
	}
}

func TestCountedSaysOneOrMany(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 problems"}, {1, "1 problem"}, {2, "2 problems"}} {
		if got := counted(tt.n, "problem", "problems"); got != tt.want {
			t.Errorf("counted(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
