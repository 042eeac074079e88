package domain

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	awbPattern    = regexp.MustCompile(`^([0-9]{3})-?([0-9]{8})$`)
	serialPattern = regexp.MustCompile(`^[0-9]{8}$`)
)

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

// awbOfParts reads an AWB number sent in two parts, as the spec's booking
// sends it ({prefix, number}), into its canonical form, or "" with the
// problem added on the part that has it: a client that sends the parts
// apart is helped by neither "awb" nor an example of the joined form.
// number may carry the prefix too, as the number is commonly written.
func awbOfParts(p *Problems, field, prefix, number string) string {
	prefix, number = strings.TrimSpace(prefix), strings.TrimSpace(number)
	prefixOK := awbPrefixPattern.MatchString(prefix)
	switch {
	case prefix == "":
		p.Add(field+".prefix", CodeRequired, "is required: the airline's three-digit AWB prefix, as 020")
	case !prefixOK:
		p.Add(field+".prefix", CodeInvalidAWBNumber, "must be the airline's three-digit AWB prefix, as 020")
	}
	given, serial, found := strings.Cut(number, "-")
	if !found && len(number) == 11 {
		// With its prefix but without the dash, as ParseAWB takes it.
		given, serial, found = number[:3], number[3:], true
	}
	if found && awbPrefixPattern.MatchString(given) {
		if prefixOK && given != prefix {
			p.Add(field+".number", CodeMismatch, "carries the prefix %s, but %s.prefix is %s", given, field, prefix)
			return ""
		}
		number = serial
	}
	switch {
	case number == "":
		p.Add(field+".number", CodeRequired, "is required: the eight-digit serial, as 81140743")
	case !serialPattern.MatchString(number):
		p.Add(field+".number", CodeInvalidAWBNumber, "must be the eight-digit serial, as 81140743 (or with the prefix, 020-81140743)")
	case prefixOK:
		awb, err := ParseAWB(prefix + "-" + number)
		if err != nil {
			p.Add(field+".number", CodeInvalidAWBNumber, "%s", err.Error())
		}
		return awb
	}
	return ""
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
