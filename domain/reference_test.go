package domain

import (
	"strings"
	"testing"
)

func TestValidateRows(t *testing.T) {
	anyZone := func(string) bool { return true }
	airport := func(change func(a *Airport)) []string {
		a := Airport{IATACode: "FRA", Name: "Frankfurt am Main", City: "Frankfurt", Country: "DE", Timezone: "Europe/Berlin"}
		change(&a)
		return ValidateAirport(a, anyZone)
	}
	commodity := func(change func(c *KnownCommodity)) []string {
		c := KnownCommodity{Code: "UN1263", Name: "Paint", DangerousGoods: true, UNNumber: "UN1263", HazardClass: "3", PackingGroup: "II"}
		change(&c)
		return ValidateCommodity(c)
	}
	tests := []struct {
		name string
		bad  []string
		want string // the first complaint, or "" for a good row
	}{
		{"an airport", airport(func(*Airport) {}), ""},
		{"a name of 80 Chinese characters", airport(func(a *Airport) { a.Name = strings.Repeat("机", 80) }), ""},
		{"a name of 201 characters", airport(func(a *Airport) { a.Name = strings.Repeat("a", 201) }), "name must be 1 to 200 characters"},
		{"a city with a NUL", airport(func(a *Airport) { a.City = "City\x00Nul" }), "city holds a control character"},
		{"a city of 100 000 characters", airport(func(a *Airport) { a.City = strings.Repeat("c", 100000) }), "city must be at most 200 characters"},
		{"a name with a right-to-left override", airport(func(a *Airport) { a.Name = "Frankfurt\u202e" }), "name holds a control character"},
		{"a name that was not UTF-8", airport(func(a *Airport) { a.Name = "Z\ufffdrich" }), "name holds a control character"},
		{"a name of bytes that are not UTF-8", airport(func(a *Airport) { a.Name = "Z\xfcrich" }), "name holds a control character"},
		{"a dangerous good", commodity(func(*KnownCommodity) {}), ""},
		{"a class of no class", commodity(func(c *KnownCommodity) { c.HazardClass = "99" }), "hazardClass must be a class or division, as 3 or 2.1"},
		{"one of its classes of no class", commodity(func(c *KnownCommodity) { c.HazardClasses = []string{"3", "3.9"} }), "hazardClass must be a class or division, as 3 or 2.1"},
		{"packing group IV", commodity(func(c *KnownCommodity) { c.PackingGroup = "IV" }), "packingGroup must be I, II or III"},
		{"another name with a control character", commodity(func(c *KnownCommodity) { c.OtherNames = []string{"Paint\x07"} }), "other name holds a control character"},
	}
	for _, tt := range tests {
		got := ""
		if len(tt.bad) > 0 {
			got = tt.bad[0]
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
