package domain

import (
	"fmt"
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"
)

// Event is a fact that has happened. Its type name is stable forever:
// stored events are decoded by it.
type Event interface {
	EventType() string
}

// StatusSetter is an event that puts its aggregate into a status of the
// API's (a booking confirmed, a quote priced) without a field of its own
// that names it: the event's type says it. The audit log shows the change
// of status as it shows a changed field, which it could not tell from the
// event's fields alone. Events with a status field of their own (a stock
// reply, a flight's status) do not need it.
type StatusSetter interface {
	Event
	SetsStatus() string
}

// Restater is an event that states some of its fields whether it has
// a value for them or not: one it leaves out is now empty (a delay without
// an estimate withdraws the last one's; a revised manifest without
// differences has none). The audit log shows such a field emptied, where
// it compared only the fields an event has, and read as if the last value
// stood.
type Restater interface {
	Event
	Restates() []string // the fields' JSON names
}

// Addition is an event that adds a record of its own to its aggregate (a
// house waybill under its master, one more e-DGD, e-CSD or PLACI of a
// shipment, a status event), rather than changing what the aggregate
// holds: the audit log shows it as a create, compared with nothing, where
// it showed the master's weight and parties "changed" to the house's.
type Addition interface {
	Event
	AddsRecord()
}

// OfRecord is an event about one of several records its aggregate holds
// (a flight's reservation for a booking, an offload of a shipment, a
// ledger's AWB number, the range of a stock request in its ledger and its
// prefix, a revocation of a subject's tokens, a subscription an
// organisation's webhook quota holds or releases): the audit log
// compares it with the aggregate's own fields alone, which it repeats (the
// flight's id), where it compared it with the last record's too, and
// showed a second booking's reservation as the first's bookingId changed
// to the second's, and a second number used as the first's awbNumber
// changed.
type OfRecord interface {
	Event
	AboutOneRecord()
}

func (CapacityReserved) AboutOneRecord()    {}
func (CapacityReleased) AboutOneRecord()    {}
func (OffloadReported) AboutOneRecord()     {}
func (AWBNumberUsed) AboutOneRecord()       {}
func (AWBNumberReleased) AboutOneRecord()   {}
func (StockAllocated) AboutOneRecord()      {}
func (StockWithdrawn) AboutOneRecord()      {}
func (RangeAllocated) AboutOneRecord()      {}
func (RangeReleased) AboutOneRecord()       {}
func (TokensRevoked) AboutOneRecord()       {}
func (WebhookQuotaChanged) AboutOneRecord() {}

func (HAWBCreated) AddsRecord()            {}
func (DGDSubmitted) AddsRecord()           {}
func (CSDSubmitted) AddsRecord()           {}
func (PLACISubmitted) AddsRecord()         {}
func (ShipmentStatusRecorded) AddsRecord() {}

// decoders knows every event type. A structural change to an event bumps
// its schema version and adds an upcaster in the event store; additive
// changes need neither.
var decoders = map[string]func([]byte) (Event, error){
	OrganizationCreated{}.EventType():       decoder[OrganizationCreated],
	AirlineIdentifierClaimed{}.EventType():  decoder[AirlineIdentifierClaimed],
	WebhookQuotaChanged{}.EventType():       decoder[WebhookQuotaChanged],
	ClientCreated{}.EventType():             decoder[ClientCreated],
	UserCreated{}.EventType():               decoder[UserCreated],
	APIKeyCreated{}.EventType():             decoder[APIKeyCreated],
	APIKeyRevoked{}.EventType():             decoder[APIKeyRevoked],
	ClientStatusChanged{}.EventType():       decoder[ClientStatusChanged],
	UserStatusChanged{}.EventType():         decoder[UserStatusChanged],
	OrganizationStatusChanged{}.EventType(): decoder[OrganizationStatusChanged],
	ClientSecretRotated{}.EventType():       decoder[ClientSecretRotated],
	UserPasswordSet{}.EventType():           decoder[UserPasswordSet],
	TokensRevoked{}.EventType():             decoder[TokensRevoked],
	QuoteRequested{}.EventType():            decoder[QuoteRequested],
	QuotePriced{}.EventType():               decoder[QuotePriced],
	QuoteRejected{}.EventType():             decoder[QuoteRejected],
	QuoteAccepted{}.EventType():             decoder[QuoteAccepted],
	QuoteReopened{}.EventType():             decoder[QuoteReopened],
	ShipmentStatusRecorded{}.EventType():    decoder[ShipmentStatusRecorded],
	MAWBCreated{}.EventType():               decoder[MAWBCreated],
	HAWBCreated{}.EventType():               decoder[HAWBCreated],
	PLACISubmitted{}.EventType():            decoder[PLACISubmitted],
	CSDSubmitted{}.EventType():              decoder[CSDSubmitted],
	DGDSubmitted{}.EventType():              decoder[DGDSubmitted],
	ManifestSubmitted{}.EventType():         decoder[ManifestSubmitted],
	OffloadReported{}.EventType():           decoder[OffloadReported],
	DocumentUploaded{}.EventType():          decoder[DocumentUploaded],
	FlightScheduled{}.EventType():           decoder[FlightScheduled],
	FlightStatusChanged{}.EventType():       decoder[FlightStatusChanged],
	FlightAircraftChanged{}.EventType():     decoder[FlightAircraftChanged],
	CapacityReserved{}.EventType():          decoder[CapacityReserved],
	CapacityReleased{}.EventType():          decoder[CapacityReleased],
	RateCardSet{}.EventType():               decoder[RateCardSet],
	BookingRequested{}.EventType():          decoder[BookingRequested],
	BookingConfirmed{}.EventType():          decoder[BookingConfirmed],
	BookingRejected{}.EventType():           decoder[BookingRejected],
	BookingCancelled{}.EventType():          decoder[BookingCancelled],
	StockRequested{}.EventType():            decoder[StockRequested],
	StockReplied{}.EventType():              decoder[StockReplied],
	RangeAllocated{}.EventType():            decoder[RangeAllocated],
	RangeReleased{}.EventType():             decoder[RangeReleased],
	StockAllocated{}.EventType():            decoder[StockAllocated],
	StockWithdrawn{}.EventType():            decoder[StockWithdrawn],
	AWBNumberUsed{}.EventType():             decoder[AWBNumberUsed],
	AWBNumberReleased{}.EventType():         decoder[AWBNumberReleased],
	ReferenceChanged{}.EventType():          decoder[ReferenceChanged],
	AuthorizationRecorded{}.EventType():     decoder[AuthorizationRecorded],
	OrganizationRateLimitsSet{}.EventType(): decoder[OrganizationRateLimitsSet],
	WebhookRegistered{}.EventType():         decoder[WebhookRegistered],
	WebhookDeleted{}.EventType():            decoder[WebhookDeleted],
	WebhookDisabled{}.EventType():           decoder[WebhookDisabled],
	WebhookDeliveryAttempted{}.EventType():  decoder[WebhookDeliveryAttempted],
	StockLow{}.EventType():                  decoder[StockLow],
}

// decoder reads a payload with goccy/go-json, not encoding/json, which
// writes it: read models are rebuilt by decoding every event of the
// stream, and there it decodes 1.6-1.8 times as fast
// (BenchmarkDecodeEvent), its strings copied out as encoding/json's are
// (see replaceStrings). It reads every event encoding/json wrote exactly
// as encoding/json would (see the test beside), but for member names in
// another case than the tags', which no stored event has; some malformed
// payloads encoding/json refuses it reads (a bad escape in an unknown
// member's name; it reads past the end of a payload cut in an escape,
// which the race detector's pointer checks stop), which only a corrupted
// store holds.
// A panic of the decoder's (goccy has some on malformed input, which
// encoding/json refuses) is an error: a corrupt event is refused, as
// encoding/json would, and does not bring down a replica replaying it.
func decoder[E Event](data []byte) (_ Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding %T: the payload could not be read (%v)", *new(E), r)
		}
	}()
	var e E
	err = json.Unmarshal(data, &e)
	if err == nil {
		replaceStrings(reflect.ValueOf(&e).Elem(), ownString)
	}
	return e, err
}

// maxSharedString is the longest decoded string ownString shares: codes,
// airports, statuses, currencies, dates, organisations, flights
// ("LH8000-2026-11-28"), which events repeat by the thousand. Longer ones
// (ids, names, text) rarely repeat.
const maxSharedString = 24

// sharedStrings holds the short strings decoded lately, one a slot, in
// the slot of its hash: a string found there is handed out again, not
// copied anew. A string whose slot another took is copied once more, and
// the strings of events already decoded keep their copies: it is bounded,
// and takes no lock, as events are decoded on every core at once.
// (unique.Make, which shares every string through one map all cores
// use, made the replay at start a fifth slower in BenchmarkReplay.)
var (
	sharedStrings    [1 << 14]atomic.Pointer[string]
	sharedStringSeed = maphash.MakeSeed()
)

// ownString is a decoded string in memory of its own (see
// replaceStrings), shared with the equal strings decoded before it if it
// is short and still in sharedStrings: the read models then keep a code
// or a flight once, not once per event that named it.
func ownString(s string) string {
	if s == "" {
		return "" // no memory to own; most fields left out are empty, and would take slots for nothing
	}
	if len(s) > maxSharedString {
		return strings.Clone(s)
	}
	slot := &sharedStrings[maphash.String(sharedStringSeed, s)%uint64(len(sharedStrings))]
	if kept := slot.Load(); kept != nil && *kept == s {
		return *kept
	}
	own := strings.Clone(s)
	slot.Store(&own)
	return own
}

// replaceStrings sets every string in v, as deep as it goes, to f of it.
// Decoded events have their strings given memory of their own this way
// (ownString): goccy's are slices of its copy of the whole payload,
// and a read model keeping one name of an event would keep all of it (a
// fifth more memory for the read models), where encoding/json's are
// copies.
func replaceStrings(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(f(v.String()))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if field := v.Field(i); field.CanSet() {
				replaceStrings(field, f)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			replaceStrings(v.Elem(), f)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, decoded from base64 into their own
		}
		for i := range v.Len() {
			replaceStrings(v.Index(i), f)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		replaced := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			key, value := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			key.Set(it.Key())
			value.Set(it.Value())
			replaceStrings(key, f)
			replaceStrings(value, f)
			replaced.SetMapIndex(key, value)
		}
		v.Set(replaced)
	}
}

// EventTypes lists every event type, sorted.
func EventTypes() []string {
	return slices.Sorted(maps.Keys(decoders))
}

// DecodeEvent turns a stored payload back into its event.
func DecodeEvent(eventType string, data []byte) (Event, error) {
	d, ok := decoders[eventType]
	if !ok {
		return nil, fmt.Errorf("domain: %q: %w", eventType, ErrUnknownEventType)
	}
	e, err := d(data)
	if err != nil {
		return nil, fmt.Errorf("domain: decoding %s: %w", eventType, err)
	}
	return e, nil
}
