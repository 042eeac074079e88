package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/httpapi"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// testServer is cargod started by run() on a free loopback port.
type testServer struct {
	base    string
	dataDir string
	stdout  *lockedbuf.Buffer
	doc     *apiDoc
	stop    func()
}

var listening = regexp.MustCompile(`cargod listening on (http://\S+)`)

// startServer runs cargod on dataDir with env on top of the test defaults,
// and stops it when the test ends.
func startServer(t testing.TB, dataDir string, env map[string]string) *testServer {
	t.Helper()
	vars := testEnv(dataDir, env)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &lockedbuf.Buffer{}, &lockedbuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, environOf(vars), stdout, stderr) }()

	s := &testServer{dataDir: dataDir, stdout: stdout, doc: loadDoc(t)}
	deadline := time.Now().Add(30 * time.Second)
	for s.base == "" {
		if m := listening.FindStringSubmatch(stdout.String()); m != nil {
			s.base = m[1]
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("cargod stopped at start: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("cargod did not start within 30s\n%s", stderr.String())
		}
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("cargod ended with %v", err)
			}
			if strings.Contains(stderr.String(), `"level":"ERROR"`) {
				t.Errorf("cargod logged errors:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// environOf is vars as os.Environ gives them.
func environOf(vars map[string]string) []string {
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	return environ
}

// testEnv is the environment of a test's cargod: the test defaults, with
// env on top.
func testEnv(dataDir string, env map[string]string) map[string]string {
	vars := map[string]string{
		"CARGO_ADDR":               "127.0.0.1:0",
		"CARGO_DATA_DIR":           dataDir,
		"CARGO_PASSWORD_HASH_COST": "4", // bcrypt's minimum: tests need speed, not strength
		"CARGO_LOG_LEVEL":          "error",
		"CARGO_DEMO_DAYS":          "3", // enough flights to book, quick to seed
		// Tests poll; TestRateLimit sets a tight limit of its own.
		"CARGO_RATE_LIMIT_PER_MINUTE": "1000000",
		"CARGO_RATE_LIMIT_PER_HOUR":   "10000000",
		"CARGO_RATE_LIMIT_PER_DAY":    "10000000",
		// Receivers run on loopback; retries come quickly.
		"CARGO_WEBHOOK_ALLOW_PRIVATE":  "true",
		"CARGO_WEBHOOK_RETRY_SCHEDULE": "100ms,100ms,100ms,100ms,100ms",
	}
	for k, v := range env {
		vars[k] = v
	}
	return vars
}

// request is one call to the API.
type request struct {
	method, path string
	token        string // bearer token, if any
	body         any    // marshalled as JSON unless a string or []byte
	contentType  string // default application/json when there is a body
	header       map[string]string
}

// response is what came back.
type response struct {
	status int
	header http.Header
	body   []byte
	closed bool // the server closes the connection (Connection: close, which the client takes out of header)
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d is not JSON: %v\n%s", r.status, err, r.body)
	}
}

// apiError is the spec's error body.
type apiError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"errorDescription"`
	ErrorURI         string `json:"errorUri"`
	ValidationErrors []struct {
		Field, Message, Code string
	} `json:"validationErrors"`
}

func (r response) apiError(t testing.TB) apiError {
	t.Helper()
	var e apiError
	r.json(t, &e)
	return e
}

// do sends the request and checks request and response against the
// OpenAPI document.
func (s *testServer) do(t testing.TB, req request) response {
	t.Helper()
	var body []byte
	switch b := req.body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	hr, err := http.NewRequest(req.method, s.base+req.path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		ct := req.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if req.token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.token)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	return s.send(t, hr, body)
}

// doAtOnce sends n requests, req(i) for each i, all at once, and returns
// their responses in that order.
func (s *testServer) doAtOnce(t testing.TB, n int, req func(i int) request) []response {
	t.Helper()
	responses := make([]response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range responses {
		wg.Go(func() {
			<-start
			responses[i] = s.do(t, req(i))
		})
	}
	close(start)
	wg.Wait()
	return responses
}

// send sends a request made elsewhere (body is what it carries, as far
// as the caller knows it) and checks it and its response against the
// OpenAPI document.
func (s *testServer) send(t testing.TB, hr *http.Request, body []byte) response {
	t.Helper()
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", hr.Method, hr.URL.Path, err)
	}
	defer resp.Body.Close()
	out := response{status: resp.StatusCode, header: resp.Header, closed: resp.Close}
	if out.body, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	s.doc.check(t, hr, body, out)
	return out
}

// token gets an access token with the client credentials grant.
func (s *testServer) token(t testing.TB, clientID, secret string) string {
	t.Helper()
	return s.grant(t, map[string]string{"grantType": "client_credentials", "clientId": clientID, "clientSecret": secret})
}

// grant gets an access token with a token request.
func (s *testServer) grant(t testing.TB, body map[string]string) string {
	t.Helper()
	r := s.do(t, request{method: "POST", path: "/api/auth/token", body: body})
	if r.status != http.StatusOK {
		t.Fatalf("token %v: %d %s", body["clientId"]+body["username"], r.status, r.body)
	}
	var tok struct{ AccessToken string }
	r.json(t, &tok)
	return tok.AccessToken
}

// demoToken is a token of one of the demo clients.
func (s *testServer) demoToken(t testing.TB, clientID string) string {
	return s.token(t, clientID, clientID+"-secret")
}

// apiDoc checks traffic against the served OpenAPI document.
type apiDoc struct {
	paths    map[string]map[string]any
	raw      any
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

const docURL = "https://cargostream.invalid/openapi.json"

var (
	docOnce   sync.Once
	sharedDoc *apiDoc
	docErr    error
)

// loadDoc reads the document the server embeds (the same bytes it serves
// at /openapi.json, which TestServedDocuments checks).
func loadDoc(t testing.TB) *apiDoc {
	t.Helper()
	docOnce.Do(func() { sharedDoc, docErr = parseDoc(httpapi.OpenAPIDocument()) })
	if docErr != nil {
		t.Fatalf("openapi.json: %v", docErr)
	}
	return sharedDoc
}

func parseDoc(b []byte) (*apiDoc, error) {
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, raw); err != nil {
		return nil, err
	}
	d := &apiDoc{raw: raw, compiler: c, schemas: map[string]*jsonschema.Schema{}, paths: map[string]map[string]any{}}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	d.paths = doc.Paths
	return d, nil
}

// pointer escapes a JSON pointer token.
func pointer(tokens ...string) string {
	for i, tok := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	return "#/" + strings.Join(tokens, "/")
}

// lookup follows a JSON pointer (and any $ref it meets at the end) in the
// document.
func (d *apiDoc) lookup(ptr string) (any, string) {
	for range 5 {
		v := any(d.raw)
		for _, tok := range strings.Split(strings.TrimPrefix(ptr, "#/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := v.(map[string]any)
			if !ok {
				return nil, ptr
			}
			if v, ok = m[tok]; !ok {
				return nil, ptr
			}
		}
		m, ok := v.(map[string]any)
		ref, isRef := m["$ref"].(string)
		if !ok || !isRef {
			return v, ptr
		}
		ptr = ref
	}
	return nil, ptr
}

func (d *apiDoc) validate(t testing.TB, what, ptr string, body []byte) {
	t.Helper()
	d.mu.Lock()
	sch, ok := d.schemas[ptr]
	if !ok {
		var err error
		if sch, err = d.compiler.Compile(docURL + ptr); err != nil {
			d.mu.Unlock()
			t.Errorf("%s: schema %s does not compile: %v", what, ptr, err)
			return
		}
		d.schemas[ptr] = sch
	}
	d.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("%s: body is not JSON: %v\n%s", what, err, body)
		return
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not match the OpenAPI document (%s): %v\n%s", what, ptr, err, body)
	}
}

// template finds the documented path that matches a request path.
func (d *apiDoc) template(path string) (string, bool) {
	segs := strings.Split(path, "/")
	for tpl := range d.paths {
		ts := strings.Split(tpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		match := true
		for i := range ts {
			if ts[i] != segs[i] && !(strings.HasPrefix(ts[i], "{") && segs[i] != "") {
				match = false
				break
			}
		}
		if match {
			return tpl, true
		}
	}
	return "", false
}

func (d *apiDoc) check(t testing.TB, req *http.Request, reqBody []byte, resp response) {
	t.Helper()
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.Path, resp.status)
	tpl, ok := d.template(req.URL.Path)
	method := strings.ToLower(req.Method)
	if !ok || d.paths[tpl][method] == nil {
		// Unknown endpoints still answer with the documented error body.
		if resp.status != http.StatusNotFound && resp.status != http.StatusMethodNotAllowed {
			t.Errorf("%s: the endpoint is not in the OpenAPI document", what)
		}
		d.validate(t, what, pointer("components", "schemas", "Error"), resp.body)
		return
	}
	op := pointer("paths", tpl, method)
	respObj, respPtr := d.lookup(op + "/responses/" + fmt.Sprint(resp.status))
	if respObj == nil {
		if resp.status == http.StatusMethodNotAllowed || resp.status == http.StatusTooManyRequests {
			d.validate(t, what, pointer("components", "schemas", "Error"), resp.body)
			return
		}
		t.Errorf("%s: status %d is not documented for this operation", what, resp.status)
		return
	}
	ct, _, _ := strings.Cut(resp.header.Get("Content-Type"), ";")
	if len(resp.body) > 0 {
		// A file (a document) may be of any type where the document
		// says */*.
		if schema, _ := d.lookup(respPtr + "/content/" + strings.ReplaceAll(ct, "/", "~1") + "/schema"); schema != nil {
			if ct == "application/json" {
				d.validate(t, what, respPtr+"/content/application~1json/schema", resp.body)
			}
		} else if schema, _ := d.lookup(respPtr + "/content/*~1*/schema"); schema == nil {
			t.Errorf("%s: content type %q is not documented", what, ct)
		}
	}
	reqCT, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
	if resp.status < 300 && len(reqBody) > 0 && reqCT == "application/json" {
		if schema, ptr := d.lookup(op + "/requestBody"); schema == nil {
			t.Errorf("%s: the request body is not documented", what)
		} else {
			d.validate(t, what+" (request)", ptr+"/content/application~1json/schema", reqBody)
		}
	}
}

// form encodes a form post body.
func form(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

// passwordToken gets an access token with the password grant.
func (s *testServer) passwordToken(t testing.TB, username, password string) string {
	t.Helper()
	return s.grant(t, map[string]string{"grantType": "password", "username": username, "password": password})
}

// mustCreate posts body to path and expects 201.
func (s *testServer) mustCreate(t testing.TB, token, path string, body any) response {
	t.Helper()
	r := s.do(t, request{method: "POST", path: path, token: token, body: body})
	if r.status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.status, r.body)
	}
	return r
}

// apiCase is one row of a table of requests and their outcome: the status,
// and for 400 the fields and codes, sorted, as "field:CODE field:CODE".
type apiCase struct {
	name   string
	token  string
	path   string
	body   map[string]any
	status int
	fields string
}

// runCases sends each case with method as a subtest and checks its outcome.
func (s *testServer) runCases(t *testing.T, method string, cases []apiCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: method, path: tt.path, token: tt.token, body: tt.body})
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if r.status == 400 {
				checkFields(t, r, tt.fields)
			}
		})
	}
}

// startOfAMinute waits for the next UTC minute when less than need is
// left of this one: the token endpoint's guessing limits count in windows
// aligned to the UTC minute, and a test that counts up to a limit must
// make its tries in one window, or the last is counted in a new one (a
// test waited for a 429 and got a 401 so).
func startOfAMinute(t *testing.T, need time.Duration) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(time.Minute).Add(time.Minute).Sub(now); left < need {
		time.Sleep(left)
	}
}
