package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// airlineFlight makes airline LH with a client, schedules a flight of
// it, delays it, and returns the flight's id and a moment between the two.
func airlineFlight(t *testing.T, url string) (id, between string) {
	t.Helper()
	getenv := adminEnv(url)
	for _, args := range [][]string{
		{"admin", "create-org", "--id", "lh", "--name", "Lufthansa Cargo", "--role", "airline", "--awb-prefix", "020", "--iata-code", "LH"},
		{"admin", "create-client", "--org", "lh", "--client-id", "lh-ops", "--secret-file", secretFile(t, "lh-ops-secret-1234")},
	} {
		if _, errOut, err := runCmd(t, getenv, args...); err != nil {
			t.Fatalf("%v: %v %s", args, err, errOut)
		}
	}
	_, tok := send(t, url, "/api/auth/token", nil, `{"grantType":"client_credentials","clientId":"lh-ops","clientSecret":"lh-ops-secret-1234"}`)
	auth := map[string]string{"Authorization": "Bearer " + tok["accessToken"].(string)}
	date := time.Now().UTC().AddDate(0, 0, 5).Format(time.DateOnly)
	status, f := send(t, url, "/api/flights", auth, `{"flightNumber":"LH1300","origin":"FRA","destination":"LHR","departureDate":"`+date+
		`","departureTime":"09:00","arrivalDate":"`+date+`","arrivalTime":"10:10","aircraftType":"A333"}`)
	if status != http.StatusCreated {
		t.Fatalf("schedule: %d %v", status, f)
	}
	id = f["id"].(string)
	between = time.Now().UTC().Format(time.RFC3339Nano)
	req, _ := http.NewRequest(http.MethodPatch, url+"/api/flights/"+id, strings.NewReader(`{"status":"delayed"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth["Authorization"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("delay: %d %s", resp.StatusCode, body)
	}
	return id, between
}

func TestStatePrintsAResourceAsTheAPIShowedItThen(t *testing.T) {
	url := startServer(t)
	getenv := adminEnv(url)
	id, between := airlineFlight(t, url)
	before := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)

	out, notes, err := runCmd(t, getenv, "state", "flight", id, "--at", between)
	if err != nil {
		t.Fatalf("%v; stderr %s", err, notes)
	}
	then := decode(t, out)
	wantFields(t, then, map[string]any{"id": id, "status": "scheduled"})
	version := strings.TrimPrefix(strings.TrimSpace(notes), "flight "+id+" at version ")
	if version == strings.TrimSpace(notes) || version == "" {
		t.Fatalf("stderr %q does not name the version", notes)
	}

	tests := []struct {
		name   string
		args   []string
		status string // of the flight printed, or ""
		err    string // what the error must contain, or ""
		usage  bool
	}{
		{"by sequence, the flags first", []string{"state", "--seq", version, "flight", id}, "scheduled", "", false},
		{"now", []string{"state", "flight", id, "--at", time.Now().UTC().Format(time.RFC3339Nano)}, "delayed", "", false},
		{"before it was scheduled", []string{"state", "flight", id, "--at", before}, "", "did not exist at", false},
		{"an unknown flight", []string{"state", "flight", "LH9-2026-01-01", "--at", between}, "", "(HTTP 404, not_found)", false},
		{"an unknown type", []string{"state", "aircraft", id, "--at", between}, "", `unknown type "aircraft": one of booking, flight, quote, shipment, stock-request`, true},
		{"a type in another case", []string{"state", "Booking", id, "--at", between}, "", `unknown type "Booking" (did you mean booking?): one of booking,`, true},
		{"neither --at nor --seq", []string{"state", "flight", id}, "", "give --at TIME or --seq N", true},
		{"both --at and --seq", []string{"state", "flight", id, "--at", between, "--seq", "3"}, "", "give --at TIME or --seq N, not both", true},
		// Given, though zero or empty: named, not taken for a flag left out.
		{"--seq 0", []string{"state", "flight", id, "--seq", "0"}, "", "--seq 0 is no stream sequence: the first is 1", true},
		{"an empty --at", []string{"state", "flight", id, "--at", ""}, "", "--at is empty", true},
		{"--seq 0 with --at", []string{"state", "flight", id, "--at", between, "--seq", "0"}, "", "give --at TIME or --seq N, not both", true},
		// A plain date, as cargoctl events --since takes it: the day's first instant, UTC.
		{"a plain date", []string{"state", "flight", id, "--at", yesterday}, "", "did not exist at " + yesterday + "T00:00:00Z", false},
		{"--at neither a time nor a date", []string{"state", "flight", id, "--at", "yesterday"}, "",
			`--at: "yesterday" is neither an RFC 3339 time (2026-11-25T10:00:00Z) nor a date (2026-11-25)`, true},
		{"no id", []string{"state", "flight", "--at", between}, "", "give TYPE and ID, not 1 arguments", true},
		// A shell variable that is not set: not a GET of the list, which has no ?at=.
		{"an empty id", []string{"state", "flight", "", "--at", between}, "", "the flight id is empty", true},
		// As cargoctl shipment refuses it, before asking the server.
		{"a malformed AWB number", []string{"state", "shipment", "176-1234", "--seq", "1"}, "", `"176-1234" is not an AWB number`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, getenv, tt.args...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || (exitCode(err) == 2) != tt.usage || out != "" {
					t.Errorf("error %v (exit %d), printed %q; want %q", err, exitCode(err), out, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantFields(t, decode(t, out), map[string]any{"id": id, "status": tt.status})
		})
	}
}
