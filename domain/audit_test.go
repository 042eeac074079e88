package domain

import (
	"strings"
	"testing"
)

func TestCheckAuditFilterRefusesWhatNoEntryHas(t *testing.T) {
	// A refusal names the accepted values.
	accepted := map[string]string{
		"action":   "must be one of create, update, token.issued, login.failed, token.rejected, access.denied",
		"resource": "must be one of org, client, user, apikey, authorization, quote, booking, ",
	}
	for _, c := range []struct {
		name, action, resource string
		want                   string // the fields refused, as "field:CODE …"
	}{
		{"no filter", "", "", ""},
		{"a data change", "update", "booking", ""},
		{"an authorization event", "login.failed", "authorization", ""},
		{"a shared aggregate", "", "awbprefix", ""},
		{"the webhook guard", "", "webhookquota", ""},
		{"a resource by its API name", "", "awbStockRequest", "resource:INVALID_VALUE"},
		{"the authorization aggregate's own type, which no entry shows", "", "auth", "resource:INVALID_VALUE"},
		{"a resource in another case", "", "Booking", "resource:INVALID_VALUE"},
		{"an action no entry has", "delete", "", "action:INVALID_VALUE"},
		{"both unknown", "created", "quotes", "action:INVALID_VALUE resource:INVALID_VALUE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Problems
			CheckAuditFilter(c.action, c.resource, &p)
			var got []string
			for _, f := range p {
				got = append(got, f.Field+":"+string(f.Code))
				if want := accepted[f.Field]; !strings.HasPrefix(f.Message, want) {
					t.Errorf("%s: %q, want it to begin %q", f.Field, f.Message, want)
				}
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("refused %v, want %q", got, c.want)
			}
		})
	}
}
