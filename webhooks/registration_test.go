package webhooks

import (
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

// A registration checks the URL, the events and the secret at once, makes
// a secret when none is given, and seals the secret and the URL's user
// info, keeping neither as sent.
func TestARegistrationChecksEverythingAtOnceAndSealsWhatIsSecret(t *testing.T) {
	d := &Dispatcher{Sealer: testSealer(t), Guard: Guard{AllowPrivate: true}}
	const chosen = "a secret of our own choosing"
	tests := []struct {
		name, url, secret string
		events            []string
		problems          string // the fields refused, or "" when registered
		generated         bool
		userInfo          string // sealed, as opened again
	}{
		{"a secret made", "https://127.0.0.1/hooks", "", []string{"quote.created"}, "", true, ""},
		{"a secret chosen", "https://127.0.0.1/hooks", chosen, []string{"quote.*"}, "", false, ""},
		{"a receiver's password", "https://ops:pa55@127.0.0.1/hooks", chosen, []string{"*"}, "", false, "ops:pa55"},
		{"a short secret and no events", "https://127.0.0.1/hooks", "short", nil, "events secret", false, ""},
		{"a short secret alone", "https://127.0.0.1/hooks", "short", []string{"*"}, "secret", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, generated, err := d.Registration(tt.url, tt.events, tt.secret)
			var fields []string
			if e, ok := err.(*domain.Error); ok {
				for _, f := range e.Fields {
					fields = append(fields, f.Field)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(fields, " "); got != tt.problems {
				t.Fatalf("problems on %q, want %q (%v)", got, tt.problems, err)
			}
			if err != nil {
				return
			}
			secret, _, err := d.Sealer.Open(c.SealedSecret)
			switch {
			case err != nil:
				t.Fatalf("the secret does not open: %v", err)
			case tt.generated && (secret != generated || !strings.HasPrefix(generated, "whsec_")):
				t.Errorf("the secret sealed is %q, the one made %q", secret, generated)
			case !tt.generated && (secret != tt.secret || generated != ""):
				t.Errorf("the secret sealed is %q, made %q; want the one chosen, none made", secret, generated)
			}
			if strings.Contains(c.URL, "pa55") || string(c.SealedSecret) == tt.secret {
				t.Errorf("a secret is kept as sent: %+v", c)
			}
			if tt.userInfo != "" {
				if info, _, err := d.Sealer.Open(c.SealedUserInfo); err != nil || info != tt.userInfo {
					t.Errorf("the user info opens as %q (%v), want %q", info, err, tt.userInfo)
				}
			}
		})
	}
}
