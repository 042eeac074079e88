package domain

import (
	"fmt"
	"math"
	"strings"
)

// currencies are the active codes of ISO 4217 list one (2026: without
// ANG, replaced by XCG in 2025, and BGN, replaced by the euro in 2026),
// without the funds, precious metals and testing codes: what a rate is
// quoted in.
var currencies = strings.Fields(`
AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD
GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT
LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR
NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP
STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD
XCG XOF XPF YER ZAR ZMW ZWG`)

// minorUnits are the ISO 4217 decimals of the currencies that have other
// than two: a yen has no cents, a Kuwaiti dinar has 1000 fils.
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// amountScales are the currencies whose unit is worth much less than a US
// dollar, by how many times a rate card's bounds grow for them: about how
// many units a dollar buys, to the power of ten below (a dollar buys some
// 1,400 won: 1000). The bounds catch a decimal point in the wrong place,
// not a price, so orders of magnitude are enough, and the drift of a few
// years leaves a currency where it is.
var amountScales = func() map[string]float64 {
	scales := map[string]float64{}
	for scale, codes := range map[float64]string{
		10: `AFN ALL BTN BWP CUP CZK DOP EGP ERN GHS GMD HNL INR KGS LSL MDL MKD MRU MUR MVR MXN MZN NAD NIO NOK PHP
			RUB SCR SEK SLE SRD STN SZL THB TJS TRY TWD UAH UYU ZAR ZMW ZWG`,
		100: `AMD AOA BDT CLP CRC CVE DJF DZD ETB GYD HTG HUF ISK JMD JPY KES KMF KPW KZT LKR LRD NPR PKR RSD SDG SOS
			VED VES VUV XAF XOF XPF YER`,
		1000:  `ARS BIF CDF COP GNF IQD KHR KRW MGA MMK MNT MWK NGN PYG RWF SSP TZS UGX`,
		10000: `IDR IRR LAK LBP SYP UZS VND`,
	} {
		for _, code := range strings.Fields(codes) {
			scales[code] = scale
		}
	}
	return scales
}()

// amountScale is how many times a rate card's bounds in currency are
// those in dollars: 1 but for the currencies of amountScales.
func amountScale(currency string) float64 {
	if scale, ok := amountScales[currency]; ok {
		return scale
	}
	return 1
}

// amountBound is a rate card's bound on an amount: less than dollars (in
// US dollars, and as many times more as currency's unit is worth less),
// or none, the zero bound, while the card's currency is none.
type amountBound struct {
	dollars  float64
	currency string
}

// holds reports whether amount is under the bound.
func (b amountBound) holds(amount float64) bool {
	return b.currency == "" || amount < b.dollars*amountScale(b.currency)
}

// said is the bound as a refusal says it after the lower bound, per
// following the amount: " and less than 1000000 per kg in KRW"; "" for
// none.
func (b amountBound) said(per string) string {
	if b.currency == "" {
		return ""
	}
	return fmt.Sprintf(" and less than %.0f%s in %s", b.dollars*amountScale(b.currency), per, b.currency)
}

// roundAmount rounds an amount to the minor unit of its currency, so that
// a charge is one that can be invoiced and paid: no fractions of a yen.
// Half a unit goes up. The units are counted to a millionth first, as
// upToHalfKg counts half kilos: 30.5 kg at 4.50 plus 0.15 is 141.825 but
// 141.82499999999999 in a float64, which rounded alone lost the cent.
func roundAmount(v float64, currency string) float64 {
	return roundHalfUp(v, minorUnitsOf(currency))
}

// minorUnitsOf is how many decimals an amount in currency has: 2 but for
// the currencies of minorUnits.
func minorUnitsOf(currency string) int {
	if decimals, ok := minorUnits[currency]; ok {
		return decimals
	}
	return 2
}

// roundHalfUp rounds v to decimals places, half up, counting the units to
// a millionth first: a float64 holds most halves a little below them.
func roundHalfUp(v float64, decimals int) float64 {
	scale := math.Pow10(decimals)
	return math.Round(math.Round(v*scale*1e6)/1e6) / scale
}
