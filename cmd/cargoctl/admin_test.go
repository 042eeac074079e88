package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/httpapi"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/tokens"
	"golang.org/x/crypto/bcrypt"
)

const adminSecret = "operator-secret-1234"

// startServer serves the real API on an embedded store, wired as cargod
// wires it, with an admin organisation "operator" and its client "admin".
func startServer(t *testing.T) string {
	t.Helper()
	return startService(t).url
}

// service is a server of startServer, with what the tests reach past its
// API: the store and the projector that feeds the API's read models, for
// tests that write events of their own.
type service struct {
	url       string
	store     *eventstore.Store
	projector *projections.Projector
	cmds      *commands.Handler
	quotes    *projections.Quotes
}

func startService(t *testing.T) service {
	t.Helper()
	return startServiceOn(t, eventstore.Options{DataDir: t.TempDir()})
}

// startServiceOn is startService on the store of o: on an external NATS
// server, for a test that writes to the stream as another writer would.
func startServiceOn(t *testing.T, o eventstore.Options) service {
	t.Helper()
	ctx := context.Background()
	store, err := eventstore.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	key, err := tokens.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	tokenAuthority, err := tokens.New(key, "cargoctl-test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	responses, err := store.Bucket(ctx, "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	usage, err := commands.OpenUsageMeter(ctx, store.Bucket, log)
	if err != nil {
		t.Fatal(err)
	}
	models := projections.NewModels()
	// The built-in airports and airlines, which flights are checked against.
	models.Reference.Apply(domain.Record{}, domain.ReferenceChanged{Airports: domain.BuiltinAirports(), Airlines: domain.BuiltinAirlines(),
		Commodities: domain.BuiltinCommodities()})
	projector := projections.NewProjector(store, log, models.All()...)
	projCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { projector.Run(projCtx) })
	t.Cleanup(func() { stop(); wg.Wait() })

	cmds := commands.New(store, bcrypt.MinCost, models.Reference)
	system := commands.NewMeta(domain.Principal{Subject: "system:test"}, "", "")
	if _, err := cmds.CreateOrganization(ctx, system, domain.CreateOrganization{OrganizationID: "operator", Name: "Operator", Role: domain.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	res, err := cmds.CreateClient(ctx, commands.NewMeta(system.Principal, "", ""), "admin", "operator", adminSecret, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.WaitFor(ctx, res.Sequence); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{MaxBodyBytes: 1 << 20, HashCost: bcrypt.MinCost}, httpapi.Deps{
		Log: log, Commands: cmds, Projector: projector, Identity: models.Identity, Quotes: models.Quotes, Reference: models.Reference,
		Flights: models.Flights, Rates: models.Rates, Bookings: models.Bookings, Stock: models.Stock, Audit: models.Audit, Usage: usage,
		Shipments: models.Shipments, Documents: models.Documents, Webhooks: models.Webhooks, History: store,
		ShipmentFacts: projections.ShipmentFacts{Bookings: models.Bookings, Shipments: models.Shipments, Stock: models.Stock, Flights: models.Flights},
		Maintenance:   projections.NewMaintenance(projCtx, projector, store, log), Tokens: tokenAuthority, Responses: responses, Ready: store.Connected,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return service{url: srv.URL, store: store, projector: projector, cmds: cmds, quotes: models.Quotes}
}

// adminEnv is the environment of an operator: the server and the admin
// client's credentials.
func adminEnv(url string, more ...string) func(string) string {
	m := map[string]string{"CARGOCTL_URL": url, "CARGOCTL_CLIENT_ID": "admin", "CARGOCTL_CLIENT_SECRET": adminSecret}
	for i := 0; i+1 < len(more); i += 2 {
		m[more[i]] = more[i+1]
	}
	return env(m)
}

// secretFile is a file of the test's holding secret, as an operator keeps
// one for cargoctl to read (with a line's end, or none, or CRLF: the
// secret is what the file holds, as written).
func secretFile(t *testing.T, secret string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// decode reads a pretty-printed JSON object.
func decode(t *testing.T, out string) map[string]any {
	t.Helper()
	if !strings.HasPrefix(out, "{\n  \"") || !strings.HasSuffix(out, "\n}\n") {
		t.Errorf("output is not pretty-printed JSON:\n%s", out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return m
}

// wantFields checks the string fields of a response.
func wantFields(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v (in %v)", k, got[k], v, got)
		}
	}
}

// send calls the API directly, as a client other than cargoctl would.
func send(t *testing.T, url, path string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(resp.Body)
	json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

func tokenStatus(t *testing.T, url, body string) int {
	status, _ := send(t, url, "/api/auth/token", nil, body)
	return status
}

func TestAdmin(t *testing.T) {
	url := startServer(t)
	getenv := adminEnv(url)

	t.Run("create-org", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want map[string]any
		}{
			{[]string{"--id", "acme", "--name", "Acme Forwarding", "--role", "forwarder"},
				map[string]any{"id": "acme", "name": "Acme Forwarding", "role": "forwarder", "awbPrefix": nil, "iataCode": nil}},
			{[]string{"--id", "lh", "--name", "Lufthansa Cargo", "--role", "airline", "--awb-prefix", "020", "--iata-code", "LH"},
				map[string]any{"id": "lh", "name": "Lufthansa Cargo", "role": "airline", "awbPrefix": "020", "iataCode": "LH"}},
		} {
			out, errOut, err := runCmd(t, getenv, append([]string{"admin", "create-org"}, tt.args...)...)
			if err != nil {
				t.Fatalf("%v; stderr %s", err, errOut)
			}
			got := decode(t, out)
			wantFields(t, got, tt.want)
			if _, err := time.Parse(time.RFC3339, got["createdAt"].(string)); err != nil {
				t.Errorf("createdAt: %v", err)
			}
		}
	})

	t.Run("the server's validation errors", func(t *testing.T) {
		out, _, err := runCmd(t, getenv, "admin", "create-org", "--id", "bad id", "--name", "X", "--role", "pilot")
		var apiErr *apiError
		if !errors.As(err, &apiErr) || exitCode(err) != 1 || out != "" {
			t.Fatalf("error %v (exit %d), printed %q", err, exitCode(err), out)
		}
		msg := err.Error()
		for _, want := range []string{"(HTTP 400, validation_error)", "\n  id: must be 1 to 64 letters", "(INVALID_FORMAT)", "\n  role: "} {
			if !strings.Contains(msg, want) {
				t.Errorf("error\n%s\nlacks %q", msg, want)
			}
		}
		_, _, err = runCmd(t, getenv, "admin", "create-org", "--id", "acme", "--name", "Again", "--role", "forwarder")
		if err == nil || !strings.Contains(err.Error(), "(HTTP 409, conflict)") {
			t.Errorf("second create-org: %v", err)
		}
	})

	t.Run("create-client with a generated secret", func(t *testing.T) {
		out, errOut, err := runCmd(t, getenv, "admin", "create-client", "--org", "acme", "--client-id", "acme-tms")
		if err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		got := decode(t, out)
		wantFields(t, got, map[string]any{"clientId": "acme-tms", "organizationId": "acme"})
		secret, _ := got["clientSecret"].(string)
		if !strings.HasPrefix(secret, "cs_") || !strings.Contains(errOut, "shown in this response only") {
			t.Errorf("secret %q, stderr %q", secret, errOut)
		}
		if s := tokenStatus(t, url, `{"grantType":"client_credentials","clientId":"acme-tms","clientSecret":"`+secret+`"}`); s != http.StatusOK {
			t.Errorf("token for the new client: HTTP %d", s)
		}
	})

	// A chosen secret comes from a file, as every other secret does: on
	// the command line, any local user reads it in the process list, and
	// the shell's history keeps it.
	t.Run("create-client with a chosen secret, admin id before the command", func(t *testing.T) {
		getenv := adminEnv(url, "CARGOCTL_CLIENT_ID", "")
		if _, errOut, err := runCmd(t, getenv, "admin", "--client-id", "admin", "create-client",
			"--org", "lh", "--client-id", "lh-ops", "--client-secret", "a-chosen-secret-value"); err == nil {
			t.Errorf("a secret on the command line was taken; stderr %s", errOut)
		}
		out, errOut, err := runCmd(t, getenv, "admin", "--client-id", "admin", "create-client",
			"--org", "lh", "--client-id", "lh-ops", "--secret-file", secretFile(t, "a-chosen-secret-value\n"))
		if err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		if want := regexp.MustCompile(`^\{\n  "clientId": "lh-ops",\n  "createdAt": "[0-9T:.Z-]+",\n  "organizationId": "lh",\n  "status": "active"\n\}\n$`); !want.MatchString(out) {
			t.Errorf("printed\n%s\nwant (without the secret)\n%s", out, want)
		}
		if s := tokenStatus(t, url, `{"grantType":"client_credentials","clientId":"lh-ops","clientSecret":"a-chosen-secret-value"}`); s != http.StatusOK {
			t.Errorf("token for the new client: HTTP %d", s)
		}
	})

	t.Run("create-user", func(t *testing.T) {
		for _, tt := range []struct {
			user string
			args []string
			env  []string
		}{
			{"alice", []string{"--password-file", secretFile(t, "alice-password-123\n")}, nil},
			{"bob", nil, []string{"CARGOCTL_PASSWORD", "bob-password-12345"}},
		} {
			args := append([]string{"admin", "create-user", "--org", "acme", "--username", tt.user}, tt.args...)
			out, errOut, err := runCmd(t, adminEnv(url, tt.env...), args...)
			if err != nil {
				t.Fatalf("%v; stderr %s", err, errOut)
			}
			want := regexp.MustCompile(`^\{\n  "username": "` + tt.user + `",\n  "organizationId": "acme",\n  "status": "active",\n  "createdAt": "[0-9T:.Z-]+"\n\}\n$`)
			if !want.MatchString(out) {
				t.Errorf("printed\n%s\nwant\n%s", out, want)
			}
		}
		if s := tokenStatus(t, url, `{"grantType":"password","username":"alice","password":"alice-password-123"}`); s != http.StatusOK {
			t.Errorf("password grant for alice: HTTP %d", s)
		}
		if s := tokenStatus(t, url, `{"grantType":"password","username":"bob","password":"bob-password-12345"}`); s != http.StatusOK {
			t.Errorf("password grant for bob: HTTP %d", s)
		}
		_, _, err := runCmd(t, getenv, "admin", "create-user", "--org", "acme", "--username", "carol", "--password-file", secretFile(t, "short"))
		if err == nil || !strings.Contains(err.Error(), "\n  password: must be at least 12 characters (INVALID_RANGE)") {
			t.Errorf("short password: %v", err)
		}
	})

	t.Run("API keys", func(t *testing.T) {
		out, errOut, err := runCmd(t, getenv, "admin", "create-api-key", "--org", "acme", "--name", "warehouse <scanner>")
		if err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		created := decode(t, out)
		wantFields(t, created, map[string]any{"organizationId": "acme", "name": "warehouse <scanner>", "revoked": false})
		key, _ := created["apiKey"].(string)
		id, _ := created["id"].(string)
		if !strings.HasPrefix(key, "csk_") || id == "" || !strings.Contains(errOut, "shown in this response only") {
			t.Fatalf("key %q, id %q, stderr %q", key, id, errOut)
		}
		// The key authenticates: acme may not list organisations (403),
		// but it is not turned away as unknown (401).
		if s, m := send(t, url, "/api/admin/organizations", map[string]string{"X-Api-Key": key}, ""); s != http.StatusForbidden {
			t.Errorf("GET /api/admin/organizations with the new key: HTTP %d %v, want 403", s, m)
		}
		// Another organisation's key, which the filter leaves out.
		if _, _, err := runCmd(t, getenv, "admin", "create-api-key", "--org", "lh", "--name", "rates"); err != nil {
			t.Fatal(err)
		}

		list := func() []any {
			t.Helper()
			out, errOut, err := runCmd(t, getenv, "admin", "list-api-keys", "--org", "acme")
			if err != nil {
				t.Fatalf("%v; stderr %s", err, errOut)
			}
			keys, _ := decode(t, out)["apiKeys"].([]any)
			return keys
		}
		keys := list()
		if len(keys) != 1 {
			t.Fatalf("acme's keys: %v", keys)
		}
		wantFields(t, keys[0].(map[string]any), map[string]any{"id": id, "name": "warehouse <scanner>", "revoked": false, "apiKey": nil})
		out, _, err = runCmd(t, getenv, "admin", "list-api-keys")
		if all, _ := decode(t, out)["apiKeys"].([]any); err != nil || len(all) != 2 {
			t.Errorf("all keys: %v, %v", all, err)
		}

		out, errOut, err = runCmd(t, getenv, "admin", "revoke-api-key", "--id", id)
		if err != nil || out != "" || errOut != "API key "+id+" revoked.\n" {
			t.Fatalf("revoke: %v, printed %q %q", err, out, errOut)
		}
		wantFields(t, list()[0].(map[string]any), map[string]any{"revoked": true})
		if s, m := send(t, url, "/api/admin/organizations", map[string]string{"X-Api-Key": key}, ""); s != http.StatusUnauthorized {
			t.Errorf("GET /api/admin/organizations with the revoked key: HTTP %d %v, want 401", s, m)
		}
		_, _, err = runCmd(t, getenv, "admin", "revoke-api-key", "--id", "no-such-key")
		if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
			t.Errorf("revoking an unknown key: %v", err)
		}
	})

	t.Run("set-rate-limits", func(t *testing.T) {
		out, errOut, err := runCmd(t, getenv, "admin", "set-rate-limits", "--org", "acme", "--per-minute", "5", "--per-day", "1000")
		if err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		// The limits stored, as the API answers them.
		wantFields(t, decode(t, out), map[string]any{"requestsPerMinute": 5.0, "requestsPerHour": 0.0, "requestsPerDay": 1000.0})
		// As its help says, GET /api/usage shows them.
		status, usage := send(t, url, "/api/usage?organizationId=acme", adminToken(t, url), "")
		if limits, _ := usage["rateLimits"].(map[string]any); status != http.StatusOK || limits["requestsPerMinute"] != 5.0 {
			t.Errorf("GET /api/usage?organizationId=acme = HTTP %d %v, want 200 with the limits set", status, usage)
		}
		_, _, err = runCmd(t, getenv, "admin", "set-rate-limits", "--org", "acme", "--per-hour", "-1")
		if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "requestsPerHour") {
			t.Errorf("a negative limit: %v", err)
		}
	})

	t.Run("list-orgs", func(t *testing.T) {
		out, errOut, err := runCmd(t, getenv, "admin", "list-orgs")
		if err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		var ids []string
		orgs, _ := decode(t, out)["organizations"].([]any)
		for _, o := range orgs {
			ids = append(ids, o.(map[string]any)["id"].(string))
		}
		if got := strings.Join(ids, ","); !strings.Contains(got, "acme") || !strings.Contains(got, "lh") || !strings.Contains(got, "operator") || len(ids) != 3 {
			t.Errorf("organisations %s", got)
		}
	})

	t.Run("credentials", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			getenv func(string) string
			args   []string
			want   string // in the error; "" for success
		}{
			{"secret from a file", adminEnv(url, "CARGOCTL_CLIENT_SECRET", ""),
				[]string{"--client-secret-file", secretFile(t, adminSecret+"\r\n")}, ""},
			{"flags after the command", env(nil),
				[]string{"--url", url + "/", "--client-id", "admin", "--client-secret-file", secretFile(t, adminSecret)}, ""},
			{"wrong secret", adminEnv(url, "CARGOCTL_CLIENT_SECRET", "not-the-secret-at-all"), nil,
				"getting a token for client admin: invalid client credentials (HTTP 401, invalid_grant)"},
			{"not an admin", adminEnv(url, "CARGOCTL_CLIENT_ID", "lh-ops", "CARGOCTL_CLIENT_SECRET", "a-chosen-secret-value"), nil,
				"this operation is open to admins only, not to the airline role (HTTP 403, forbidden)"},
			{"no server", adminEnv("http://127.0.0.1:1"), nil, "connection refused"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				out, _, err := runCmd(t, tt.getenv, append([]string{"admin", "list-orgs"}, tt.args...)...)
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("error %v", err)
				case tt.want == "" && !strings.Contains(out, `"operator"`):
					t.Errorf("printed %q", out)
				case tt.want != "" && (err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), tt.want)):
					t.Errorf("error %v (exit %d), want %q", err, exitCode(err), tt.want)
				}
			})
		}
	})
}

// TestAdminUsageErrors needs no server: nothing is sent.
func TestAdminUsageErrors(t *testing.T) {
	unreachable := adminEnv("http://127.0.0.1:1")
	tests := []struct {
		getenv func(string) string
		args   []string
		want   string
	}{
		{unreachable, []string{"create-org", "--id", "x"}, "missing --name, --role (see 'cargoctl admin create-org --help')"},
		{unreachable, []string{"create-client", "--org", "x"}, "missing --client-id"},
		{unreachable, []string{"create-user", "--org", "x", "--username", "u"}, "no password: give --password-file or set CARGOCTL_PASSWORD"},
		{unreachable, []string{"create-user", "--org", "x", "--username", "u", "--password", "p"}, "unknown flag --password"},
		{unreachable, []string{"create-api-key", "--org", "x"}, "missing --name"},
		{unreachable, []string{"revoke-api-key"}, "missing --id"},
		{unreachable, []string{"set-rate-limits", "--per-minute", "5"}, "missing --org"},
		{unreachable, []string{"set-rate-limits", "--org", "x", "--per-minute", "many"}, `--per-minute "many": not a whole number`},
		{unreachable, []string{"disable-client"}, "missing --client"},
		{unreachable, []string{"delete-org"}, "missing --id"},
		{unreachable, []string{"enable-user"}, "missing --username"},
		{unreachable, []string{"rotate-client-secret"}, "missing --client"},
		{unreachable, []string{"set-password", "--username", "u"}, "no password: give --password-file or set CARGOCTL_PASSWORD"},
		{unreachable, []string{"revoke-tokens"}, "give one of --jti, --token-file, --subject and --org"},
		{unreachable, []string{"revoke-tokens", "--jti", "j", "--org", "x"}, "give one of --jti, --token-file, --subject and --org"},
		{unreachable, []string{"list-orgs", "extra"}, `unexpected argument "extra"`},
		{unreachable, []string{"list-users", "--org", ""}, "--org is empty: give it a value, or leave it out (see 'cargoctl admin list-users --help')"},
		{unreachable, []string{"list-clients", "--org="}, "--org is empty"},
		{unreachable, []string{"--bogus", "list-orgs"}, "unknown flag --bogus"},
		{env(nil), []string{"list-orgs"}, "no admin client: set CARGOCTL_CLIENT_ID or --client-id"},
		{env(map[string]string{"CARGOCTL_CLIENT_ID": "admin"}), []string{"list-orgs"}, "no client secret"},
		{unreachable, []string{"list-orgs", "--url", "127.0.0.1:8080"}, `--url "127.0.0.1:8080" is not an http or https URL`},
		{unreachable, []string{"list-orgs", "--url", "http://127.0.0.1:0"}, `--url "http://127.0.0.1:0" has a port outside 1..65535`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runCmd(t, tt.getenv, append([]string{"admin"}, tt.args...)...)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v (exit %d), want a usage error with %q", err, exitCode(err), tt.want)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
		})
	}
}

// TestAnEmptySecretFileIsNamed: a file given for a secret that holds none
// is named, whatever the flag; nothing is sent.
func TestAnEmptySecretFileIsNamed(t *testing.T) {
	empty := secretFile(t, "\n")
	unreachable := adminEnv("http://127.0.0.1:1") // CARGOCTL_CLIENT_SECRET set: the file wins
	for _, args := range [][]string{
		{"list-orgs", "--client-secret-file", empty},
		{"create-user", "--org", "x", "--username", "u", "--password-file", empty},
		{"set-password", "--username", "u", "--password-file", empty},
		{"revoke-tokens", "--token-file", empty},
		{"create-client", "--org", "x", "--client-id", "c", "--secret-file", empty},
	} {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			want := args[len(args)-2] + ": " + empty + " is empty"
			out, _, err := runCmd(t, unreachable, append([]string{"admin"}, args...)...)
			if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), want) || out != "" {
				t.Errorf("error = %v (exit %d), printed %q; want exit 1 with %q", err, exitCode(err), out, want)
			}
		})
	}
}

// TestAdminCredentialLifeCycle runs the life cycle's commands against a
// server, and checks what each does to the credentials and their tokens.
func TestAdminCredentialLifeCycle(t *testing.T) {
	url := startServer(t)
	getenv := adminEnv(url)
	admin := func(t *testing.T, getenv func(string) string, args ...string) (map[string]any, string) {
		t.Helper()
		out, errOut, err := runCmd(t, getenv, append([]string{"admin"}, args...)...)
		if err != nil {
			t.Fatalf("%s: %v; stderr %s", args[0], err, errOut)
		}
		if out == "" {
			return nil, errOut
		}
		return decode(t, out), errOut
	}
	grant := func(body string) (int, string) {
		status, m := send(t, url, "/api/auth/token", nil, body)
		token, _ := m["accessToken"].(string)
		return status, token
	}
	clientGrant := func(secret string) (int, string) {
		return grant(`{"grantType":"client_credentials","clientId":"acme-tms","clientSecret":"` + secret + `"}`)
	}
	// use is the status of a request with the token: 403 when it is
	// accepted (admins only), 401 when refused.
	use := func(token string) int {
		status, _ := send(t, url, "/api/admin/organizations", map[string]string{"Authorization": "Bearer " + token}, "")
		return status
	}
	admin(t, getenv, "create-org", "--id", "acme", "--name", "Acme", "--role", "forwarder")
	created, _ := admin(t, getenv, "create-client", "--org", "acme", "--client-id", "acme-tms")
	secret := created["clientSecret"].(string)
	admin(t, adminEnv(url, "CARGOCTL_PASSWORD", "alice-password-123"), "create-user", "--org", "acme", "--username", "alice")
	// A second admin client shares the commands: the token endpoint takes
	// 20 tries a minute for one client from one address.
	admin(t, getenv, "create-client", "--org", "operator", "--client-id", "admin2", "--secret-file", secretFile(t, "second-admin-secret"))
	admin2 := adminEnv(url, "CARGOCTL_CLIENT_ID", "admin2", "CARGOCTL_CLIENT_SECRET", "second-admin-secret")
	// listed is what list-clients or list-users prints, as "id status";
	// admin2 asks, as the commands of the life cycle leave admin few
	// tokens.
	listed := func(t *testing.T, args ...string) []string {
		t.Helper()
		out, errOut, err := runCmd(t, admin2, append([]string{"admin"}, args...)...)
		if err != nil {
			t.Fatalf("%s: %v; stderr %s", args[0], err, errOut)
		}
		for _, leak := range []string{secret, "second-admin-secret", "alice-", "Secret", `"password"`, "Hash"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s printed %q:\n%s", args[0], leak, out)
			}
		}
		var list struct {
			Clients []struct{ ClientID, Status string }
			Users   []struct{ Username, Status string }
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("%s printed %q: %v", args[0], out, err)
		}
		got := []string{}
		for _, c := range list.Clients {
			got = append(got, c.ClientID+" "+c.Status)
		}
		for _, u := range list.Users {
			got = append(got, u.Username+" "+u.Status)
		}
		return got
	}

	t.Run("a disabled client gets no token, and its tokens stay refused once it is enabled", func(t *testing.T) {
		_, before := clientGrant(secret)
		got, _ := admin(t, getenv, "disable-client", "--client", "acme-tms")
		wantFields(t, got, map[string]any{"clientId": "acme-tms", "status": "disabled", "clientSecret": nil})
		if got := listed(t, "list-clients", "--org", "acme"); !slices.Equal(got, []string{"acme-tms disabled"}) {
			t.Errorf("list-clients --org acme: %q", got)
		}
		if status, _ := clientGrant(secret); status != http.StatusUnauthorized {
			t.Errorf("token of the disabled client: HTTP %d", status)
		}
		if s := use(before); s != http.StatusUnauthorized {
			t.Errorf("its earlier token: HTTP %d", s)
		}
		got, _ = admin(t, getenv, "enable-client", "--client", "acme-tms")
		wantFields(t, got, map[string]any{"status": "active"})
		status, after := clientGrant(secret)
		if status != http.StatusOK || use(after) != http.StatusForbidden {
			t.Errorf("a token once enabled: HTTP %d, used: %d", status, use(after))
		}
		if s := use(before); s != http.StatusUnauthorized {
			t.Errorf("the token from before it was disabled, once enabled: HTTP %d", s)
		}
	})

	t.Run("a rotated secret: the old one and its tokens are refused, the new one works", func(t *testing.T) {
		_, before := clientGrant(secret)
		got, errOut := admin(t, getenv, "rotate-client-secret", "--client", "acme-tms")
		rotated, _ := got["clientSecret"].(string)
		if !strings.HasPrefix(rotated, "cs_") || rotated == secret || !strings.Contains(errOut, "shown in this response only") {
			t.Fatalf("new secret %q, stderr %q", rotated, errOut)
		}
		if status, _ := clientGrant(secret); status != http.StatusUnauthorized {
			t.Errorf("the old secret: HTTP %d", status)
		}
		if s := use(before); s != http.StatusUnauthorized {
			t.Errorf("a token of the old secret: HTTP %d", s)
		}
		if status, token := clientGrant(rotated); status != http.StatusOK || use(token) != http.StatusForbidden {
			t.Errorf("the new secret: HTTP %d", status)
		}
		secret = rotated
	})

	t.Run("revoke-tokens by subject and by jti", func(t *testing.T) {
		_, old := clientGrant(secret)
		if _, errOut := admin(t, getenv, "revoke-tokens", "--subject", "client:acme-tms"); errOut != "Tokens revoked.\n" {
			t.Errorf("stderr %q", errOut)
		}
		if s := use(old); s != http.StatusUnauthorized {
			t.Errorf("a token from before: HTTP %d", s)
		}
		_, kept := clientGrant(secret)
		// The token as issued, and as an Authorization header shows it.
		for _, written := range []string{"%s\n", "Bearer %s\n"} {
			_, revoked := clientGrant(secret)
			tokenFile := filepath.Join(t.TempDir(), "leaked")
			if err := os.WriteFile(tokenFile, fmt.Appendf(nil, written, revoked), 0o600); err != nil {
				t.Fatal(err)
			}
			admin(t, getenv, "revoke-tokens", "--token-file", tokenFile)
			if use(revoked) != http.StatusUnauthorized || use(kept) != http.StatusForbidden {
				t.Errorf("written %q: the token of the jti: HTTP %d; another token: HTTP %d", written, use(revoked), use(kept))
			}
		}
		_, _, err := runCmd(t, getenv, "admin", "revoke-tokens", "--subject", "client:nobody")
		if err == nil || !strings.Contains(err.Error(), "subject: no client or user") {
			t.Errorf("an unknown subject: %v", err)
		}
	})

	t.Run("a user's new password, disabled and deleted", func(t *testing.T) {
		password := func(p string) int {
			status, _ := grant(`{"grantType":"password","username":"alice","password":"` + p + `"}`)
			return status
		}
		admin(t, adminEnv(url, "CARGOCTL_PASSWORD", "alice-new-password"), "set-password", "--username", "Alice")
		if password("alice-password-123") != http.StatusUnauthorized || password("alice-new-password") != http.StatusOK {
			t.Errorf("old password: HTTP %d; new: HTTP %d", password("alice-password-123"), password("alice-new-password"))
		}
		got, _ := admin(t, admin2, "disable-user", "--username", "alice")
		wantFields(t, got, map[string]any{"username": "alice", "status": "disabled"})
		if s := password("alice-new-password"); s != http.StatusUnauthorized {
			t.Errorf("a disabled user: HTTP %d", s)
		}
		admin(t, admin2, "enable-user", "--username", "alice")
		if _, errOut := admin(t, admin2, "delete-user", "--username", "alice"); errOut != "user alice deleted.\n" {
			t.Errorf("stderr %q", errOut)
		}
		_, _, err := runCmd(t, admin2, "admin", "enable-user", "--username", "alice")
		if err == nil || !strings.Contains(err.Error(), "a deleted credential stays deleted (HTTP 409, conflict)") {
			t.Errorf("enabling a deleted user: %v", err)
		}
	})

	t.Run("a disabled organisation's API key and tokens are refused", func(t *testing.T) {
		key, _ := admin(t, admin2, "create-api-key", "--org", "acme", "--name", "scanner")
		apiKey := key["apiKey"].(string)
		_, token := clientGrant(secret)
		keyStatus := func() int {
			status, _ := send(t, url, "/api/admin/organizations", map[string]string{"X-Api-Key": apiKey}, "")
			return status
		}
		got, _ := admin(t, admin2, "disable-org", "--id", "acme")
		wantFields(t, got, map[string]any{"id": "acme", "status": "disabled"})
		if keyStatus() != http.StatusUnauthorized || use(token) != http.StatusUnauthorized {
			t.Errorf("API key: HTTP %d; token: HTTP %d", keyStatus(), use(token))
		}
		if status, _ := clientGrant(secret); status != http.StatusUnauthorized {
			t.Errorf("a token for a client of the disabled organisation: HTTP %d", status)
		}
		admin(t, admin2, "enable-org", "--id", "acme")
		if keyStatus() != http.StatusForbidden || use(token) != http.StatusUnauthorized {
			t.Errorf("once enabled, API key: HTTP %d; the token from before: HTTP %d", keyStatus(), use(token))
		}
		admin(t, admin2, "revoke-tokens", "--org", "acme")
		admin(t, admin2, "delete-client", "--client", "acme-tms")
		if status, _ := clientGrant(secret); status != http.StatusUnauthorized {
			t.Errorf("a deleted client: HTTP %d", status)
		}
	})

	t.Run("an admin cannot lock itself out", func(t *testing.T) {
		for _, args := range [][]string{{"disable-org", "--id", "operator"}, {"delete-org", "--id", "operator"}, {"disable-client", "--client", "admin"}} {
			_, _, err := runCmd(t, getenv, append([]string{"admin"}, args...)...)
			if err == nil || !strings.Contains(err.Error(), "what this request authenticates with") || !strings.Contains(err.Error(), "HTTP 409") {
				t.Errorf("%s: %v", args[0], err)
			}
		}
		if _, _, err := runCmd(t, getenv, "admin", "list-orgs"); err != nil {
			t.Errorf("the admin after trying: %v", err)
		}
	})

	t.Run("list-clients and list-users show each one's status, never a secret", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want []string
		}{
			{[]string{"list-clients", "--org", "acme"}, []string{"acme-tms deleted"}},
			{[]string{"list-clients"}, []string{"acme-tms deleted", "admin active", "admin2 active"}},
			{[]string{"list-users", "--org", "acme"}, []string{"alice deleted"}},
			{[]string{"list-users", "--org", "operator"}, []string{}},
		} {
			if got := listed(t, tt.args...); !slices.Equal(got, tt.want) {
				t.Errorf("%s: %q, want %q", strings.Join(tt.args, " "), got, tt.want)
			}
		}
		_, _, err := runCmd(t, admin2, "admin", "list-users", "--org", "acmee")
		if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "no organisation acmee (HTTP 404, not_found)") {
			t.Errorf("list-users of an organisation that is none: %v", err)
		}
	})
}

// apiCommand is a command line that calls cargod's API.
type apiCommand struct {
	name string
	args []string
}

// apiCommands are the commands that call cargod's HTTP API through an
// admin client, each with a command line that calls it.
func apiCommands(t *testing.T) []apiCommand {
	file := filepath.Join(t.TempDir(), "airports.csv")
	if err := os.WriteFile(file, []byte("icao,iata,name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []apiCommand{
		{"admin", []string{"admin", "list-orgs"}},
		{"state", []string{"state", "flight", "LH8400-2026-07-01", "--seq", "1"}},
		{"shipment", []string{"shipment", "020-12345675"}},
		{"import", []string{"import", "airports", file}},
		{"rebuild", []string{"rebuild"}},
		{"verify", []string{"verify"}},
	}
}

// Every command that calls cargod's API says in one line which server did
// not answer and why, as the first thing an operator must know: not Go's
// account of the request, its URL and the dial.
func TestEveryCommandThatCallsTheAPISaysInOneLineThatCargodDoesNotAnswer(t *testing.T) {
	down := "http://" + closedPort(t)
	want := "cargod at " + down + " does not answer: connection refused"
	for _, tt := range append(apiCommands(t), apiCommand{"health", []string{"health"}}) {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, adminEnv(down), tt.args...)
			if err == nil || err.Error() != want || exitCode(err) != 1 {
				t.Errorf("error = %v, want %q, exit 1", err, want)
			}
		})
	}
}

// A NATS server's address given for cargod's (its CARGO_NATS_LISTEN port
// for its CARGO_ADDR) is named as such, with the flags each address is
// for: not as Go's account of a greeting it took for a malformed response,
// nor with a line of Go's log on stderr when the greeting came before the
// request.
func TestEveryCommandThatCallsTheAPISaysANATSServerAnswersAtItsURL(t *testing.T) {
	nats := "http://" + strings.TrimPrefix(natstest.StartServer(t, 0), "nats://")
	want := "a NATS server answers at " + nats + ", not cargod's HTTP API: --url is the address of cargod's HTTP API (its CARGO_ADDR); " +
		"a NATS server's address is for --nats-url (cargoctl events, trace and parked)"
	var logged lockedbuf.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	for _, tt := range append(apiCommands(t), apiCommand{"health", []string{"health"}}) {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, err := runCmd(t, adminEnv(nats), tt.args...)
			if err == nil || err.Error() != want || exitCode(err) != 1 || errOut != "" {
				t.Errorf("error = %v, stderr %q; want %q, exit 1", err, errOut, want)
			}
		})
	}
	if logged.String() != "" {
		t.Errorf("Go's log: %s", logged.String())
	}
}

// A server that takes the connection and never answers fails each command
// that calls the API after its --timeout (30 s unless told), saying so in
// one line, as health does, rather than in Go's words.
func TestEveryCommandThatCallsTheAPIGivesUpOnAServerThatNeverAnswers(t *testing.T) {
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A handler hears of a client gone only once the body is read
		// (the token request has one).
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(hanging.Close)
	want := "cargod at " + hanging.URL + " did not answer within 100ms (--timeout)"
	for _, tt := range apiCommands(t) {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, adminEnv(hanging.URL), append(tt.args, "--timeout", "100ms")...)
			if err == nil || err.Error() != want || exitCode(err) != 1 {
				t.Errorf("error = %v, want %q, exit 1", err, want)
			}
		})
	}
}

// A chosen secret's file that holds none (empty, or a bare newline) is
// refused before anything is sent: sent without a secret, the request
// would have the server generate one, which the response, hiding the
// secret the caller chose, would not show, and no one would know the
// client's secret (after a rotation, the old one stopped too).
func TestAnEmptySecretFileIsRefused(t *testing.T) {
	getenv := adminEnv("http://" + closedPort(t))
	for _, args := range [][]string{
		{"create-client", "--org", "lh", "--client-id", "lh-ops", "--secret-file"},
		{"rotate-client-secret", "--client", "lh-ops", "--new-secret-file"},
	} {
		flag := args[len(args)-1]
		_, errOut, err := runCmd(t, getenv, append(append([]string{"admin"}, args...), secretFile(t, ""))...)
		if err == nil || !strings.Contains(errOut+err.Error(), flag) || !strings.Contains(errOut+err.Error(), "empty") {
			t.Errorf("%s with an empty %s: %v; stderr %s; want it refused as empty", args[0], flag, err, errOut)
		}
	}
}

// Each command gets a token, and the token endpoint takes 20 a minute of a
// client from one address: a script of more commands would fail halfway.
// A command refused a token for now (429) waits as long as the answer
// asks, saying so, and goes on; up to three times, then it gives the
// refusal. The refusals come from a proxy in front of the real API.
func TestACommandRefusedATokenForNowWaitsAsAskedAndGoesOn(t *testing.T) {
	api := startServer(t)
	tests := []struct {
		name      string
		refusals  int
		wantWaits int
		wantErr   string
	}{
		{"refused once", 1, 1, ""},
		{"refused past the waits", requestWaits + 1, requestWaits, "too many requests for client:admin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := refusingFirst(t, api, http.MethodPost, "/api/auth/token", tt.refusals, "too many requests for client:admin from 127.0.0.1")
			out, errOut, err := runCmd(t, adminEnv(front), "admin", "list-orgs")
			if waits := strings.Count(errOut, "waiting 1s, as it asks"); waits != tt.wantWaits {
				t.Errorf("said it waited %d times, want %d:\n%s", waits, tt.wantWaits, errOut)
			}
			switch {
			case tt.wantErr == "" && (err != nil || !strings.Contains(out, `"operator"`)):
				t.Errorf("list-orgs = %v, %q", err, out)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("list-orgs = %v, want the refusal %q", err, tt.wantErr)
			}
		})
	}
}

// Every request counts against the organisation's rate limit, the polls
// with which rebuild and verify follow their job among them: a command
// refused for now (429) waits as long as the answer asks, saying so, and
// goes on, as it does for a token; up to three times a request, then it
// gives the refusal. A rebuild or verify whose poll was refused exited 1
// with the refusal alone, though the job went on in cargod: an operator
// read it as nothing rebuilt or verified. The refusals come from a proxy
// in front of the real API.
func TestACommandRefusedARequestForNowWaitsAsAskedAndGoesOn(t *testing.T) {
	api := startServer(t)
	tests := []struct {
		name      string
		args      []string
		method    string
		path      string
		refusals  int
		wantWaits int
		wantErr   string
	}{
		{"a list refused once", []string{"admin", "list-orgs"}, http.MethodGet, "/api/admin/organizations", 1, 1, ""},
		{"a rebuild refused once at its start", []string{"rebuild"}, http.MethodPost, "/api/admin/rebuild", 1, 1, ""},
		{"a rebuild's poll refused once", []string{"rebuild"}, http.MethodGet, "/api/admin/rebuild", 1, 1, ""},
		{"a list refused past the waits", []string{"admin", "list-orgs"}, http.MethodGet, "/api/admin/organizations", requestWaits + 1, requestWaits, "too many requests for organisation operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := refusingFirst(t, api, tt.method, tt.path, tt.refusals, "too many requests for organisation operator")
			_, errOut, err := runCmd(t, adminEnv(front), tt.args...)
			if waits := strings.Count(errOut, "waiting 1s, as it asks"); waits != tt.wantWaits {
				t.Errorf("said it waited %d times, want %d:\n%s", waits, tt.wantWaits, errOut)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("%s = %v, want it to go on once it has waited", strings.Join(tt.args, " "), err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("%s = %v, want the refusal %q", strings.Join(tt.args, " "), err, tt.wantErr)
			}
		})
	}
}

// A 429 of an organisation's limit an hour or a day asks to wait until
// its window ends, hours away: cargoctl gives the refusal at once, naming
// when to try again, rather than hang until then (three times over) on
// one line of stderr, as it did once every 429 was waited out. A wait of
// a minute's limit it still waits (see the test above).
func TestACommandRefusedForHoursGivesTheRefusalAtOnce(t *testing.T) {
	for _, retryAfter := range []string{"61", "9195", "99999999999999999"} {
		t.Run(retryAfter, func(t *testing.T) {
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/api/auth/token" {
					io.WriteString(w, `{"accessToken":"a-token","tokenType":"Bearer","expiresIn":3600}`)
					return
				}
				w.Header().Set("Retry-After", retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":"rate_limited","errorDescription":"too many requests for organisation operator; retry after `+retryAfter+`s"}`)
			}))
			t.Cleanup(api.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			err := run(ctx, []string{"admin", "list-orgs"}, adminEnv(api.URL, "CARGOCTL_TOKEN_CACHE", "off"), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), "too many requests for organisation operator") {
				t.Errorf("admin list-orgs = %v, want the refusal at once", err)
			}
			if strings.Contains(errOut.String(), "waiting") {
				t.Errorf("it waited, or said it would:\n%s", errOut.String())
			}
		})
	}
}

// inFrontOf is the URL of a proxy in front of the API at api, which lets
// answer see each request first, and passes on those it did not answer.
func inFrontOf(t *testing.T, api string, answer func(w http.ResponseWriter, r *http.Request) (answered bool)) string {
	t.Helper()
	proxy := proxyTo(t, api)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answer(w, r) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// refusingFirst is the URL of a proxy in front of the API at api that
// refuses the first times requests of method to path for now, as a rate
// limit does (429, Retry-After: 1, the spec's body with why), and passes
// on the rest.
func refusingFirst(t *testing.T, api, method, path string, times int, why string) string {
	t.Helper()
	var mu sync.Mutex
	return inFrontOf(t, api, func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		refuse := r.Method == method && r.URL.Path == path && times > 0
		if refuse {
			times--
		}
		mu.Unlock()
		if !refuse {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":"rate_limited","errorDescription":"`+why+`; retry after 1s"}`)
		return true
	})
}

// proxyTo passes requests on to the API at api.
func proxyTo(t *testing.T, api string) *httputil.ReverseProxy {
	t.Helper()
	u, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	return httputil.NewSingleHostReverseProxy(u)
}

// Every command needs a token, and the token endpoint takes 20 requests a
// minute of a client: the token is kept in $XDG_RUNTIME_DIR/cargoctl,
// which only its user may read, for the commands after it; one the server
// refuses since is replaced. The token requests are counted by a proxy in
// front of the real API.
func TestATokenIsKeptForTheCommandsAfterIt(t *testing.T) {
	api := startServer(t)
	var mu sync.Mutex
	grants := 0
	front := inFrontOf(t, api, func(_ http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/auth/token" {
			mu.Lock()
			grants++
			mu.Unlock()
		}
		return false
	})
	granted := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := grants
		grants = 0
		return n
	}
	listOrgs := func(getenv func(string) string) {
		t.Helper()
		if out, _, err := runCmd(t, getenv, "admin", "list-orgs"); err != nil || !strings.Contains(out, `"operator"`) {
			t.Fatalf("list-orgs = %v, %q", err, out)
		}
	}
	runtime := t.TempDir()
	kept := filepath.Join(runtime, "cargoctl")

	for range 2 {
		listOrgs(adminEnv(front, "XDG_RUNTIME_DIR", runtime, "CARGOCTL_TOKEN_CACHE", "off"))
	}
	if n := granted(); n != 2 {
		t.Errorf("two commands with the cache off got %d tokens, want 2", n)
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Errorf("with the cache off, %s: %v; want none", kept, err)
	}

	for range 3 {
		listOrgs(adminEnv(front, "XDG_RUNTIME_DIR", runtime))
	}
	if n := granted(); n != 1 {
		t.Errorf("three commands got %d tokens, want 1", n)
	}
	files, err := filepath.Glob(filepath.Join(kept, "*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("kept: %v, %v; want one file", files, err)
	}
	dir, _ := os.Stat(kept)
	file, _ := os.Stat(files[0])
	content, _ := os.ReadFile(files[0])
	if dir.Mode().Perm() != 0o700 || file.Mode().Perm() != 0o600 || strings.Contains(string(content), adminSecret) {
		t.Errorf("kept in %s (%v), %s (%v): %q; want the user's alone, without the secret", kept, dir.Mode(), files[0], file.Mode(), content)
	}

	// A kept token the server refuses (revoked, or signed with a key since
	// replaced) is replaced, and the command goes on.
	if err := os.WriteFile(files[0], []byte(`{"accessToken":"refused","expiresAt":"2999-01-01T00:00:00Z"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	listOrgs(adminEnv(front, "XDG_RUNTIME_DIR", runtime))
	if n := granted(); n != 1 {
		t.Errorf("a command with a refused token kept got %d tokens, want 1", n)
	}
	listOrgs(adminEnv(front, "XDG_RUNTIME_DIR", runtime))
	if n := granted(); n != 0 {
		t.Errorf("the command after it got %d tokens, want the one kept", n)
	}

	// A directory others may write to could be handed a token that is not
	// this client's: none is kept there, nor read from it.
	shared := t.TempDir()
	if err := os.Mkdir(filepath.Join(shared, "cargoctl"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(shared, "cargoctl"), 0o777) // whatever the umask made it
	for range 2 {
		listOrgs(adminEnv(front, "XDG_RUNTIME_DIR", shared))
	}
	if n := granted(); n != 2 {
		t.Errorf("two commands with a directory others may write got %d tokens, want 2", n)
	}
}
