package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestUnmarshalRefusesKeysInAnotherCaseAndTwice(t *testing.T) {
	tests := []struct {
		body string
		want string // first field and code, or "" when accepted
	}{
		{`{"awbNumber":"020-00000011","reason":"space"}`, ""},
		{`{"awbNumber":"020-1","AWBNUMBER":"020-00000011"}`, "AWBNUMBER INVALID_FORMAT"},
		{`{"awbNumber":"020-1","awbNumber":"020-00000011"}`, "awbNumber DUPLICATE"},
		{`{"awbNumber":"020-00000011","somethingElse":{"awbNumber":1}}`, ""},
	}
	for _, tt := range tests {
		var req offloadRequest
		if got := firstProblem(unmarshal([]byte(tt.body), &req)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestUnmarshalRefusesWhatCannotBeStoredAsSent(t *testing.T) {
	tests := []struct {
		body string
		want string // first field and code, the error, or "" when accepted
	}{
		{`{"shipper":{"name":"ACME\tGmbH","address":"Line 1\r\nLine 2"},"commodity":"Größe 7 ✈"}`, ""},
		{`null`, "invalid_request: the body must be a JSON object, not null"},
		{"{\"commodity\":\"\xff\xfe\"}", "invalid_request: the body is not valid UTF-8"},
		{`{"weight":1e400}`, "weight INVALID_RANGE"},
		{`{"pieces":1e20}`, "pieces INVALID_RANGE"},
		{`{"pieces":1.5}`, "pieces INVALID_TYPE"},
		{`{"pieces":-1e20}`, "pieces INVALID_RANGE"},
		{`{"pieces":99999999999999999999}`, "pieces INVALID_RANGE"},
		{`{"pieces":-9223372036854775809}`, "pieces INVALID_RANGE"},
		{`{"pieces":9223372036854775808}`, "pieces INVALID_RANGE"},
		{`{"extra":1e400,"shipper":{"name":"a\u0000b"}}`, "shipper.name INVALID_FORMAT"},
		{`{"pieces":"2"}`, "pieces INVALID_TYPE"},
		{`{"shipper":{"name":"a\u0000b"}}`, "shipper.name INVALID_FORMAT"},
		{`{"consignee":{"contact":"x\u0007"}}`, "consignee.contact INVALID_FORMAT"},
		{`{"commodity":"GEN\u202eXE"}`, "commodity INVALID_FORMAT"},
		{`{"commodity":"\ud800"}`, "commodity INVALID_FORMAT"},
		{`{"unknown":["ok","\u0085"]}`, "unknown[1] INVALID_FORMAT"},
		{`{"unknown":[{"":"\u0000"}]}`, "unknown[0]. INVALID_FORMAT"}, // a member named "", not an element
	}
	for _, tt := range tests {
		var req mawbRequest
		if got := firstProblem(unmarshal([]byte(tt.body), &req)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// A body refused for a value of a wrong kind is told every such value at
// once, and what else the walk finds in it, the value decoding refused
// first: a client mends its body at one go.
func TestUnmarshalNamesEveryValueOfAWrongKindAtOnce(t *testing.T) {
	tests := []struct {
		body string
		dst  any
		want string // every problem: field, code and message
	}{
		{`{"routing":{"origin":"FRA","destination":5},"grossWeightKg":"x","pieces":1.5,"shc":"DGR"}`, &rfqRequest{},
			"routing.destination INVALID_TYPE must be a string, not number; grossWeightKg INVALID_TYPE must be a number, not string; " +
				"pieces INVALID_TYPE must be a whole number, not number 1.5; shc INVALID_TYPE must be an array, not string"},
		{`{"pieces":1e20,"notes":{"a":1},"airlineFilter":["LH",7,true]}`, &rfqRequest{},
			"pieces INVALID_RANGE 1e20 is out of range; notes INVALID_TYPE must be a string, not object; " +
				"airlineFilter[1] INVALID_TYPE must be a string, not number; airlineFilter[2] INVALID_TYPE must be a string, not bool"},
		// encoding/json names an element by its array: the walk's name
		// of it is given, and only once.
		{`{"airlineFilter":[1],"routing":[]}`, &rfqRequest{}, "airlineFilter[0] INVALID_TYPE must be a string, not number; routing INVALID_TYPE must be an object, not array"},
		// A field of an element of a list of objects, which
		// encoding/json names without its place (routing.to).
		{`{"routing":[{"from":"FRA","to":"JFK"},{"from":"JFK","to":1}]}`, &bookingRequest{}, "routing[1].to INVALID_TYPE must be a string, not number"},
		// A number out of range is named by its place, as the walk finds
		// it, beside what else it finds in the same list.
		{`{"pair":[1e400,2.5]}`, &withOwnDecoding{}, "pair[0] INVALID_RANGE 1e400 is out of range; pair[1] INVALID_TYPE must be a whole number, not number 2.5"},
		{`{"dimensionsCm":[{"l":1,"w":1,"h":1,"pieces":1},{"l":1,"w":1,"h":1e400,"pieces":1e20}]}`, &rfqRequest{},
			"dimensionsCm[1].h INVALID_RANGE 1e400 is out of range; dimensionsCm[1].pieces INVALID_RANGE 1e20 is out of range"},
		{`{"routing":[{"from":"FRA"},{"from":"JFK","to":"ORD"}],"grossWeightKg":-1e400,"pieces":9223372036854775808}`, &bookingRequest{},
			"grossWeightKg INVALID_RANGE -1e400 is out of range; pieces INVALID_RANGE 9223372036854775808 is out of range"},
		// null is no element of a list of strings (decoding takes it
		// for ""), whether or not decoding refused another value.
		{`{"airlineFilter":["LH",null]}`, &rfqRequest{}, "airlineFilter[1] INVALID_TYPE must be a string, not null"},
		{`{"airlineFilter":[null, 7],"pieces":"1"}`, &rfqRequest{},
			"airlineFilter[0] INVALID_TYPE must be a string, not null; airlineFilter[1] INVALID_TYPE must be a string, not number; pieces INVALID_TYPE must be a whole number, not string"},
		{`{"routing":"FRA","ROUTING":{},"notes":"a\u0000"}`, &rfqRequest{},
			"routing INVALID_TYPE must be an object, not string; ROUTING INVALID_FORMAT field names are case-sensitive: this is \"routing\"; " +
				"notes INVALID_FORMAT must not contain the character U+0000 (at character 2)"},
		{`{"count":"1","counts":{"a":"b"},"grid":[[1],[true]],"pair":[1,{}],"raw":"x","own":7}`, &withOwnDecoding{},
			"count INVALID_TYPE must be a whole number, not string; counts.a INVALID_TYPE must be a whole number, not string; " +
				"grid[1][0] INVALID_TYPE must be a whole number, not bool; pair[1] INVALID_TYPE must be a whole number, not object"},
		{`{"routing":null,"pieces":null,"shc":null,"notes":7}`, &rfqRequest{}, "notes INVALID_TYPE must be a string, not number"},
	}
	for _, tt := range tests {
		var got []string
		e, ok := unmarshal([]byte(tt.body), tt.dst).(*domain.Error)
		if ok {
			for _, f := range e.Fields {
				got = append(got, f.Field+" "+string(f.Code)+" "+f.Message)
			}
		}
		if strings.Join(got, "; ") != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.body, strings.Join(got, "; "), tt.want)
		}
	}
}

func TestUnmarshalNamesAFieldOfAnEmbeddedStructAsTheClientWroteIt(t *testing.T) {
	tests := []struct {
		body string
		want string // first field and code
	}{
		{`{"weightBreaks":[]}`, "weightBreaks INVALID_TYPE"},
		{`{"weightBreaks":{"N":"4.5"}}`, "weightBreaks.N INVALID_TYPE"},
		{`{"currency":1}`, "currency INVALID_TYPE"},
		{`{"minimumCharge":1e400}`, "minimumCharge INVALID_RANGE"},
		{`{"notAccepted":[1]}`, "notAccepted[0] INVALID_TYPE"},
		{`{"volumeDivisor":"6000"}`, "volumeDivisor INVALID_TYPE"},
	}
	for _, tt := range tests {
		var req rateCardRequest
		if got := firstProblem(unmarshal([]byte(tt.body), &req)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestUnmarshalTakesAWholeNumberWrittenAsAFractionForOne(t *testing.T) {
	tests := []struct {
		body   string
		want   string // the first problem, or "" when accepted
		pieces int    // as decoded, when accepted
	}{
		{`{"pieces":1.0}`, "", 1},
		{`{"pieces": 2.000 ,"weight":1.0}`, "", 2},
		{`{"pieces":1e2}`, "", 100},
		{`{"pieces":250E-1}`, "", 25},
		{`{"pieces":-0.0}`, "", 0},
		{`{"pieces":1.5}`, "pieces INVALID_TYPE", 0},
		// Fractions a float64 cannot tell from a whole number are
		// fractions still: 1.9999999999999999 pieces are not 2.
		{`{"pieces":1.9999999999999999}`, "pieces INVALID_TYPE", 0},
		{`{"pieces":2.0000000000000001}`, "pieces INVALID_TYPE", 0},
		{`{"pieces":1e-400}`, "pieces INVALID_TYPE", 0},
		{`{"pieces":0.25e2}`, "", 25},
		{`{"pieces":0e999999999999999999999}`, "", 0},
		{`{"pieces":1.0,"shipper":{"name":"a\u0000b"}}`, "shipper.name INVALID_FORMAT", 0},
		{`{"pieces":1.0,"PIECES":2}`, "PIECES INVALID_FORMAT", 0},
		{`{"pieces":1e19}`, "pieces INVALID_RANGE", 0},
		{`{"pieces":1.0,"origin":7}`, "origin INVALID_TYPE", 0},
	}
	for _, tt := range tests {
		var req mawbRequest
		got := firstProblem(unmarshal([]byte(tt.body), &req))
		if got != tt.want || (got == "" && (req.Pieces == nil || *req.Pieces != tt.pieces)) {
			t.Errorf("%s = %q, pieces %v; want %q, %d", tt.body, got, req.Pieces, tt.want, tt.pieces)
		}
	}
	// In arrays and nested objects too: a manifest's totals, a booking's
	// dimension lines.
	var booking bookingRequest
	if err := unmarshal([]byte(`{"dimensionsCm":[{"l":120,"w":80,"h":100,"pieces":2.0}],"pieces":2.0}`), &booking); err != nil ||
		len(booking.DimensionsCm) != 1 || booking.DimensionsCm[0].Pieces == nil || *booking.DimensionsCm[0].Pieces != 2 || booking.Pieces == nil || *booking.Pieces != 2 {
		t.Errorf("a booking with whole numbers as fractions = %+v, %v", booking, err)
	}
}

func TestUnmarshalTakesANumberSentAsMinusZeroForZeroInEveryRequest(t *testing.T) {
	var (
		card     rateCardRequest
		flight   flightRequest
		mawb     mawbRequest
		status   statusEventRequest
		manifest manifestRequest
		booking  bookingRequest
		narrow   struct {
			F   float32         `json:"f"`
			Raw json.RawMessage `json:"raw"`
		}
	)
	tests := []struct {
		name   string
		body   string
		dst    any
		values func() []float64 // as decoded
		want   []float64
	}{
		{"a rate card's minimum charge and surcharges", `{"minimumCharge":-0,"surcharges":{"DGR":-0.0,"PER":-0E+3}}`, &card,
			func() []float64 { return []float64{card.MinimumCharge, card.Surcharges["DGR"], card.Surcharges["PER"]} }, []float64{0, 0, 0}},
		{"a flight's capacity, one too small to be other than zero", `{"capacityKg":-0,"capacityM3":-1e-400}`, &flight,
			func() []float64 { return []float64{*flight.CapacityKg, *flight.CapacityM3} }, []float64{0, 0}},
		{"a waybill's volume beside pieces written as a fraction", `{"pieces":10.0,"volume":-0.000}`, &mawb,
			func() []float64 { return []float64{float64(*mawb.Pieces), *mawb.Volume} }, []float64{10, 0}},
		{"a status event's weight and pieces", `{"pieces":-0,"weight":-0}`, &status,
			func() []float64 { return []float64{float64(*status.Pieces), *status.Weight} }, []float64{0, 0}},
		{"a manifest's total volume beside a negative weight, left for the domain to refuse", `{"totalWeight":-2.5,"totalVolume":-0}`, &manifest,
			func() []float64 { return []float64{*manifest.TotalWeight, *manifest.TotalVolume} }, []float64{-2.5, 0}},
		{"a booking's weights and volume", `{"grossWeightKg":-0,"chargeableWeightKg":-0e0,"volume":-0,"weight":0}`, &booking,
			func() []float64 {
				return []float64{*booking.GrossWeightKg, *booking.ChargeableWeightKg, *booking.Volume, *booking.Weight}
			}, []float64{0, 0, 0, 0}},
		{"a float32 too small to be other than zero", `{"f":-1e-50,"raw":-0}`, &narrow,
			func() []float64 { return []float64{float64(narrow.F)} }, []float64{0}},
	}
	for _, tt := range tests {
		if err := unmarshal([]byte(tt.body), tt.dst); err != nil {
			t.Errorf("%s: %s = %v", tt.name, tt.body, err)
			continue
		}
		got := tt.values()
		if !slices.Equal(got, tt.want) || slices.ContainsFunc(got, func(v float64) bool { return v == 0 && math.Signbit(v) }) {
			t.Errorf("%s: %s decoded as %v, want %v", tt.name, tt.body, got, tt.want)
		}
	}
	// A RawMessage keeps the text it was sent as: it is no number yet.
	if string(narrow.Raw) != "-0" {
		t.Errorf("a RawMessage of -0 decoded as %s", narrow.Raw)
	}
}

// withOwnDecoding holds what encoding/json hands over whole, a
// RawMessage and a type with its own UnmarshalJSON, beside whole-number
// fields of other shapes than the requests' *int.
type withOwnDecoding struct {
	Raw    json.RawMessage   `json:"raw"`
	Own    *decodedItsOwnWay `json:"own"`
	Count  uint8             `json:"count"`
	Counts map[string]int    `json:"counts"`
	Grid   [][]int           `json:"grid"`
	Pair   [2]int64          `json:"pair"`
}

type decodedItsOwnWay struct{ text string }

func (d *decodedItsOwnWay) UnmarshalJSON(b []byte) error {
	d.text = string(b)
	return nil
}

func TestUnmarshalChecksTheTextOfEveryStringAsItDecodes(t *testing.T) {
	tests := []struct {
		body string
		want string // first field, code and message, or "" when accepted
	}{
		{`{"notes":"Line 1\r\nLine 2\t\"quoted\" \\ \/ caf\u00e9 \ud83d\ude00"}`, ""},
		{"{\"notes\":\"Gr\u00f6\u00dfe \u2708 \U0001F600\"}", ""},
		{`{"notes":"ab\u0000"}`, "notes INVALID_FORMAT: must not contain the character U+0000 (at character 3)"},
		{`{"notes":"Größe\b"}`, "notes INVALID_FORMAT: must not contain the character U+0008 (at character 6)"},
		{`{"notes":"\f"}`, "notes INVALID_FORMAT: must not contain the character U+000C (at character 1)"},
		{`{"notes":"x\u007f"}`, "notes INVALID_FORMAT: must not contain the character U+007F (at character 2)"},
		{"{\"notes\":\"x\x7f\"}", "notes INVALID_FORMAT: must not contain the character U+007F (at character 2)"},
		{"{\"notes\":\"é\u0085\"}", "notes INVALID_FORMAT: must not contain the character U+0085 (at character 2)"},
		{"{\"notes\":\"a\u2066b\"}", "notes INVALID_FORMAT: must not contain the character U+2066 (at character 2)"},
		{"{\"notes\":\"\ufffd\"}", "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 1)"},
		{`{"notes":"\ufffd"}`, "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 1)"},
		// A surrogate that is not half of a pair is U+FFFD to
		// encoding/json, and the escape after it read on its own.
		{`{"notes":"\ud83d\u0041"}`, "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 1)"},
		{`{"notes":"a\udc00"}`, "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 2)"},
		{`{"notes":"\ude00\ud83d"}`, "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 1)"},
		{`{"notes":"\ud83d\ude00\ud83d"}`, "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 2)"},
		{`{"notes":"\ud83d\n"}`, "notes INVALID_FORMAT: must not contain the character U+FFFD (at character 1)"},
		// In fields the request does not have, and in values decoded their
		// own way, too.
		{`{"extra":{"deep":[1,{"x":"\u001b[31m"}]}}`, "extra.deep[1].x INVALID_FORMAT: must not contain the character U+001B (at character 1)"},
		{`{"\u0065xtra":"\u0000"}`, "extra INVALID_FORMAT: must not contain the character U+0000 (at character 1)"},
		{`{"x":{"":{"":"\u0000"}}}`, "x.. INVALID_FORMAT: must not contain the character U+0000 (at character 1)"},
		// A key is judged as a key, not as text: a member so named is
		// unknown, or left to its map's own rules.
		{`{"extra\u0000":1}`, ""},
	}
	for _, tt := range tests {
		var req rfqRequest
		if got := problemText(unmarshal([]byte(tt.body), &req)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
	for _, body := range []string{`{"raw":{"x":"\u0000"}}`, `{"own":["\u0000"]}`} {
		var v withOwnDecoding
		if got := firstProblem(unmarshal([]byte(body), &v)); !strings.HasSuffix(got, " INVALID_FORMAT") {
			t.Errorf("%s = %q, want a refusal", body, got)
		}
	}
}

func TestUnmarshalJudgesKeysByTheirDecodedText(t *testing.T) {
	tests := []struct {
		body string
		dst  any
		want string // first field and code, or "" when accepted
	}{
		{`{"\u0070ieces":2}`, &mawbRequest{}, ""},
		{`{"pieces":2,"\u0070ieces":3}`, &mawbRequest{}, "pieces DUPLICATE"},
		{`{"\u0050IECES":2}`, &mawbRequest{}, "PIECES INVALID_FORMAT"},
		{`{"pieces":2,"PIECES":3,"PIECES":4}`, &mawbRequest{}, "PIECES INVALID_FORMAT"},
		{`{"weightBreaks":{"N":1,"\u004e":2}}`, &rateCardRequest{}, "weightBreaks.N DUPLICATE"},
		{`{"weightBreaks":{"":1,"":2}}`, &rateCardRequest{}, "weightBreaks. DUPLICATE"},
		{`{"dimensionsCm":[{"l":1},{"l":2},{"l":3,"w":1,"l":4}]}`, &rfqRequest{}, "dimensionsCm[2].l DUPLICATE"},
		{`[{"flightNumber":"LH1"},{"flightNumber":"LH2","FlightNumber":"LH3"}]`, &[]flightRequest{}, "[1].FlightNumber INVALID_FORMAT"},
		// What the request does not know is not judged but for its text:
		// an unknown field, a RawMessage, a value decoded its own way.
		{`{"extra":{"a":1,"a":2,"A":[1.0,{"b":"c","b":"d"}],"n":1e400,"t":true,"f":false,"z":null},"pieces":1}`, &mawbRequest{}, ""},
		{`{"raw":{"a":1,"a":2,"A":3},"own":{"b":1,"b":2}}`, &withOwnDecoding{}, ""},
		{` { "pieces" : 2 , "pieces" : 3 } `, &mawbRequest{}, "pieces DUPLICATE"},
		{`{"pieces":1} {"pieces":2,"pieces":3}`, &mawbRequest{}, "invalid_request: the body has data after the JSON object"},
	}
	for _, tt := range tests {
		if got := firstProblem(unmarshal([]byte(tt.body), tt.dst)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestUnmarshalRefusesAnythingButWhiteSpaceAfterTheObject(t *testing.T) {
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"pieces":1}`, true},
		{"{\"pieces\":1} \t\r\n", true},
		{`{"pieces":1}]`, false},
		{`{"pieces":1}}`, false},
		{`{"pieces":1} ]]]`, false},
		{`{"pieces":1},`, false},
		{`{"pieces":1}x`, false},
		{`{"pieces":1}{}`, false},
		{`{"pieces":1.0}]`, false}, // decoded a second time, as a whole number
	}
	for _, tt := range tests {
		var req mawbRequest
		err := unmarshal([]byte(tt.body), &req)
		switch {
		case tt.ok && err != nil:
			t.Errorf("%q: %v", tt.body, err)
		case !tt.ok && firstProblem(err) != "invalid_request: the body has data after the JSON object":
			t.Errorf("%q = %q, want it refused for what follows the object", tt.body, firstProblem(err))
		}
	}
}

func TestUnmarshalFindsAProblemAtAnyDepth(t *testing.T) {
	const depth = 100
	body := strings.Repeat(`{"a":[`, depth) + `"\u0000"` + strings.Repeat(`]}`, depth)
	want := strings.TrimSuffix(strings.Repeat("a[0].", depth), ".") + " INVALID_FORMAT"
	var req rfqRequest
	if got := firstProblem(unmarshal([]byte(body), &req)); got != want {
		t.Errorf("a string %d objects deep = %q, want %q", depth, got, want)
	}
}

func TestUnmarshalTakesWholeNumbersAsFractionsInEveryWholeNumberField(t *testing.T) {
	tests := []struct {
		body string
		want string // the first problem, or the decoded value as %v when accepted
	}{
		{`{"count":1.0,"counts":{"a":2e0,"b":-3.0},"grid":[[1.0],[2E+0,3]],"pair":[-0.0,5e1]}`, `{ 1 map[a:2 b:-3] [[1] [2 3]] [0 50]}`},
		{`{"count":255.0}`, `{ 255 map[] [] [0 0]}`},
		{`{"count":256.0}`, "count INVALID_TYPE"},
		{`{"count":-1.0}`, "count INVALID_TYPE"},
		{`{"pair":[1.5,1.0]}`, "pair[0] INVALID_TYPE"},
		{`{"counts":{"a":1.0,"a":2}}`, "counts.a DUPLICATE"},
		// Only where a whole number is expected: a RawMessage keeps the
		// text it was sent as.
		{`{"raw":1.0,"count":1.0}`, `{1.0 1 map[] [] [0 0]}`},
	}
	for _, tt := range tests {
		var v withOwnDecoding
		got := firstProblem(unmarshal([]byte(tt.body), &v))
		if got == "" {
			got = fmt.Sprintf("{%s %d %v %v %v}", v.Raw, v.Count, v.Counts, v.Grid, v.Pair)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// firstProblem names an error for a table: its first field and code, or
// the error itself; "" for none.
func firstProblem(err error) string {
	if e, ok := err.(*domain.Error); ok && len(e.Fields) > 0 {
		return e.Fields[0].Field + " " + string(e.Fields[0].Code)
	} else if err != nil {
		return err.Error()
	}
	return ""
}

// problemText is firstProblem with the problem's message.
func problemText(err error) string {
	if e, ok := err.(*domain.Error); ok && len(e.Fields) > 0 {
		return firstProblem(err) + ": " + e.Fields[0].Message
	}
	return firstProblem(err)
}

func TestReadJSONBody(t *testing.T) {
	tests := []struct {
		contentType, encoding string
		again                 string // a second Content-Type line, if any
		want                  string // the error's code, or "" when read
	}{
		{"application/json", "", "", ""},
		{"application/json; charset=UTF-8", "", "", ""},
		{"application/json; charset=utf8", "", "", ""},
		{"application/problem+json", "identity", "", ""},
		{"application/json; charset=latin1", "", "", codeUnsupportedMedia},
		{"application/json; charset=latin1; x", "", "", codeUnsupportedMedia}, // a parameter that does not parse hides none
		{"application/json", "gzip", "", codeUnsupportedMedia},
		{"text/plain", "", "", codeUnsupportedMedia},
		{"", "", "", codeUnsupportedMedia},
		// Sent twice: not the first line's type.
		{"application/json", "", "text/plain", codeUnsupportedMedia},
		{"application/json", "", "application/json", codeUnsupportedMedia},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/api/quotes", strings.NewReader("{}"))
		r.Header.Set("Content-Type", tt.contentType)
		if tt.again != "" {
			r.Header.Add("Content-Type", tt.again)
		}
		if tt.encoding != "" {
			r.Header.Set("Content-Encoding", tt.encoding)
		}
		body, err := readJSONBody(r)
		if got := errorCode(err); (err == nil && string(body) != "{}") || (err != nil && got != tt.want) || (err == nil) != (tt.want == "") {
			t.Errorf("%q %q %q = %q, %v; want %q", tt.contentType, tt.again, tt.encoding, body, err, tt.want)
		}
	}
}

// withEmbedded holds a struct the way encoding/json promotes (inner) and
// the way it does not (tagged).
type withEmbedded struct {
	embedded
	Tagged embedded `json:"tagged"`
}

type embedded struct {
	Inner string `json:"inner"`
}

func TestUnmarshalChecksKeysAtEveryDepth(t *testing.T) {
	tests := []struct {
		body string
		dst  any
		want string // first field and code, or "" when accepted
	}{
		{`{"routing":{"origin":"FRA","destination":"JFK"},"dimensionsCm":[{"l":1,"w":2,"h":3,"pieces":1}]}`, &rfqRequest{}, ""},
		{`{"routing":{"origin":"FRA","destination":"JFK","origin":"LHR"}}`, &rfqRequest{}, "routing.origin DUPLICATE"},
		{`{"routing":{"ORIGIN":"FRA"}}`, &rfqRequest{}, "routing.ORIGIN INVALID_FORMAT"},
		{`{"dimensionsCm":[{"l":1},{"l":1,"L":2}]}`, &rfqRequest{}, "dimensionsCm[1].L INVALID_FORMAT"},
		{`{"shipper":{"name":"a","name":"b"}}`, &rfqRequest{}, "shipper.name DUPLICATE"},
		{`{"weightBreaks":{"N":1.0,"45":0.9,"N":900}}`, &rateCardRequest{}, "weightBreaks.N DUPLICATE"},
		{`{"weightBreaks":{"N":1.0,"n":0.9}}`, &rateCardRequest{}, ""}, // distinct keys: the rate card's own rules judge them
		{`[{"flightNumber":"LH1","flightNumber":"LH2"}]`, &[]flightRequest{}, "[0].flightNumber DUPLICATE"},
		{`{"routing":"FRA-JFK"}`, &rfqRequest{}, "routing INVALID_TYPE"},                             // refused by decoding, not walked
		{`{"shipper":{"name":"a"},"ſhipper":{"name":"b"}}`, &rfqRequest{}, "ſhipper INVALID_FORMAT"}, // encoding/json folds ſ to s
		{`{"inner":"a","INNER":"b"}`, &withEmbedded{}, "INNER INVALID_FORMAT"},
		{`{"tagged":{"inner":"a","inner":"b"}}`, &withEmbedded{}, "tagged.inner DUPLICATE"},
		{`{"tagged":{"inner":"a"},"inner":"b"}`, &withEmbedded{}, ""},
	}
	for _, tt := range tests {
		if got := firstProblem(unmarshal([]byte(tt.body), tt.dst)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestAnOptionalBodyLeftOutIsNoBodyHoweverItIsSent(t *testing.T) {
	type body struct {
		ClientSecret string `json:"clientSecret"`
	}
	for _, tt := range []struct {
		name, body string
		length     int64 // -1: chunked
		want       string
		err        bool
	}{
		{name: "no body", length: 0},
		{name: "an empty chunked body", length: -1},
		{name: "a chunked body", body: `{"clientSecret":"cs_chosen-secret"}`, length: -1, want: "cs_chosen-secret"},
		{name: "a body", body: `{"clientSecret":"cs_chosen-secret"}`, length: 35, want: "cs_chosen-secret"},
		{name: "a body that is not JSON", body: `secret`, length: -1, err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/admin/clients/c/secret", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/json")
			r.ContentLength = tt.length
			var got body
			err := decodeOptionalJSON(r, &got)
			if (err != nil) != tt.err || got.ClientSecret != tt.want {
				t.Errorf("decoded %+v, %v; want %q (error: %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestAFlightFilterReadsCodesAsSentAndNamesEveryBadOneInOrder(t *testing.T) {
	tests := []struct {
		query string
		want  string // the fields refused, in order, or the filter's route when accepted
	}{
		{"origin=fra&destination=%20jfk%20", "FRA-JFK"},
		{"origin=FRANKFURT&destination=J", "origin destination"},
		{"destination=J&origin=FRANKFURT", "origin destination"},
		{"origin=FRA&flightNumber=LH&status=lost&date=1.7.2026", "flightNumber date status"},
	}
	for _, tt := range tests {
		var p domain.Problems
		f := flightFilter(httptest.NewRequest("GET", "/api/flights?"+tt.query, nil), &p)
		got := f.Origin + "-" + f.Destination
		if len(p) > 0 {
			fields := make([]string, len(p))
			for i, e := range p {
				fields[i] = e.Field
			}
			got = strings.Join(fields, " ")
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.query, got, tt.want)
		}
	}
}

// rfqBody is the README's RFQ, as a client files it with POST /api/quotes.
const rfqBody = `{
  "shipper": {"name": "ACME Machine Tools"}, "consignee": {"name": "Globex Inc"},
  "routing": {"origin": "FRA", "destination": "JFK"},
  "pieces": 2, "grossWeightKg": 350.5,
  "commodity": {"code": "GEN", "description": "Machine parts"},
  "dimensionsCm": [{"l": 120, "w": 80, "h": 100, "pieces": 2}],
  "shc": ["EAP"], "deliveryToAirlineDate": "2026-07-01"}`

// BenchmarkDecodeJSON decodes the README's RFQ as requests are decoded,
// beside encoding/json's decoding alone in the same run: the difference is
// the strict checks' cost.
func BenchmarkDecodeJSON(b *testing.B) {
	body := []byte(rfqBody)
	for _, bb := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"checked", unmarshal}, {"encoding/json alone", json.Unmarshal}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var req rfqRequest
				if err := bb.decode(body, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestAQueryValueIsRefusedPastTwoHundredCharactersHoweverItIsWritten(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		refused     bool
	}{
		{"a short id", "id=" + strings.Repeat("q", 36), false},
		{"200 letters", "name=" + strings.Repeat("n", 200), false},
		{"201 letters", "name=" + strings.Repeat("n", 201), true},
		{"200 letters written as escapes", "name=" + strings.Repeat("%6E", 200), false},
		{"201 letters written as escapes", "name=" + strings.Repeat("%6E", 201), true},
		{"200 two-byte characters", "name=" + strings.Repeat("é", 200), false},
		{"201 two-byte characters", "name=" + strings.Repeat("é", 201), true},
		{"201 letters in a second parameter", "id=q&name=" + strings.Repeat("n", 201), true},
		{"a malformed escape", "name=%ZZ", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := queryProblem(httptest.NewRequest("GET", "/api/airports?"+tt.query, nil))
			if (err != nil) != tt.refused {
				t.Errorf("queryProblem = %v, want refused: %v", err, tt.refused)
			}
		})
	}
}

// A query parameter whose value (or name) is not UTF-8 once its escapes
// are decoded, or holds a character no text may (a NUL, a direction
// override), matches no filter: it is refused, named, where the answer was
// empty (GET /api/audit-logs?userId=%FF was a 200 of nothing).
func TestAQueryParameterThatIsNotUTF8OnceDecodedIsRefusedByName(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		field       string // of the INVALID_FORMAT, or "" when taken
	}{
		{"an escaped byte that is no character", "userId=%FF", "userId"},
		{"a raw byte that is no character", "userId=\xff", "userId"},
		{"half a character", "name=%C3", "name"},
		{"a character escaped", "name=%C3%A9", ""},
		{"a character as sent", "name=é", ""},
		{"a second parameter", "page=1&userId=ab%FF", "userId"},
		{"a name that is no text", "%FF=1", "\uFFFD"},
		{"a NUL", "name=a%00b", "name"},
		{"a direction override", "name=%E2%80%AEabc", "name"},
		{"a tab", "name=a%09b", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := queryProblem(httptest.NewRequest("GET", "/api/audit-logs?"+tt.query, nil))
			var e *domain.Error
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("queryProblem = %v, want none", err)
			case tt.field == "":
			case !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != tt.field || e.Fields[0].Code != domain.CodeInvalidFormat:
				t.Errorf("queryProblem = %#v, want INVALID_FORMAT on %q", err, tt.field)
			}
		})
	}
}

// A body refused for its type says what type it came with: curl -d sends
// a form's unless told otherwise, and "must be application/json" alone
// left the sender looking at a body that was JSON.
func TestABodyRefusedForItsTypeIsToldTheTypeItCameWith(t *testing.T) {
	for _, tt := range []struct {
		name, contentType, says string
	}{
		{"curl -d's form type", "application/x-www-form-urlencoded", `this request has Content-Type "application/x-www-form-urlencoded"`},
		{"no type at all", "", "this request has no Content-Type"},
		{"plain text", "text/plain; charset=utf-8", `this request has Content-Type "text/plain; charset=utf-8"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/quotes", strings.NewReader(`{"pieces": 1}`))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			_, err := readJSONBody(r)
			if errorCode(err) != codeUnsupportedMedia || !strings.Contains(err.Error(), "sent with Content-Type: application/json; "+tt.says) {
				t.Errorf("= %v, want %s saying %q", err, codeUnsupportedMedia, tt.says)
			}
		})
	}
}

// A filter of ids, the parameter repeated, takes at most its number of
// ids (more is TOO_MANY, as for any list), each one that can be an id.
func TestAFilterOfIdsTakesAtMostItsNumberOfIds(t *testing.T) {
	for _, tt := range []struct {
		name  string
		query string
		want  string // the ids read, or the field and code refused
	}{
		{"two ids", "eventId=e1&eventId=e2", "[e1 e2]"},
		{"none", "", "[]"},
		{"three, one more than allowed", "eventId=e1&eventId=e2&eventId=e3", "eventId TOO_MANY"},
		{"one that is no id", "eventId=e1&eventId=e%202", "eventId INVALID_FORMAT"},
	} {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		var p domain.Problems
		got := fmt.Sprint(idsParam(q, &p, "eventId", 2))
		if e, ok := errors.AsType[*domain.Error](p.Err()); ok {
			got = e.Fields[0].Field + " " + string(e.Fields[0].Code)
		}
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// An answer says its length, as long as it is (net/http works it out for
// up to 2 kB alone, and sent a longer one in chunks), to a HEAD too, which
// gets no body.
func TestAJSONAnswerSaysItsLengthToAGetAndAHead(t *testing.T) {
	long := strings.Repeat("x", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"note": r.URL.Query().Get("note")})
	}))
	defer srv.Close()
	for _, note := range []string{"short", long} {
		saysItsLength(t, srv, "?note="+note, len(`{"note":""}`+"\n")+len(note))
	}
}

// saysItsLength checks that srv answers a GET and a HEAD of path with
// Content-Length size, not in chunks, and the GET with a body that long.
func saysItsLength(t *testing.T, srv *httptest.Server, path string, size int) {
	t.Helper()
	want := strconv.Itoa(size)
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if got := res.Header.Get("Content-Length"); got != want || len(res.TransferEncoding) > 0 {
			t.Errorf("%s of %d bytes: Content-Length %q, Transfer-Encoding %v; want %s and none", method, size, got, res.TransferEncoding, want)
		}
		if method == "GET" && len(body) != size {
			t.Errorf("GET of %d bytes: a body of %d bytes", size, len(body))
		}
	}
}
