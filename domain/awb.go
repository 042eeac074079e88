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

// AWBNumber is the canonical number of a 7-digit serial of a prefix: the
// serial, then its check digit (serial mod 7).
func AWBNumber(prefix string, serial7 int) string {
	return fmt.Sprintf("%s-%07d%d", prefix, serial7, serial7%7)
}

// AWBSerial splits a canonical AWB number into its prefix and 7-digit
// serial.
func AWBSerial(awb string) (prefix string, serial7 int) {
	fmt.Sscanf(awb[4:11], "%d", &serial7)
	return awb[:3], serial7
}

// maxSerial7 is the last 7-digit serial.
const maxSerial7 = 9999999
