package main

import (
	"strings"
	"testing"
	"time"
)

func TestComplianceFilings(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	placi := func(change map[string]any) map[string]any {
		m := map[string]any{"awbNumber": awb, "origin": "FRA", "destination": "JFK", "departureDate": tomorrow,
			"cargoDescription": "CNC milling machine spare parts", "shipperName": "ACME Machine Tools", "consigneeName": "Globex Inc"}
		for k, v := range change {
			m[k] = v
		}
		return m
	}
	screened := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	csd := func(change map[string]any) map[string]any {
		m := map[string]any{"awbNumber": awb, "screeningMethod": "XRY", "screeningDate": screened, "screeningResult": "pass"}
		for k, v := range change {
			m[k] = v
		}
		return m
	}
	// Every field of the answers.
	var pl struct {
		PLACIID, AWBNumber, Status, Origin, Destination, DepartureDate, CargoDescription, ShipperName, ConsigneeName string
		ShipperAddress, ConsigneeAddress                                                                             *string
		Pieces                                                                                                       *int
		Weight                                                                                                       *float64
		SubmittedAt                                                                                                  time.Time
	}
	s.mustCreate(t, fwd, "/api/placi", placi(map[string]any{"shipperAddress": "1 Tool Street, Stuttgart", "pieces": 2, "weight": 350.5})).json(t, &pl)
	if pl.PLACIID == "" || pl.AWBNumber != awb || pl.Status != "submitted" || pl.Origin != "FRA" || pl.Destination != "JFK" ||
		pl.DepartureDate != tomorrow || pl.CargoDescription != "CNC milling machine spare parts" || pl.ShipperName != "ACME Machine Tools" ||
		pl.ConsigneeName != "Globex Inc" || *pl.ShipperAddress != "1 Tool Street, Stuttgart" || pl.ConsigneeAddress != nil ||
		*pl.Pieces != 2 || *pl.Weight != 350.5 || pl.SubmittedAt.IsZero() {
		t.Errorf("PLACI = %+v", pl)
	}
	var cs struct {
		CSDID, AWBNumber, Status, SecurityStatus string
		ScreeningMethods                         []string
		ScreeningResult, Exemption               *string
		ScreeningDate                            *time.Time
		RegulatedEntity                          *struct{ Category, Identifier string }
		SubmittedAt                              time.Time
	}
	s.mustCreate(t, fwd, "/api/csd", csd(map[string]any{"screeningMethods": []string{"ETD"}, "regulatedEntity": map[string]any{"category": "RA", "identifier": "DE/RA/01234-05"}})).json(t, &cs)
	if cs.CSDID == "" || cs.AWBNumber != awb || cs.Status != "submitted" || cs.SecurityStatus != "SPX" || strings.Join(cs.ScreeningMethods, ",") != "XRY,ETD" ||
		*cs.ScreeningResult != "PASS" || cs.Exemption != nil || cs.ScreeningDate.Format(time.RFC3339) != screened ||
		cs.RegulatedEntity.Identifier != "DE/RA/01234-05" || cs.SubmittedAt.IsZero() {
		t.Errorf("e-CSD = %+v", cs)
	}

	rival := s.rivalForwarder(t)
	tests := []apiCase{
		{"PLACI", fwd, "/api/placi", placi(nil), 201, ""},
		{"PLACI without names", fwd, "/api/placi", placi(map[string]any{"shipperName": "", "consigneeName": " "}), 400, "consigneeName:REQUIRED shipperName:REQUIRED"},
		{"PLACI too vague", fwd, "/api/placi", placi(map[string]any{"cargoDescription": "Consolidation"}), 400, "cargoDescription:INVALID_VALUE"},
		{"PLACI by an airline", lh, "/api/placi", placi(nil), 403, ""},
		{"PLACI with a bad AWB", fwd, "/api/placi", placi(map[string]any{"awbNumber": "020-12345670"}), 400, "awbNumber:INVALID_AWB_NUMBER"},
		{"PLACI to nowhere", fwd, "/api/placi", placi(map[string]any{"origin": "QQQ", "destination": "J1"}), 400, "destination:INVALID_FORMAT origin:UNKNOWN_AIRPORT"},
		{"PLACI with a bad date", fwd, "/api/placi", placi(map[string]any{"departureDate": "26/11/2026"}), 400, "departureDate:INVALID_DATE"},
		{"PLACI with no pieces", fwd, "/api/placi", placi(map[string]any{"pieces": 0, "weight": -1}), 400, "pieces:INVALID_RANGE weight:INVALID_RANGE"},
		{"PLACI too long", fwd, "/api/placi", placi(map[string]any{"shipperName": strings.Repeat("x", 201)}), 400, "shipperName:TOO_LONG"},
		{"PLACI with mistyped pieces", fwd, "/api/placi", placi(map[string]any{"pieces": "3"}), 400, "pieces:INVALID_TYPE"},
		{"PLACI without route, date or description", fwd, "/api/placi", placi(map[string]any{"origin": nil, "destination": "", "departureDate": "",
			"cargoDescription": ""}), 400, "cargoDescription:REQUIRED departureDate:REQUIRED destination:REQUIRED origin:REQUIRED"},
		{"e-CSD", fwd, "/api/csd", csd(nil), 201, ""},
		{"e-CSD by the carrier", lh, "/api/csd", csd(map[string]any{"securityStatus": "SHR", "screeningMethods": []string{"EDD"}}), 201, ""},
		{"e-CSD with an exemption", fwd, "/api/csd", csd(map[string]any{"screeningMethod": "", "screeningDate": "", "screeningResult": "", "exemption": "mail"}), 201, ""},
		{"unknown method", fwd, "/api/csd", csd(map[string]any{"screeningMethod": "SNIFF"}), 400, "screeningMethod:INVALID_SCREENING_METHOD"},
		{"unknown method in the list", fwd, "/api/csd", csd(map[string]any{"screeningMethods": []string{"EDD", "SNIFF"}}), 400, "screeningMethods[1]:INVALID_SCREENING_METHOD"},
		{"e-CSD with a bad AWB", fwd, "/api/csd", csd(map[string]any{"awbNumber": "02012345"}), 400, "awbNumber:INVALID_AWB_NUMBER"},
		{"unknown exemption", fwd, "/api/csd", csd(map[string]any{"exemption": "VIP"}), 400, "exemption:INVALID_EXEMPTION"},
		{"unknown result", fwd, "/api/csd", csd(map[string]any{"screeningResult": "maybe"}), 400, "screeningResult:INVALID_SCREENING_RESULT"},
		{"no screening date", fwd, "/api/csd", csd(map[string]any{"screeningDate": ""}), 400, "screeningDate:REQUIRED"},
		{"regulated entity too long", fwd, "/api/csd", csd(map[string]any{"regulatedEntity": map[string]any{"category": "RA", "identifier": strings.Repeat("1", 51)}}), 400,
			"regulatedEntity.identifier:TOO_LONG"},
		{"secure without a pass", fwd, "/api/csd", csd(map[string]any{"securityStatus": "SPX", "screeningResult": "fail"}), 400, "securityStatus:INVALID_SECURITY_STATUS"},
		{"bad status", fwd, "/api/csd", csd(map[string]any{"securityStatus": "SAFE"}), 400, "securityStatus:INVALID_SECURITY_STATUS"},
		{"e-CSD with a method list as text", fwd, "/api/csd", csd(map[string]any{"screeningMethods": "XRY"}), 400, "screeningMethods:INVALID_TYPE"},
		{"e-CSD screened on a day of no date", fwd, "/api/csd", csd(map[string]any{"screeningDate": "2026-11-31T10:00:00Z"}), 400, "screeningDate:INVALID_DATE"},
		{"screened tomorrow", fwd, "/api/csd", csd(map[string]any{"screeningDate": time.Now().Add(3 * time.Hour).Format(time.RFC3339)}), 400, "screeningDate:INVALID_DATE"},
		{"e-CSD by another airline", s.demoToken(t, "demo-airline-ek"), "/api/csd", csd(nil), 403, ""},
		{"PLACI for another forwarder's shipment", rival, "/api/placi", placi(nil), 403, ""},
		{"e-CSD for another forwarder's shipment", rival, "/api/csd", csd(nil), 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: tt.path, token: tt.token, body: tt.body})
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if r.status == 400 {
				checkFields(t, r, tt.fields)
			}
			if r.status == 201 {
				// The spec's fields: placiId or csdId, awbNumber, status.
				var created struct{ PLACIID, CSDID, AWBNumber, Status string }
				r.json(t, &created)
				if created.AWBNumber != awb || created.Status != "submitted" || (created.PLACIID == "") == (created.CSDID == "") ||
					r.header.Get("Location") != "/api/shipments/"+awb {
					t.Errorf("= %s", r.body)
				}
			}
		})
	}
	var sh struct {
		PLACI *struct{ CargoDescription string }
		CSD   *struct {
			SecurityStatus string
			Exemption      *string
		}
	}
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: fwd}).json(t, &sh)
	if sh.PLACI == nil || sh.PLACI.CargoDescription != "CNC milling machine spare parts" || sh.CSD == nil || sh.CSD.Exemption == nil || *sh.CSD.Exemption != "MAIL" {
		t.Errorf("shipment filings = %+v %+v", sh.PLACI, sh.CSD)
	}
}
