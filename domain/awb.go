package domain

import (
	"fmt"
	"regexp"
	"strings"
)

var awbPattern = regexp.MustCompile(`^([0-9]{3})-?([0-9]{8})$`)

// ParseAWB reads an air waybill number, "176-12345675" or "17612345675",
// checks its check digit (the first seven serial digits mod 7) and returns
// it in the canonical form PPP-SSSSSSSS.
func ParseAWB(s string) (string, error) {
	m := awbPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("must be a three-digit airline prefix and an eight-digit serial, as 176-12345675")
	}
	serial := m[2]
	var first7 int
	fmt.Sscanf(serial[:7], "%d", &first7)
	if want := byte('0' + first7%7); serial[7] != want {
		return "", fmt.Errorf("check digit is %c but must be %c (the first seven serial digits mod 7)", serial[7], want)
	}
	return m[1] + "-" + serial, nil
}

// AWBAssigned records that an AWB number is used by a booking. One
// aggregate per number: the event store guarantees a number is assigned
// once across the whole system.
type AWBAssigned struct {
	AWBNumber      string `json:"awbNumber"`
	BookingID      string `json:"bookingId"`
	OrganizationID string `json:"organizationId"`
}

func (AWBAssigned) EventType() string { return "AWBAssigned" }

// DecideAssignAWB assigns the number to a booking, once; a number used by
// another booking is refused.
func DecideAssignAWB(assignedTo string, e AWBAssigned) ([]Event, error) {
	switch assignedTo {
	case e.BookingID:
		return nil, nil
	case "":
		return []Event{e}, nil
	}
	return nil, Refusal(ReasonAWBUsed, "AWB %s is already used by another booking", e.AWBNumber)
}

// EvolveAWB tracks which booking an AWB number belongs to.
func EvolveAWB(bookingID string, e Event) string {
	if e, ok := e.(AWBAssigned); ok {
		return e.BookingID
	}
	return bookingID
}
