package domain

import "testing"

func TestParseAWB(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"176-12345675", "176-12345675", true},
		{"02081140743", "020-81140743", true},
		{" 020-81140743 ", "020-81140743", true},
		{"176-12345670", "", false}, // wrong check digit
		{"176-1234567", "", false},
		{"17-612345675", "", false},
		{"ABC-12345675", "", false},
		{"176-12345677", "", false}, // a check digit can only be 0-6
	}
	for _, tt := range tests {
		got, err := ParseAWB(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseAWB(%q) = %q, %v", tt.in, got, err)
		}
	}
}
