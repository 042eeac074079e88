package main

import (
	"strings"
	"testing"
)

func TestTraceTellsWhatOneRequestCaused(t *testing.T) {
	dir := dataDirWithEvents(t)
	tests := []struct {
		name       string
		args       []string
		out, notes string // stdout; what stderr must contain
		err        string // what the error must contain, or ""
	}{
		{"a request and the step a reactor took after it", []string{"corr1"},
			"2026-11-24T10:00:00.000Z  #1      quote/q1  QuoteRequested  by user:alice for acme, after event cause1\n" +
				"2026-11-25T12:30:00.123Z  #4      quote/q1  QuotePriced  by client:lh for lh, after event e1\n",
			"2 events over 26h30m0.123s", ""},
		{"as JSON lines", []string{"--json", "corr1"}, linesOf(1, 4), "", ""},
		{"flags after the correlation id", []string{"corr1", "--json"}, linesOf(1, 4), "", ""},
		{"an event without actor or tenant", []string{"c2"},
			"2026-11-24T23:59:59.500Z  #2      org/acme  OrganizationCreated  by system:cargod\n", "1 event over 0s", ""},
		{"no such request", []string{"nobody"}, "", "", `no event has correlation id "nobody"`},
		{"no correlation id", nil, "", "", "give one correlation id, not 0 arguments"},
		{"two correlation ids", []string{"corr1", "c2"}, "", "", "give one correlation id, not 2 arguments"},
		// A shell variable that is not set: not a trace of every event.
		{"an empty correlation id", []string{""}, "", "", "the correlation id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), append([]string{"trace", "--data-dir", dir}, tt.args...)...)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error = %v, want %q", err, tt.err)
			case tt.err == "" && err != nil:
				t.Errorf("error = %v", err)
			}
			if out != tt.out || !strings.Contains(errOut, tt.notes) {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr %q, want it to contain %q", out, tt.out, errOut, tt.notes)
			}
		})
	}
}
