package domain

import (
	"testing"
)

// Chargeable weight is rounded up to the next half kilogram, but a volume
// weight that is a half kilogram exactly stays as it is: 64.4×50×150 cm is
// 483 000 cm³, 80.5 kg at 6000 cm³/kg, though float arithmetic makes it
// 80.50000000000001, which a plain ceiling charges as 81.
func TestChargeableWeight(t *testing.T) {
	tests := []struct {
		name  string
		gross float64
		dims  []DimensionLine
		want  float64
	}{
		{"gross weight, rounded up to the half kilo", 350.1, nil, 350.5},
		{"gross weight on a half kilo", 350.5, nil, 350.5},
		{"volume weight above the gross", 100, []DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}, 320},
		{"a volume weight of a half kilo exactly, in decimal centimetres", 10, []DimensionLine{{L: 64.4, W: 50, H: 150, Pieces: 1}}, 80.5},
		{"a whole kilo exactly, in decimal centimetres", 10, []DimensionLine{{L: 1.1, W: 200, H: 300, Pieces: 1}}, 11},
		{"a volume weight just above a half kilo", 10, []DimensionLine{{L: 64.5, W: 50, H: 150, Pieces: 1}}, 81},
	}
	for _, tt := range tests {
		if got := ChargeableWeight(tt.gross, tt.dims, DefaultVolumeDivisor); got != tt.want {
			t.Errorf("%s: chargeable weight = %v kg, want %v", tt.name, got, tt.want)
		}
	}
}
