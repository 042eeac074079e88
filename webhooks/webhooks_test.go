package webhooks

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func TestSignVerifiesWithTheOfficialLibrary(t *testing.T) {
	body := []byte(`{"type":"quote.created"}`)
	ts := time.Now().Unix()
	generated := NewSecret()
	for _, tt := range []struct {
		secret string
		lib    func() (*standardwebhooks.Webhook, error)
	}{
		{generated, func() (*standardwebhooks.Webhook, error) { return standardwebhooks.NewWebhook(generated) }},
		{"a plain shared secret", func() (*standardwebhooks.Webhook, error) {
			return standardwebhooks.NewWebhookRaw([]byte("a plain shared secret"))
		}},
	} {
		wh, err := tt.lib()
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("webhook-id", "msg_1")
		h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		h.Set("webhook-signature", Sign(tt.secret, "msg_1", ts, body))
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("secret %.10s…: %v", tt.secret, err)
		}
		h.Set("webhook-signature", Sign(tt.secret, "msg_2", ts, body))
		if wh.Verify(body, h) == nil {
			t.Error("a signature for another id verified")
		}
	}
}

func TestValidSecret(t *testing.T) {
	for _, tt := range []struct {
		secret string
		ok     bool
	}{
		{NewSecret(), true},
		{"whsec_c2hvcnQ=", false}, // 5 bytes
		{"whsec_!!!", false},
		{"sixteen chars ok", true},
		{"short", false},
		// A plain secret is counted in characters, as README, the
		// OpenAPI schema's maxLength and the refusal count it.
		{strings.Repeat("ä", 8), false},
		{strings.Repeat("ä", 128), true},
		{strings.Repeat("x", 129), false},
		{strings.Repeat(" ", 20), false},
		{strings.Repeat("\t", 16), false},
		{"  sixteen chars ok  ", true},
	} {
		if got := ValidSecret(tt.secret) == ""; got != tt.ok {
			t.Errorf("ValidSecret(%q) = %v", tt.secret, got)
		}
	}
}

// A host name is refused alike whether it does not resolve or resolves
// to an address of the service's own network: told apart, the refusals
// would tell whoever registers names which internal names exist.
func TestANameThatDoesNotResolveAndOneThatResolvesInsideAreRefusedAlike(t *testing.T) {
	names := map[string][]netip.Addr{
		"hooks.example":    {netip.MustParseAddr("192.0.2.10")},
		"db.corp.example":  {netip.MustParseAddr("10.0.0.7")},
		"mixed.example":    {netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("127.0.0.1")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
	}
	g := Guard{Lookup: func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if addrs, ok := names[host]; ok {
			return addrs, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	for _, tt := range []struct{ host, want string }{
		{"hooks.example", ""},
		{"db.corp.example", "db.corp.example does not resolve to a public address: a webhook target must be reachable on the public internet"},
		{"mixed.example", "mixed.example does not resolve to a public address: a webhook target must be reachable on the public internet"},
		{"metadata.example", "metadata.example does not resolve to a public address: a webhook target must be reachable on the public internet"},
		{"nothing.example", "nothing.example does not resolve to a public address: a webhook target must be reachable on the public internet"},
	} {
		if got := g.Check(&url.URL{Scheme: "https", Host: tt.host, Path: "/hooks"}); got != tt.want {
			t.Errorf("Check(%s) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

func TestGuard(t *testing.T) {
	g := Guard{}
	for _, tt := range []struct {
		url     string
		allowed bool
	}{
		{"http://127.0.0.1/", false},
		{"http://[::1]:8080/", false},
		{"http://169.254.169.254/latest/meta-data", false},
		{"http://10.0.0.1/", false},
		{"http://192.168.1.1/", false},
		{"http://100.64.0.1/", false},
		{"http://0.1.2.3/", false},
		{"http://255.255.255.255/", false},
		{"http://198.18.0.1/", false},
		{"http://[64:ff9b::a9fe:a9fe]/", false},
		{"http://[2002:a9fe:a9fe::1]/", false},
		// Teredo: a client at 10.0.0.1, port 80 (both inverted), behind the
		// server 192.0.2.1.
		{"http://[2001:0:c000:201::ffaf:f5ff:fffe]/", false},
		{"http://[::a9fe:a9fe]/", false},
		{"http://[::ffff:169.254.169.254]/", false},
		{"http://[fec0::1]/", false},
		{"http://168.63.129.16/metadata/instance", false},
		{"http://168.63.129.17/", true},
		{"http://user:pw@127.0.0.1/", false},
		{"ftp://192.0.2.1/", false},
		{"https://192.0.2.1/hooks", true},
	} {
		u, _ := url.Parse(tt.url)
		if got := g.Check(u) == ""; got != tt.allowed {
			t.Errorf("Check(%s) allowed = %v", tt.url, got)
		}
	}
	// A name that resolves to an internal address is refused without
	// saying where it points: the tenant learns nothing of our network.
	u, _ := url.Parse("http://localhost:8080/hooks")
	if why := g.Check(u); !strings.Contains(why, "does not resolve to a public address") || strings.Contains(why, "127.0.0.1") || strings.Contains(why, "::1") {
		t.Errorf("Check(localhost) = %q, want a refusal that names no address", why)
	}
	if err := g.control("tcp", "127.0.0.1:80", nil); err == nil {
		t.Error("a connection to loopback was allowed")
	}
	if err := (Guard{AllowPrivate: true}).control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
}

// A new webhook key seals new secrets; the key it replaces still opens the
// secrets sealed with it, which stay so in the events that registered
// them, and says so; without it they cannot be opened.
func TestASealerOpensWhatTheKeyItReplacesSealed(t *testing.T) {
	oldKey, newKey, otherKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)
	seal := func(key []byte, secret string) []byte {
		s, err := NewSealer(key, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.Seal(secret)
	}
	sealedOld, sealedNew := seal(oldKey, "whsec_old"), seal(newKey, "whsec_new")
	tests := []struct {
		name          string
		key, previous []byte
		sealed        []byte
		want          string // the secret opened, and "(previous)" if by the previous key, or "refused"
	}{
		{"the new key opens its own", newKey, oldKey, sealedNew, "whsec_new"},
		{"the previous key opens the old", newKey, oldKey, sealedOld, "whsec_old (previous)"},
		{"the new key alone does not open the old", newKey, nil, sealedOld, "refused"},
		{"another previous key does not open the old", newKey, otherKey, sealedOld, "refused"},
		{"a short previous key", newKey, []byte("short"), nil, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSealer(tt.key, tt.previous)
			got := "refused"
			if err == nil {
				if secret, previous, err := s.Open(tt.sealed); err == nil {
					got = secret
					if previous {
						got += " (previous)"
					}
				}
			}
			if got != tt.want {
				t.Errorf("opened %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScheduleSealerJitter(t *testing.T) {
	s, err := NewSealer(make([]byte, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal("whsec_secret")
	if got, previous, err := s.Open(sealed); err != nil || previous || got != "whsec_secret" || string(sealed) == "whsec_secret" {
		t.Errorf("round trip = %q, %v", got, err)
	}
	if _, err := NewSealer([]byte("short"), nil); err == nil {
		t.Error("a short key was accepted")
	}
	for range 100 {
		if d := jitter(time.Second); d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("jitter(1s) = %s", d)
		}
	}
}

func TestADeliveryPutBackWaitsATenthOfASecondDoublingToAMinute(t *testing.T) {
	for _, tt := range []struct {
		requeued, tried int
		want            time.Duration
	}{
		{0, 0, 100 * time.Millisecond},
		{1, 0, 200 * time.Millisecond},
		{5, 5, 100 * time.Millisecond}, // five retries, never put back
		{6, 5, 200 * time.Millisecond},
		{10, 0, time.Minute},
		{37, 0, time.Minute},
		{80, 2, time.Minute}, // far past 37 doublings of 0.1 s, which no Duration holds
	} {
		if got := putBackDelay(job{Requeued: tt.requeued, Tried: tt.tried}); got < tt.want*8/10 || got > tt.want*12/10 {
			t.Errorf("putBackDelay after %d jobs and %d attempts = %s, want %s ±20%%", tt.requeued, tt.tried, got, tt.want)
		}
	}
}

func TestRetryAfterOf(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		header string
		want   time.Duration
	}{
		{"120", 2 * time.Minute},
		{"Fri, 27 Nov 2026 12:05:00 GMT", 5 * time.Minute},
		{"Fri, 27 Nov 2026 11:55:00 GMT", 0}, // past
		{"0", 0},
		{"-5", 0},
		{"999999", 24 * time.Hour},
		{"99999999999999", 24 * time.Hour},
		{"99999999999999999999", 24 * time.Hour}, // more than an int64 holds
		{"-9223372037", 0},                       // times a second, past what an int64 holds
		{"-99999999999999999999", 0},
		{"soon", 0},
		{"", 0},
	} {
		if got := retryAfterOf(tt.header, now); got != tt.want {
			t.Errorf("retryAfterOf(%q) = %s, want %s", tt.header, got, tt.want)
		}
	}
}
