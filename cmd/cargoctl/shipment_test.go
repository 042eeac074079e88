package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/projections"
	"golang.org/x/crypto/bcrypt"
)

func TestShipmentPrintsTheWholeLifeOfAnAWB(t *testing.T) {
	svc := startService(t)
	url, store, projector := svc.url, svc.store, svc.projector
	ctx := context.Background()
	// The airline's status events of a shipment, posted as its API would:
	// the reference data names the airports.
	ref := projections.NewReference()
	ref.Apply(domain.Record{}, domain.ReferenceChanged{Airports: domain.BuiltinAirports(), Airlines: domain.BuiltinAirlines()})
	cmds := commands.New(store, bcrypt.MinCost, ref)
	lh := domain.Principal{Subject: "client:lh-ops", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	const awb = "020-12345675"
	pieces := 4
	var last uint64
	for i, code := range []string{"RCS", "DEP"} {
		res, _, err := cmds.RecordShipmentStatus(ctx, commands.NewMeta(lh, "", "req-"+code), domain.RecordStatus{AWBNumber: awb, EventType: code,
			EventDate: time.Date(2026, 11, 26, 10+i, 0, 0, 0, time.UTC).Format(time.RFC3339), Location: "FRA", Pieces: &pieces}, projections.NewBookings(), "")
		if err != nil {
			t.Fatal(err)
		}
		last = res.Sequence
	}
	if err := projector.WaitFor(ctx, last); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := runCmd(t, adminEnv(url), "shipment", "02012345675")
	if err != nil {
		t.Fatalf("shipment: %v\n%s", err, errOut)
	}
	// The time in UTC to the millisecond, of one width: lines sort and
	// align as text.
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  client:lh-ops  shipment/020-12345675  ShipmentStatusRecorded  awbNumber=020-12345675  ` +
		`eventDate=2026-11-26T1[01]:00:00Z  eventId=\S+  eventType=(RCS|DEP)  location=FRA  pieces=4  recordedAt=\S+$`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !line.MatchString(lines[0]) || !line.MatchString(lines[1]) ||
		!strings.Contains(lines[0], "eventType=RCS") || !strings.Contains(lines[1], "eventType=DEP") {
		t.Errorf("stdout:\n%s", out)
	}
	if errOut != "2 events of 020-12345675\n" {
		t.Errorf("stderr %q", errOut)
	}

	out, _, err = runCmd(t, adminEnv(url), "shipment", "--json", awb)
	if err != nil {
		t.Fatal(err)
	}
	// Flags may follow the AWB number, as they may follow the arguments
	// of state and parked retry.
	if after, _, err := runCmd(t, adminEnv(url), "shipment", awb, "--json"); err != nil || after != out {
		t.Errorf("shipment AWB --json: %v\n%s\nwant\n%s", err, after, out)
	}
	var correlations []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var e struct {
			Type, AggregateType, AggregateID, Actor, CorrelationID string
			Sequence                                               uint64
			Data                                                   map[string]any
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Type != "ShipmentStatusRecorded" || e.AggregateID != awb || e.Data["location"] != "FRA" {
			t.Errorf("JSON line %q: %v", l, err)
		}
		correlations = append(correlations, e.CorrelationID)
	}
	if strings.Join(correlations, ",") != "req-RCS,req-DEP" {
		t.Errorf("correlation ids %v", correlations)
	}

	down := "http://" + closedPort(t)
	for _, tt := range []struct {
		name  string
		args  []string
		url   string
		err   string
		usage bool
	}{
		{"a malformed AWB number", []string{"020-12345670"}, url, `"020-12345670" is not an AWB number`, true},
		{"no AWB number", nil, url, "give one AWB number, not 0 arguments", true},
		{"an AWB number nothing names", []string{"176-12345675"}, url, "no shipment 176-12345675: no event of a shipment names it, or none the client may see", false},
		{"a server that is down", []string{awb}, down, "cargod at " + down + " does not answer", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, adminEnv(tt.url), append([]string{"shipment"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.err) || (exitCode(err) == 2) != tt.usage {
				t.Errorf("error = %v, want %q (usage error: %v)", err, tt.err, tt.usage)
			}
		})
	}
}

// An event the server could not read (a bad envelope header, written into
// the stream by hand or damaged) has no type and no time in the API's
// answer: its line says the time is unknown, not the year 1, and stderr
// says which event it is and where its stored time is.
func TestShipmentSaysAnEventItCannotReadHasNoTime(t *testing.T) {
	nats := natstest.StartServer(t, 0)
	url := startServiceOn(t, eventstore.Options{URL: nats}).url
	const awb = "020-12345675"
	natstest.Publish(t, nats, "cargo.evt.shipment."+awb, map[string]string{
		"Cargo-Event-Type": "ShipmentStatusRecorded", "Cargo-Schema-Version": "1", "Cargo-Event-Id": "e-bad", "Cargo-Actor": "client:lh-ops",
		"Cargo-Occurred-At": "yesterday",
	}, []byte(`{"location":"FRA"}`))

	out, _, err := runCmd(t, adminEnv(url), "shipment", "--json", awb)
	var e struct{ Sequence uint64 }
	if err != nil || json.Unmarshal([]byte(out), &e) != nil || e.Sequence == 0 {
		t.Fatalf("shipment --json: %v, %q", err, out)
	}
	out, errOut, err := runCmd(t, adminEnv(url), "shipment", awb)
	if err != nil {
		t.Fatalf("shipment: %v\n%s", err, errOut)
	}
	if want := "(time unknown)            client:lh-ops  shipment/020-12345675  ?  location=FRA\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if seq := fmt.Sprint(e.Sequence); !strings.Contains(errOut, "sequence "+seq+": ") || !strings.Contains(errOut, "cargoctl events --from-seq "+seq+" --to-seq "+seq) {
		t.Errorf("stderr %q, want which event and where its stored time is", errOut)
	}
}
