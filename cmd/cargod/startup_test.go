package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

// TestThePortOpensBeforeTheEventStoreIsThere starts cargod against a NATS
// server that is not up yet: /healthz answers at once, /readyz and the
// API answer 503 saying that it is starting, and once the server comes the
// API serves.
func TestThePortOpensBeforeTheEventStoreIsThere(t *testing.T) {
	t.Parallel()
	ports := natstest.FreePorts(t, 2)
	httpPort, natsPort := ports[0], ports[1]
	r := startReplica(t.TempDir(), map[string]string{"CARGO_ADDR": fmt.Sprintf("127.0.0.1:%d", httpPort),
		"CARGO_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", natsPort), "CARGO_NATS_REPLICAS": "1", "CARGO_DEMO": "true", "CARGO_SIGNING_KEY": "", "CARGO_LOG_LEVEL": "info",
		"CARGO_SECRETS_KEY": testSecretsKey})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: fmt.Sprintf("http://127.0.0.1:%d", httpPort), doc: loadDoc(t)}

	eventually(t, "/healthz while NATS is away", func() int {
		resp, err := http.Get(s.base + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}, func(status int) bool { return status == http.StatusOK })
	// No caller can be told more while the replica starts (none can be
	// authenticated yet): the log says how far it has come.
	if got := s.do(t, request{method: "GET", path: "/readyz"}); got.status != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while starting = %d %s", got.status, got.body)
	} else if string(got.body) != `{"status":"not ready"}`+"\n" {
		t.Errorf("/readyz while starting = %s", got.body)
	}
	if logged := r.stderr.String(); !strings.Contains(logged, `"msg":"not ready yet","reason":"starting: connecting to NATS`) {
		t.Errorf("the log while starting:\n%s", logged)
	}
	got := s.do(t, request{method: "POST", path: "/api/quotes", body: rfq()})
	if e := got.apiError(t); got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") == "" ||
		e.Error != "service_unavailable" || !strings.Contains(e.ErrorDescription, "starting") {
		t.Errorf("a request while starting = %d, Retry-After %q, %+v", got.status, got.header.Get("Retry-After"), e)
	}

	natstest.StartServer(t, natsPort)
	if base := r.base(t); base != s.base {
		t.Fatalf("cargod listens on %s, want %s", base, s.base)
	}
	if got := s.do(t, request{method: "GET", path: "/readyz"}); got.status != http.StatusOK {
		t.Errorf("/readyz once started = %d %s", got.status, got.body)
	}
	createQuote(t, s, s.demoToken(t, "demo-forwarder"), rfq())
}
