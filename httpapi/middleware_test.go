package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
)

func TestPanicBecomes500WithRequestID(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	h := withRequestID(withAccessLog(log, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret internal detail")
	})))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/boom", nil))

	var body errorBody
	json.Unmarshal(w.Body.Bytes(), &body)
	id := w.Header().Get("X-Request-Id")
	if w.Code != 500 || body.Error != "server_error" || !strings.Contains(body.ErrorDescription, id) || id == "" {
		t.Errorf("response = %d %s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "secret internal detail") {
		t.Error("the panic's detail reached the client")
	}
	if !strings.Contains(logs.String(), "secret internal detail") || !strings.Contains(logs.String(), id) {
		t.Errorf("the log lacks the panic or the request id:\n%s", logs.String())
	}
}

func TestAccessLogLineAtLevelsThatKeepIt(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		line  bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, true},
		{slog.LevelWarn, false},
	} {
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: c.level}))
		h := withRequestID(withAccessLog(log, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			stateOf(r.Context()).principal.Subject = "client:acme" // as authentication does
			w.WriteHeader(http.StatusTeapot)
			w.Write([]byte("short"))
		})))
		r := httptest.NewRequest("GET", "/api/quotes?id=1", nil)
		r.Header.Set("X-Request-Id", "trace-7")
		h.ServeHTTP(httptest.NewRecorder(), r)
		if !c.line {
			if logs.Len() != 0 {
				t.Errorf("at %v: logged %s", c.level, logs.String())
			}
			continue
		}
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("at %v: %v in %s", c.level, err, logs.String())
		}
		for k, v := range map[string]any{"msg": "request", "request_id": "trace-7", "method": "GET", "path": "/api/quotes",
			"status": 418.0, "bytes": 5.0, "remote": "192.0.2.1:1234", "subject": "client:acme"} {
			if line[k] != v {
				t.Errorf("at %v: %s = %v, want %v", c.level, k, line[k], v)
			}
		}
		if _, ok := line["duration"].(float64); !ok {
			t.Errorf("at %v: no duration in %s", c.level, logs.String())
		}
	}
}

func TestGeneratedRequestIDsAreDistinctVersion4UUIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("%q: version %v, variant %v, %v", id, u.Version(), u.Variant(), err)
		}
		if seen[id] {
			t.Fatalf("%s twice", id)
		}
		seen[id] = true
	}
}

func TestTheAccessLogShowsTheErrorCodeOfAnAnswer(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	h := withRequestID(withAccessLog(log, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, log, domain.Errorf(domain.NotFound, "no quote q1"))
	})))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/quotes/q1", nil))
	var line struct {
		Status int
		Error  string
	}
	json.Unmarshal(logged.Bytes(), &line)
	if line.Status != 404 || line.Error != "not_found" {
		t.Errorf("access log line %s; want status 404 and error not_found", logged.String())
	}
}

// Behind a trusted proxy the access log's remote is the client's address
// (its port is none: the proxy's connection has it), and the proxy the
// request came by is logged beside it; before, it read "198.51.100.1:0"
// and the proxy was lost.
func TestTheAccessLogNamesTheClientAndTheProxyItCameBy(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	h := withClientAddress([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		withRequestID(withAccessLog(log, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
	for _, tt := range []struct {
		name, forwarded    string
		wantRemote, wantBy string
	}{
		{"through the proxy", "198.51.100.1", "198.51.100.1", "10.0.0.2:5000"},
		{"from the proxy itself", "", "10.0.0.2:5000", ""},
	} {
		logged.Reset()
		r := httptest.NewRequest("GET", "/api/quotes", nil)
		r.RemoteAddr = "10.0.0.2:5000"
		if tt.forwarded != "" {
			r.Header.Set("X-Forwarded-For", tt.forwarded)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		var line struct{ Remote, Proxy string }
		json.Unmarshal(logged.Bytes(), &line)
		if line.Remote != tt.wantRemote || line.Proxy != tt.wantBy {
			t.Errorf("%s: access log line %s; want remote %q and proxy %q", tt.name, logged.String(), tt.wantRemote, tt.wantBy)
		}
	}
}

func TestTheClientBehindATrustedProxyIsTheRightmostAddressNotAProxy(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, tt := range []struct {
		name      string
		peer      string
		forwarded []string
		want      string // "" when the peer is the client
	}{
		{name: "a peer that is no proxy is the client, whatever it claims", peer: "203.0.113.9:5000", forwarded: []string{"198.51.100.1"}},
		{name: "one proxy", peer: "10.0.0.2:5000", forwarded: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "a forged address left of the client is not taken", peer: "10.0.0.2:5000", forwarded: []string{"1.2.3.4, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "proxies in a chain are skipped", peer: "10.0.0.2:5000", forwarded: []string{"198.51.100.1", "10.0.0.7,10.9.9.9"}, want: "198.51.100.1"},
		{name: "IPv6 peer and client", peer: "[fd00::2]:5000", forwarded: []string{"2001:db8::1"}, want: "2001:db8::1"},
		{name: "IPv4 mapped into IPv6", peer: "[::ffff:10.0.0.2]:5000", forwarded: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "a trusted proxy without the header is the client", peer: "10.0.0.2:5000"},
		{name: "garbage written by the proxy leaves the peer", peer: "10.0.0.2:5000", forwarded: []string{"unknown"}},
		{name: "garbage further left ends the walk at the nearest address", peer: "10.0.0.2:5000", forwarded: []string{"<script>, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "only proxies: the leftmost", peer: "10.0.0.2:5000", forwarded: []string{"10.0.0.9, 10.0.0.8"}, want: "10.0.0.9"},
		{name: "an address with a zone, text of the sender's choosing, is garbage", peer: "10.0.0.2:5000", forwarded: []string{"fe80::1%<script>"}},
		{name: "a zone further left ends the walk at the nearest address", peer: "10.0.0.2:5000", forwarded: []string{"fe80::1%x, 198.51.100.1"}, want: "198.51.100.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			h := withClientAddress(trusted, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = clientIP(r) }))
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.forwarded {
				r.Header.Add("X-Forwarded-For", v)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			want := tt.want
			if want == "" {
				want, _, _ = net.SplitHostPort(tt.peer)
			}
			if seen != want {
				t.Errorf("client = %q, want %q", seen, want)
			}
			if r.RemoteAddr != tt.peer {
				t.Errorf("the caller's request changed: RemoteAddr %q", r.RemoteAddr)
			}
		})
	}
}
