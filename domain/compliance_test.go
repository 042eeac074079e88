package domain

import (
	"testing"
	"time"
)

func TestDecideCSD(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	base := func() SubmitCSD {
		return SubmitCSD{CSDSubmitted: CSDSubmitted{AWBNumber: "020-00000011", ScreeningResult: "pass", SubmittedAt: now},
			ScreeningMethod: "xry", ScreeningDate: "2026-11-25T10:00:00Z"}
	}
	tests := []struct {
		name   string
		change func(c *SubmitCSD)
		status string // the status recorded, or the first problem's code
	}{
		{"screened", func(*SubmitCSD) {}, "SPX"},
		{"several methods", func(c *SubmitCSD) { c.ScreeningMethod = ""; c.ScreeningMethods = []string{"EDD", "etd", "EDD"} }, "SPX"},
		{"failed is NSC", func(c *SubmitCSD) { c.ScreeningResult = "fail" }, "NSC"},
		{"exempt mail", func(c *SubmitCSD) {
			c.ScreeningMethod, c.ScreeningResult, c.ScreeningDate, c.Exemption = "", "", "", "MAIL"
		}, "SPX"},
		{"failed but secure", func(c *SubmitCSD) { c.ScreeningResult, c.SecurityStatus = "fail", "SHR" }, "INVALID_SECURITY_STATUS"},
		{"secure unscreened", func(c *SubmitCSD) { c.ScreeningMethod, c.ScreeningResult = "", "" }, "INVALID_SCREENING_RESULT"},
		{"unknown exemption", func(c *SubmitCSD) { c.Exemption = "VIP" }, "INVALID_EXEMPTION"},
		{"future screening", func(c *SubmitCSD) { c.ScreeningDate = "2026-11-25T14:00:00Z" }, CodeInvalidDate},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideCSD(c)
		got := ""
		if e, ok := err.(*Error); ok {
			got = e.Fields[0].Code
		} else if err == nil {
			got = events[0].(CSDSubmitted).SecurityStatus
		}
		if got != tt.status {
			t.Errorf("%s = %q (%v), want %q", tt.name, got, err, tt.status)
		}
	}
}
