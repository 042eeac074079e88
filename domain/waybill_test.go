package domain

import "testing"

func TestDecideCreateHAWB(t *testing.T) {
	master := Waybills{MAWB: &MAWBCreated{AWBNumber: "020-00000011", OrganizationID: "f", Pieces: 10, WeightKg: 500},
		HAWBs: []HAWBCreated{{HAWBNumber: "H1", Pieces: 6, WeightKg: 300}}}
	party := FullParty{Name: "x"}
	tests := []struct {
		name   string
		w      Waybills
		c      CreateHAWB
		fields string // the first problem's field and code, or "" for success
	}{
		{"fits", master, CreateHAWB{HAWBNumber: "h2", OrganizationID: "f", Pieces: new(4), WeightKg: new(200.0), Shipper: party, Consignee: party}, ""},
		{"too many pieces", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(5), WeightKg: new(1.0), Shipper: party, Consignee: party}, "pieces EXCEEDS_MAWB"},
		{"too heavy", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(201.0), Shipper: party, Consignee: party}, "weight EXCEEDS_MAWB"},
		{"another forwarder's master", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "g", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}, "mawbNumber UNKNOWN_MAWB"},
		{"no master", Waybills{}, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}, "mawbNumber UNKNOWN_MAWB"},
		{"bad number", master, CreateHAWB{HAWBNumber: "H-2", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}, "hawbNumber INVALID_FORMAT"},
	}
	for _, tt := range tests {
		events, err := DecideCreateHAWB(tt.w, tt.c)
		got := ""
		if e, ok := err.(*Error); ok {
			got = e.Fields[0].Field + " " + e.Fields[0].Code
		}
		if got != tt.fields || (tt.fields == "" && len(events) != 1) {
			t.Errorf("%s: = %q, %v; want %q", tt.name, got, err, tt.fields)
		}
	}
	if _, err := DecideCreateHAWB(master, CreateHAWB{HAWBNumber: "H1", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}); ErrorCode(err) != Conflict {
		t.Errorf("a repeated house = %v", err)
	}
}
