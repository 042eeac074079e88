package domain

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// declared parses this package's sources, without its tests, and returns
// the names of the types that have a method called method, and of the
// constants whose names begin with prefix.
func declared(t *testing.T, method, prefix string) (types, consts []string) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".go") || strings.HasSuffix(entry.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), entry.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == method {
					types = append(types, d.Recv.List[0].Type.(*ast.Ident).Name)
				}
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					for _, name := range spec.(*ast.ValueSpec).Names {
						if strings.HasPrefix(name.Name, prefix) {
							consts = append(consts, name.Name)
						}
					}
				}
			}
		}
	}
	return types, consts
}

func TestEveryEventTypeIsRegisteredOnceAndDecodesToItself(t *testing.T) {
	events, _ := declared(t, "EventType", "")
	var registered []string
	for name, decode := range decoders {
		e, err := decode([]byte("{}"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.EventType() != name {
			t.Errorf("the decoder of %q makes a %T, whose type is %q", name, e, e.EventType())
		}
		registered = append(registered, reflect.TypeOf(e).Name())
	}
	slices.Sort(events)
	slices.Sort(registered)
	if !slices.Equal(events, registered) {
		t.Errorf("events declared %v\nevents registered %v", events, registered)
	}
}

func TestEveryAggregateTypeIsListedOnce(t *testing.T) {
	_, consts := declared(t, "", "Aggregate")
	if len(consts) != len(AggregateTypes) {
		t.Errorf("%d aggregate type constants, %d listed in AggregateTypes", len(consts), len(AggregateTypes))
	}
	seen := map[string]bool{}
	for _, a := range AggregateTypes {
		if seen[a] {
			t.Errorf("aggregate type %q listed twice", a)
		}
		seen[a] = true
	}
}

// fill sets every field of v, as deep as it goes, to a value that is not
// its zero one and that a JSON decoder could get wrong: text with
// escapes and characters beyond ASCII, fractions and exponents, the
// largest integers, instants with nanoseconds. seed varies the values.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.String:
		texts := []string{"LHR \"Heathrow\" <&> \\ \t\u00e9\u8336\U0001F6EB", "a", "line\nbreak \u2028", "organizationId"}
		v.SetString(texts[seed%len(texts)])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{-42, math.MaxInt64, 1, math.MinInt64}[seed%4])
	case reflect.Uint64:
		v.SetUint([]uint64{7, math.MaxUint64, 1 << 53}[seed%3])
	case reflect.Uint8:
		v.SetUint(uint64(200 + seed%50))
	case reflect.Float64:
		v.SetFloat([]float64{0.1, 1e21, -3.5e-7, 123456789.123456789, 5e-324, math.MaxFloat64}[seed%6])
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), seed+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(v.Index(i), seed+i+1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for i := range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, seed+i)
			fill(e, seed+i+1)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 29, 1, 30, seed%60, 123456789, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed+i)
			}
		}
	}
}

// payloadVariants are payloads made from the JSON of a full event: its
// members each set to null or to a value of another type, an unknown
// member, spacing, and payloads that are not JSON of an object at all.
// Names in other cases are not among them: encoding/json matches them to
// fields regardless of case, the faster decoder only in events of at most
// 16 fields. Events are written by encoding/json from these very types,
// with their names exactly as tagged, and no tag has ever changed only in
// case (a renamed member needs an upcaster anyway).
func payloadVariants(t *testing.T, full []byte) map[string][]byte {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(full, &members); err != nil {
		t.Fatal(err)
	}
	variants := map[string][]byte{"full": full, "empty": []byte("{}"), "null": []byte("null"),
		"unknown member": append([]byte(`{"notAField":[1,{"a":"b"}],`), full[1:]...),
		"spaced":         bytes.ReplaceAll(bytes.ReplaceAll(full, []byte(`,"`), []byte(",\n\t \"")), []byte(`":`), []byte(`" : `)),
		"array":          []byte("[]"), "string": []byte(`"x"`), "trailing text": append(slices.Clone(full), " x"...),
		"truncated": full[:len(full)/2], "unclosed": full[:len(full)-1]}
	for name := range members {
		variants[name+" null"] = jsonOf(t, maps.Collect(func(yield func(string, json.RawMessage) bool) {
			for n, v := range members {
				if n == name {
					v = json.RawMessage("null")
				}
				if !yield(n, v) {
					return
				}
			}
		}))
		variants[name+" of another type"] = jsonOf(t, map[string]any{name: map[string]bool{"wrong": true}})
	}
	return variants
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Events are decoded with a faster decoder than encoding/json, the one
// they are written with; every event type must come back exactly as
// encoding/json would read it, and a payload that it refuses must be
// refused too.
func TestEveryEventTypeDecodesAsEncodingJSONWouldDecodeIt(t *testing.T) {
	for _, name := range EventTypes() {
		full := filledEvent(name)
		typ := full.Type()
		for variant, payload := range payloadVariants(t, jsonOf(t, full.Interface())) {
			t.Run(name+"/"+variant, func(t *testing.T) {
				got, err := DecodeEvent(name, payload)
				want := reflect.New(typ)
				wantErr := json.Unmarshal(payload, want.Interface())
				switch {
				case (err == nil) != (wantErr == nil):
					t.Fatalf("decoding %s gave the error %v, encoding/json %v", payload, err, wantErr)
				case err == nil && !reflect.DeepEqual(got, want.Elem().Interface()):
					t.Errorf("decoding %s gave\n%#v\nencoding/json\n%#v", payload, got, want.Elem().Interface())
				case variant == "full" && !reflect.DeepEqual(got, full.Interface()):
					t.Errorf("%s decodes to\n%#v\nnot the event it is the JSON of\n%#v", payload, got, full.Interface())
				}
			})
		}
	}
}

// filledEvent is an event of the type name, every field filled.
func filledEvent(name string) reflect.Value {
	decoded, err := decoders[name]([]byte("{}"))
	if err != nil {
		panic(err)
	}
	e := reflect.New(reflect.TypeOf(decoded)).Elem()
	fill(e, len(name))
	return e
}

// A decoded event's strings are copies, as encoding/json's are, not
// slices of the payload: a read model keeping one must not keep the rest.
func TestDecodedStringsDoNotShareTheMemoryOfOtherStrings(t *testing.T) {
	for _, name := range EventTypes() {
		e := filledEvent(name)
		// Every string a slice of one buffer, as goccy leaves them.
		var buffer []byte
		replaceStrings(e, func(s string) string { buffer = append(buffer, s...); return s })
		all, at := string(buffer), 0
		replaceStrings(e, func(s string) string { at += len(s); return all[at-len(s) : at] })
		replaceStrings(e, ownString)
		start := uintptr(unsafe.Pointer(unsafe.StringData(all)))
		replaceStrings(e, func(s string) string {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); s != "" && p >= start && p < start+uintptr(len(all)) {
				t.Errorf("%s: %q still shares the memory of the other strings", name, s)
			}
			return s
		})
	}
}

// A short string that many events name (a code, a flight) is kept once
// however many events are decoded; a long one (an id) is each event's own.
// The events hold no other string (empty ones take no slot), so that no
// other evicts the value from its slot between the two decodings.
func TestDecodedShortStringsAreKeptOnce(t *testing.T) {
	tests := []struct {
		name, value string
		shared      bool
	}{
		{"a code", "FRA", true},
		{"a flight", "LH8000-2026-11-28", true},
		{"the longest shared", strings.Repeat("x", maxSharedString), true},
		{"an id", "3f2b8c1e-5d7a-4b1c-9e0f-2a6b8c4d1e3f", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for range 2 {
				data, err := json.Marshal(QuoteRequested{QuoteID: tt.value, Origin: tt.value})
				if err != nil {
					t.Fatal(err)
				}
				e, err := DecodeEvent(QuoteRequested{}.EventType(), data)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, e.(QuoteRequested).Origin)
			}
			if got[0] != tt.value || got[1] != tt.value {
				t.Fatalf("decoded %q and %q, want %q", got[0], got[1], tt.value)
			}
			if shared := unsafe.StringData(got[0]) == unsafe.StringData(got[1]); shared != tt.shared {
				t.Errorf("one copy for both events %t, want %t", shared, tt.shared)
			}
		})
	}
}

// panicky is an event whose decoding panics, as goccy's does on some
// malformed payloads.
type panicky struct{}

func (panicky) EventType() string           { return "Panicky" }
func (*panicky) UnmarshalJSON([]byte) error { panic("index out of range") }

func TestADecoderThatPanicsRefusesThePayloadInstead(t *testing.T) {
	if _, err := decoder[panicky]([]byte(`{}`)); err == nil || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("decoding = %v, want an error saying the payload could not be read", err)
	}
}

func TestAnEventTypeIsAWebhookEventWhenItsEventsAre(t *testing.T) {
	webhookEvents := 0
	for _, name := range EventTypes() {
		want := WebhookEventOf(filledEvent(name).Interface().(Event)) != ""
		if IsWebhookEvent(name) != want {
			t.Errorf("IsWebhookEvent(%s) = %v, but WebhookEventOf names its filled event %v", name, !want, want)
		}
		if want {
			webhookEvents++
		}
	}
	if webhookEvents < 19 || IsWebhookEvent((WebhookDeliveryAttempted{}).EventType()) {
		t.Errorf("%d webhook event types, delivery attempts among them %v: want the 19 or more WebhookEventOf names, not attempts", webhookEvents, IsWebhookEvent((WebhookDeliveryAttempted{}).EventType()))
	}
}

// BenchmarkDecodeEvent decodes an event of every type, filled, with
// DecodeEvent and, in the same run, with encoding/json (the yardstick).
//
//	go test ./domain -run '^$' -bench DecodeEvent -benchmem
func BenchmarkDecodeEvent(b *testing.B) {
	type payload struct {
		name string
		data []byte
		typ  reflect.Type
	}
	var payloads []payload
	for _, name := range EventTypes() {
		e := filledEvent(name)
		data, err := json.Marshal(e.Interface())
		if err != nil {
			b.Fatal(err)
		}
		payloads = append(payloads, payload{name, data, e.Type()})
	}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			p := payloads[i%len(payloads)]
			if err := json.Unmarshal(p.data, reflect.New(p.typ).Interface()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeEvent", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			p := payloads[i%len(payloads)]
			if _, err := DecodeEvent(p.name, p.data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Every event that puts its aggregate into a status the API shows (an API
// key's: its revoked flag) says which, with a status field of its own or as a StatusSetter, and a
// StatusSetter's is the status the API then shows: the audit log knows a
// change of status only so. An event sets a status when its aggregate's
// Evolve, from either of two states of different statuses, leaves another.
func TestEveryEventThatSetsAStatusSaysWhich(t *testing.T) {
	str := func(s CredentialStatus) string { return string(s.Shown()) }
	statuses := map[string]func(e Event) (before, after [2]string){
		"a quote":         statusesOf([2]Quote{{Status: "x1"}, {Status: "x2"}}, EvolveQuote, func(q Quote) string { return q.Status }),
		"a booking":       statusesOf([2]Booking{{Status: "x1"}, {Status: "x2"}}, EvolveBooking, func(b Booking) string { return b.Status }),
		"a stock request": statusesOf([2]StockRequest{{Status: "x1"}, {Status: "x2"}}, EvolveStockRequest, func(s StockRequest) string { return s.Status }),
		"a flight":        statusesOf([2]Flight{{Status: "x1"}, {Status: "x2"}}, EvolveFlight, func(f Flight) string { return f.Status }),
		"a webhook":       statusesOf([2]Webhook{{}, {Deleted: true}}, EvolveWebhook, Webhook.Status),
		"an organisation": statusesOf([2]Organization{{Status: "x1"}, {Status: "x2"}}, EvolveOrganization, func(o Organization) string { return str(o.Status) }),
		"a client":        statusesOf([2]Client{{Status: "x1"}, {Status: "x2"}}, EvolveClient, func(c Client) string { return str(c.Status) }),
		"an API key":      statusesOf([2]APIKey{{}, {Revoked: true}}, EvolveAPIKey, apiKeyStatus),
		"a user":          statusesOf([2]User{{Status: "x1"}, {Status: "x2"}}, EvolveUser, func(u User) string { return str(u.Status) }),
	}
	setters := 0
	for _, name := range EventTypes() {
		e, err := DecodeEvent(name, []byte("{}"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		_, hasStatus := fields["status"]
		for aggregate, status := range statuses {
			before, after := status(e)
			if before == after {
				continue
			}
			s, ok := e.(StatusSetter)
			switch {
			case hasStatus:
			case !ok:
				t.Errorf("%s puts %s into status %q, and says so neither in a status field nor as a StatusSetter", name, aggregate, after[0])
			case s.SetsStatus() != after[0]:
				t.Errorf("%s puts %s into status %q, and says it sets %q", name, aggregate, after[0], s.SetsStatus())
			default:
				setters++
			}
		}
	}
	if setters < 19 {
		t.Errorf("%d StatusSetters checked, want the 19 or more of quotes, bookings, stock requests, webhooks, flights, credentials and API keys", setters)
	}
}

// apiKeyStatus is an API key's status as the audit log shows it.
func apiKeyStatus(k APIKey) string {
	if k.Revoked {
		return APIKeyStatusRevoked
	}
	return APIKeyStatusActive
}

// statusesOf is the statuses of two states of an aggregate before and
// after evolve applies an event to each, as status shows them.
func statusesOf[S any](states [2]S, evolve func(S, Event) S, status func(S) string) func(Event) (before, after [2]string) {
	return func(e Event) (before, after [2]string) {
		for i, s := range states {
			before[i], after[i] = status(s), status(evolve(s, e))
		}
		return before, after
	}
}
