package loadtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

const rateLimitHint = "the server rate-limits this tool: start cargod with " +
	"CARGO_RATE_LIMIT_PER_MINUTE=0 CARGO_RATE_LIMIT_PER_HOUR=0 CARGO_RATE_LIMIT_PER_DAY=0"

// tokenLimitHint is for a 429 of the token endpoint, whose limits against
// guessing no setting lifts: many runs in a minute (each signs in once
// per client) reach them.
const tokenLimitHint = "the token endpoint limits sign-ins per client and address against guessing, " +
	"whatever the rate limits: wait a minute before the next run"

// failure is an operation that did not succeed. kind counts it in the
// report (an HTTP status, or a word such as "timeout"); detail shows it.
type failure struct{ kind, detail string }

func (f *failure) Error() string { return f.detail }

// api is a client of one server, acting as one caller.
type api struct {
	base   string
	client *http.Client
	token  string // bearer token; empty for none
}

// newHTTPClient keeps a connection per concurrent client alive.
func newHTTPClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns}}
}

// do sends body (JSON, or nothing when nil) and expects the status want.
// Any other answer is a *failure whose kind is the status.
func (a *api) do(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	status, out, _, err := a.exchange(ctx, method, path, body, nil)
	if err == nil && status != want {
		err = statusFailure(method, path, status, out)
	}
	return out, err
}

// exchange sends body (JSON, or nothing when nil) with header and returns
// the answer, whatever its status: no answer at all is a *failure.
func (a *api) exchange(ctx context.Context, method, path string, body []byte, header http.Header) (int, []byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, nil, &failure{kind: "no answer", detail: fmt.Sprintf("%s %s: %v", method, path, err)}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, &failure{kind: "no answer", detail: fmt.Sprintf("%s %s: reading the answer: %v", method, path, err)}
	}
	return resp.StatusCode, out, resp.Header, nil
}

// statusFailure is an answer with another status than the one expected:
// its kind is the status, and a 429 carries the hint to lift the limits,
// or of the token endpoint to wait.
func statusFailure(method, path string, status int, body []byte) *failure {
	detail := fmt.Sprintf("%s %s: %d %s", method, path, status, clip(body))
	switch {
	case status == http.StatusTooManyRequests && path == tokenPath:
		detail += " (" + tokenLimitHint + ")"
	case status == http.StatusTooManyRequests:
		detail += " (" + rateLimitHint + ")"
	}
	return &failure{kind: strconv.Itoa(status), detail: detail}
}

// json is do with v marshalled as the body and the answer decoded into
// out (when not nil).
func (a *api) json(ctx context.Context, method, path string, v any, want int, out any) error {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	got, err := a.do(ctx, method, path, body, want)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(got, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %v: %s", method, path, err, clip(got))
	}
	return nil
}

// clip keeps error bodies short enough to show.
func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// claims are the token claims the tool needs to know who it acts as.
type claims struct {
	Role      string `json:"role"`
	Airline   string `json:"airline"`
	AWBPrefix string `json:"awbPrefix"`
}

const tokenPath = "/api/auth/token"

// login gets a token with client credentials and reads its claims. The
// claims are not verified: the server that issued the token checks it.
func login(ctx context.Context, base string, client *http.Client, id, secret string) (*api, claims, error) {
	a := &api{base: base, client: client}
	var tok struct{ AccessToken string }
	grant := map[string]string{"grantType": "client_credentials", "clientId": id, "clientSecret": secret}
	if err := a.json(ctx, "POST", tokenPath, grant, http.StatusOK, &tok); err != nil {
		return nil, claims{}, fmt.Errorf("token for %s: %w", id, err)
	}
	a.token = tok.AccessToken
	var c claims
	parts := strings.Split(tok.AccessToken, ".")
	if len(parts) != 3 {
		return nil, c, fmt.Errorf("token for %s is not a JWT", id)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err == nil {
		err = json.Unmarshal(payload, &c)
	}
	if err != nil {
		return nil, c, fmt.Errorf("claims of the token for %s: %v", id, err)
	}
	return a, c, nil
}
