package domain

import (
	"testing"
	"time"
)

func TestDecideRecordStatus(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		eventType, discrepancy, date string
		xfsu, field                  string // the XFSU code, or the field refused
	}{
		{"rcs", "", "2026-11-25T10:00:00Z", "RCS", ""},
		{"DIS/OFLD", "", "2026-11-25T10:00:00+01:00", "DIS_OFLD", ""},
		{"DIS", "msca", "2026-11-25T12:10:00Z", "DIS_MSCA", ""}, // within the clock tolerance
		{"DIS", "", "2026-11-25T10:00:00Z", "", "discrepancyCode"},
		{"ARR", "OFLD", "2026-11-25T10:00:00Z", "", "discrepancyCode"},
		{"LOST", "", "2026-11-25T10:00:00Z", "", "eventType"},
		{"DEP", "", "2026-11-25T13:00:00Z", "", "eventDate"},
		{"DEP", "", "yesterday", "", "eventDate"},
	}
	for _, tt := range tests {
		events, err := DecideRecordStatus(RecordStatus{AWBNumber: "020-00000011", EventType: tt.eventType, DiscrepancyCode: tt.discrepancy,
			EventDate: tt.date, Location: "fra", At: now}, nil)
		if tt.field != "" {
			if e, ok := err.(*Error); !ok || e.Fields[0].Field != tt.field {
				t.Errorf("%s %s %s: err = %v, want a problem with %s", tt.eventType, tt.discrepancy, tt.date, err, tt.field)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.eventType, err)
			continue
		}
		e := events[0].(ShipmentStatusRecorded)
		if e.XFSUCode() != tt.xfsu || e.Location != "FRA" || e.EventDate.Location() != time.UTC {
			t.Errorf("%s = %+v", tt.eventType, e)
		}
	}
}
