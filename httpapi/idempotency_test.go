package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/webhooks"
	"github.com/nats-io/nats-server/v2/server"
)

func TestAnIdempotencyKeyLeftByACrashedRequestIsTakenOverInSeconds(t *testing.T) {
	ctx := t.Context()
	bucket, err := storetest.Open(t).Bucket(ctx, "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{responses: bucket}
	for i, tt := range []struct {
		name    string
		started time.Duration // before now
		hash    string
		takes   bool
	}{
		{"a request under way keeps its key", 2 * time.Second, "h1", false},
		{"a request gone for longer than abandonedAfter loses it", abandonedAfter + time.Second, "h1", true},
		{"a repeat with another body never takes it", abandonedAfter + time.Second, "h2", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprint("key-", i)
			crashed, _ := json.Marshal(storedResponse{RequestHash: "h1", Pending: true, Nonce: "n", StartedAt: time.Now().Add(-tt.started)})
			if err := bucket.Put(ctx, key, crashed); err != nil {
				t.Fatal(err)
			}
			took, prev, err := s.takeKey(ctx, key, tt.hash)
			if err != nil || took != tt.takes || !prev.Pending {
				t.Errorf("takeKey = %v, %+v, %v; want taken %v from a pending marker", took, prev, err, tt.takes)
			}
		})
	}
}

// README: a write the event store did not take in time is 503 with
// Retry-After, to be retried with the same Idempotency-Key. The key is
// looked up in a bucket on the same NATS before anything else: NATS out of
// reach there is the same 503, not a 500 logged as the service's failure.
func TestAnIdempotentWriteWhileNATSIsAwayIsA503ToRetry(t *testing.T) {
	srv := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT})
	store, err := eventstore.Open(t.Context(), eventstore.Options{URL: srv.ClientURL(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	bucket, err := store.Bucket(t.Context(), "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	s := &Server{responses: bucket, log: slog.New(slog.NewJSONHandler(&logged, nil))}
	api := httptest.NewServer(s.idempotent(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the request ran without its key taken")
	})))
	defer api.Close()
	srv.Shutdown()
	srv.WaitForShutdown()

	req, _ := http.NewRequest("POST", api.URL+"/api/quotes", strings.NewReader(`{"pieces":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "rfq-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || logged.Len() != 0 {
		t.Errorf("= %d, Retry-After %q, %s; logged %s; want 503 with Retry-After, nothing logged", resp.StatusCode, resp.Header.Get("Retry-After"), body, logged.String())
	}
}

// A request that fails frees its Idempotency-Key. Repeats sent with it at
// the same moment find it taken, then freed before they read what holds
// it: they take it themselves, or wait their turn, and are never a 500
// five seconds later. Each round is a few requests at once with one key;
// the moment comes in a few rounds of a hundred.
func TestRequestsRacingWithAKeyThatAFailureFreesAreAnsweredAsItIs(t *testing.T) {
	bucket, err := storetest.Open(t).Bucket(t.Context(), "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{responses: bucket, log: slog.New(slog.DiscardHandler)}
	api := httptest.NewServer(s.idempotent(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest) // refused at once: the key is freed
	})))
	defer api.Close()
	statuses := map[int]int{}
	var mu sync.Mutex
	for round := range 200 {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", api.URL+"/api/quotes", strings.NewReader(`{}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprint("rfq-", round))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	for status, n := range statuses {
		if status != http.StatusBadRequest && status != http.StatusConflict {
			t.Errorf("%d answers %d; want each the request's own 400, or 409 while another holds the key (all: %v)", n, status, statuses)
		}
	}
}

// A generated secret (a webhook's, an API key, a client's secret) is in
// the creation's answer and in its replays, and the record the replays are
// answered from keeps it sealed, never as it is.
func TestAReplayAnswersTheGeneratedSecretItsRecordKeepsSealed(t *testing.T) {
	sealer, err := webhooks.NewSealer(make([]byte, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, field, secret string
	}{
		{"/api/webhooks", "secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"/api/admin/api-keys", "apiKey", "csk_Vhyq1yejy7bPMqdlu_mksDDUjNYhuVejO8n83HMBySw"},
		{"/api/admin/clients", "clientSecret", "Q2xpZW50U2VjcmV0T2ZUTVMx"},
	} {
		t.Run(tt.field, func(t *testing.T) {
			ctx := t.Context()
			bucket, err := storetest.Open(t).Bucket(ctx, "idempotency", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			s := &Server{responses: bucket, dispatcher: &webhooks.Dispatcher{Sealer: sealer}, log: slog.New(slog.DiscardHandler)}
			created := 0
			handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				created++
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, `{"id":"w1","`+tt.field+`":"`+tt.secret+`"}`+"\n")
			})
			var answers []string
			for range 2 {
				req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(`{"name":"TMS"}`))
				rec := httptest.NewRecorder()
				if err := s.runIdempotent(rec, req, "key-1", handler); err != nil || rec.Code != http.StatusCreated {
					t.Fatalf("answered %d, %v", rec.Code, err)
				}
				answers = append(answers, rec.Body.String())
			}
			var replayed map[string]string
			if err := json.Unmarshal([]byte(answers[1]), &replayed); err != nil || created != 1 || replayed["id"] != "w1" || replayed[tt.field] != tt.secret {
				t.Errorf("created %d times; the replay answered %s (%v), want w1 with the %s", created, answers[1], err, tt.field)
			}
			keys, err := bucket.Keys(ctx)
			if err != nil || len(keys) != 1 {
				t.Fatalf("records %v, %v", keys, err)
			}
			raw, _, _, err := bucket.GetRevision(ctx, keys[0])
			_, bare, prefixed := strings.Cut(tt.secret, "_")
			if err != nil || bytes.Contains(raw, []byte(tt.secret)) || prefixed && bytes.Contains(raw, []byte(bare)) {
				t.Errorf("the record holds the secret as it is (%v):\n%s", err, raw)
			}
		})
	}
}

// A replay says its length as the first answer did (see writeEncoded),
// where one over 2 kB, such as a priced quote's, went in chunks; and a
// 204, such as a revocation's, says none, as no 204 may.
func TestAReplaySaysItsLengthAsTheFirstAnswerDid(t *testing.T) {
	bucket, err := storetest.Open(t).Bucket(t.Context(), "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{responses: bucket, log: slog.New(slog.DiscardHandler)}
	api := httptest.NewServer(s.idempotent(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/admin/token-revocations" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"id": "q1", "note": r.URL.Query().Get("note")})
	})))
	defer api.Close()
	for _, tt := range []struct {
		name, path string
		status     int
		length     string // the Content-Length of both answers
	}{
		{"a short answer", "/api/quotes?note=short", http.StatusCreated, fmt.Sprint(len(`{"id":"q1","note":"short"}` + "\n"))},
		{"an answer over 2 kB", "/api/quotes?note=" + strings.Repeat("x", 5000), http.StatusCreated, fmt.Sprint(len(`{"id":"q1","note":""}`+"\n") + 5000)},
		{"a 204", "/api/admin/token-revocations", http.StatusNoContent, ""},
	} {
		var answers []string
		for range 2 {
			req, _ := http.NewRequest("POST", api.URL+tt.path, strings.NewReader(`{}`))
			req.Header.Set("Idempotency-Key", strings.ReplaceAll(tt.name, " ", "-"))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			answers = append(answers, fmt.Sprintf("%d, replayed %q, Content-Length %q, Transfer-Encoding %v, %d bytes",
				res.StatusCode, res.Header.Get("Idempotent-Replayed"), res.Header.Get("Content-Length"), res.TransferEncoding, len(body)))
		}
		size := cmp.Or(tt.length, "0")
		first := fmt.Sprintf("%d, replayed %q, Content-Length %q, Transfer-Encoding [], %s bytes", tt.status, "", tt.length, size)
		replay := fmt.Sprintf("%d, replayed %q, Content-Length %q, Transfer-Encoding [], %s bytes", tt.status, "true", tt.length, size)
		if answers[0] != first || answers[1] != replay {
			t.Errorf("%s answered\n%s\n%s\nwant\n%s\n%s", tt.name, answers[0], answers[1], first, replay)
		}
	}
}

// A request that carries a credential of its sender's choosing does not
// take its Idempotency-Key: the hash of its body, kept with the key (and
// the command id made from it, kept in its event), would be a copy of the
// credential far quicker to guess from than what the service keeps of it:
// a bcrypt hash, or, for a webhook's secret and its URL's user information,
// the sealed value. It is carried out as without a key.
func TestARequestCarryingACredentialOfItsOwnTakesNoIdempotencyKey(t *testing.T) {
	bucket, err := storetest.Open(t).Bucket(t.Context(), "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{responses: bucket, log: slog.New(slog.DiscardHandler)}
	var calls sync.Map // path and body: how many times the handler ran
	api := httptest.NewServer(s.idempotent(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n, _ := calls.LoadOrStore(r.URL.Path+string(body), new(int))
		*n.(*int)++
		writeJSON(w, http.StatusCreated, map[string]string{"id": "w1"})
	})))
	defer api.Close()
	tests := []struct {
		name, path, body string
		takes            bool
	}{
		{"a webhook with a generated secret takes it", "/api/webhooks", `{"url":"https://hooks.example/a","events":["*"]}`, true},
		{"a webhook with an empty secret, one to generate, takes it", "/api/webhooks", `{"url":"https://hooks.example/e","events":["*"],"secret":""}`, true},
		{"a webhook with a secret of its own does not", "/api/webhooks", `{"url":"https://hooks.example/b","events":["*"],"secret":"our-own-chosen-secret"}`, false},
		{"a webhook whose URL has a user and password does not", "/api/webhooks", `{"url":"https://hooks:pa55word@hooks.example/c","events":["*"]}`, false},
		{"a webhook whose URL has a user alone does not", "/api/webhooks", `{"url":"https://tok_123456@hooks.example/d","events":["*"]}`, false},
		{"a user with a password of its own does not", "/api/admin/users", `{"organizationId":"acme","username":"ana","password":"correct horse battery"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replayed []string
			for range 2 {
				req, _ := http.NewRequest("POST", api.URL+tt.path, strings.NewReader(tt.body))
				req.Header.Set("Idempotency-Key", strings.ReplaceAll(tt.name, " ", "-"))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				replayed = append(replayed, res.Header.Get("Idempotent-Replayed"))
			}
			n, _ := calls.Load(tt.path + tt.body)
			if took := *n.(*int) == 1 && replayed[1] == "true"; took != tt.takes {
				t.Errorf("carried out %d times, the second answer replayed %q: the key taken %v, want %v", *n.(*int), replayed[1], took, tt.takes)
			}
		})
	}
}
