package domain

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Codes of status event refusals.
const (
	// CodeInvalidEventType: a status event that is not an IATA status
	// code, or a discrepancy code where none belongs.
	CodeInvalidEventType FieldCode = "INVALID_EVENT_TYPE"
	// CodeExceedsShipment: a status event of more pieces than the
	// shipment has.
	CodeExceedsShipment FieldCode = "EXCEEDS_SHIPMENT"
)

// Declaration is a shipment as its declaration of record has it (see
// Declared), and which declaration that is, as a message names it ("its
// MAWB"), "" for none.
type Declaration struct {
	Load
	By string
}

// Declared is a shipment of a (canonical) AWB number as its declaration
// of record has it: its MAWB (nil when none), else its booking if
// confirmed; of no pieces when it has neither.
func Declared(awb string, b Booking, mawb *MAWBCreated) Declaration {
	switch {
	case mawb != nil:
		return Declaration{Load{AWBNumber: awb, Pieces: mawb.Pieces, WeightKg: mawb.WeightKg, VolumeM3: mawb.VolumeM3}, "its MAWB"}
	case b.Status == BookingStatusConfirmed:
		return Declaration{Load{AWBNumber: awb, Pieces: b.Pieces, WeightKg: b.WeightKg, VolumeM3: b.VolumeM3}, "its confirmed booking"}
	}
	return Declaration{Load: Load{AWBNumber: awb}}
}

// statusCodes are the IATA shipment status codes (Cargo-XML XFSU), and
// the discrepancy codes that qualify DIS.
var statusCodes = map[string]string{
	"ARR": "Arrived", "AWD": "Arrival documents delivered", "AWR": "Arrival documents received", "BKD": "Booked",
	"CCD": "Cleared by customs", "CRC": "Reported to customs", "DDL": "Delivered to consignee door", "DEP": "Departed",
	"DIS": "Discrepancy", "DLV": "Delivered", "DOC": "Documents received by handling party", "DPU": "Picked up from shipper door",
	"FIW": "Freight into warehouse control", "FOH": "Freight on hand", "FOW": "Freight out of warehouse control",
	"MAN": "Manifested", "NFD": "Consignee notified", "OCI": "Other customs/security/regulatory information",
	"OSI": "Other service information", "PRE": "Prepared for loading", "RCF": "Received from flight",
	"RCS": "Received from shipper", "RCT": "Received from other carrier", "TFD": "Transferred to other carrier",
	"TGC": "Transferred to customs/government control", "TRM": "To be transferred to other carrier",
}

var discrepancyCodes = map[string]string{
	"DFLD": "Definitely loaded", "FDAV": "Found mail document", "FDAW": "Found air waybill", "FDCA": "Found cargo",
	"FDMB": "Found mailbag", "MSAV": "Missing mail document", "MSAW": "Missing air waybill", "MSCA": "Missing cargo",
	"MSMB": "Missing mailbag", "OFLD": "Offloaded", "OVCD": "Overcarried", "SSPD": "Shortshipped",
}

// eventDateTolerance is how far in the future an event may be dated:
// clocks of handling systems drift. How far back is a year, a calendar
// one (see pastDateTime): an air waybill's life is days to weeks, so a
// date more than a year old is a typo or a zero date, and would sort
// before everything the shipment did.
const eventDateTolerance = 15 * time.Minute

// dateTimePattern is the shape of a date-time a client may send, as the
// OpenAPI document's pattern says: RFC 3339 with a fraction of a second
// of at most nine digits (nanoseconds, the finest a time holds).
// time.Parse takes a fraction of any length, after a comma too, and a
// one-digit hour, and an offset of up to 99:99 (+24:00 is read as a day
// ahead, +00:60 as an hour), where RFC 3339 has hours to 23 and minutes
// to 59.
var dateTimePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`)

// DateTimeShape says what a date-time a client sends must be, for the
// message that refuses one.
const DateTimeShape = "a date-time as RFC 3339, such as 2026-11-25T14:30:00Z, with at most nine digits after the seconds' point"

// ParseDateTime reads a date-time of dateTimePattern.
func ParseDateTime(s string) (time.Time, bool) {
	if !dateTimePattern.MatchString(s) {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// dateTime reads a date-time a client sent, in UTC, adding to p one that
// is none (INVALID_DATE on field); ok is false then.
func dateTime(p *Problems, field, value string) (t time.Time, ok bool) {
	t, ok = ParseDateTime(value)
	if !ok {
		p.Add(field, CodeInvalidDate, "must be %s", DateTimeShape)
	}
	return t.UTC(), ok
}

// pastDateTime reads the date-time of something that happened: an RFC
// 3339 date-time, at most eventDateTolerance ahead, not more than a year before now.
func pastDateTime(p *Problems, field, value string, now time.Time) time.Time {
	t, ok := dateTime(p, field, value)
	switch {
	case !ok:
	case t.After(now.Add(eventDateTolerance)):
		p.Add(field, CodeInvalidDate, "must not be in the future")
	case t.Before(yearBefore(now.UTC())):
		p.Add(field, CodeInvalidDate, "must not be more than a year ago")
	default:
		return t
	}
	return time.Time{}
}

// yearBefore is the same moment a calendar year before t, as the README
// says "a year ago": not 366 days, which took a date a year and a day old
// in a year after no 29 February. A year before 29 February is the 28th,
// where Go's AddDate makes it 1 March, and would refuse the day between.
func yearBefore(t time.Time) time.Time {
	y := t.AddDate(-1, 0, 0)
	if y.Month() != t.Month() {
		y = y.AddDate(0, 0, -y.Day())
	}
	return y
}

// KnownStatus tells whether code is an IATA status code and discrepancy,
// if any, a discrepancy code of a DIS.
func KnownStatus(code, discrepancy string) bool {
	if _, ok := statusCodes[code]; !ok {
		return false
	}
	return discrepancy == "" || (code == "DIS" && discrepancyCodes[discrepancy] != "")
}

// ShipmentStatusRecorded records a status event of a shipment.
type ShipmentStatusRecorded struct {
	AWBNumber       string    `json:"awbNumber"`
	StatusEventID   string    `json:"eventId"`
	StatusCode      string    `json:"eventType"`                 // the IATA status code
	DiscrepancyCode string    `json:"discrepancyCode,omitempty"` // with DIS
	EventDate       time.Time `json:"eventDate"`
	Location        string    `json:"location"`
	Pieces          *int      `json:"pieces,omitempty"`
	Weight          *float64  `json:"weight,omitempty"`
	Notes           string    `json:"notes,omitempty"`
	RecordedAt      time.Time `json:"recordedAt"`
	// Source says where a status the airline did not post itself comes
	// from: "manifest" (MAN), "offload" (DIS/OFLD) or "flight" (DEP and
	// ARR, and DIS/OFLD when it is cancelled); empty when posted.
	Source string `json:"source,omitempty"`
	// FlightID is the flight of a status from a manifest, offload or
	// flight; empty when posted (the airline's post names none). Events
	// recorded before it was kept have none either.
	FlightID string `json:"flightId,omitempty"`
}

func (ShipmentStatusRecorded) EventType() string { return "ShipmentStatusRecorded" }

// Sources of status events recorded from flight operations.
const (
	StatusFromManifest = "manifest"
	StatusFromOffload  = "offload"
	StatusFromFlight   = "flight"
)

// ManifestedStatus is the MAN status a manifest gives one of its
// shipments, at the flight's origin, under the manifest's id.
func ManifestedStatus(m ManifestSubmitted, l Load) ShipmentStatusRecorded {
	return ShipmentStatusRecorded{AWBNumber: l.AWBNumber, StatusEventID: m.ManifestID, StatusCode: "MAN", EventDate: m.SubmittedAt,
		Location: m.Origin, Pieces: &l.Pieces, Weight: &l.WeightKg, Notes: "manifested on " + m.FlightID, RecordedAt: m.SubmittedAt,
		Source: StatusFromManifest, FlightID: m.FlightID}
}

// DroppedStatus is the DIS/OFLD status a revised manifest gives a
// shipment the earlier manifest loaded and it leaves out.
func DroppedStatus(m ManifestSubmitted, l Load) ShipmentStatusRecorded {
	return ShipmentStatusRecorded{AWBNumber: l.AWBNumber, StatusEventID: m.ManifestID, StatusCode: "DIS", DiscrepancyCode: "OFLD",
		EventDate: m.SubmittedAt, Location: m.Origin, Pieces: &l.Pieces, Weight: &l.WeightKg,
		Notes: "not on the revised manifest of " + m.FlightID, RecordedAt: m.SubmittedAt, Source: StatusFromManifest,
		FlightID: m.FlightID}
}

// FoundOnBoardStatus is the DEP a revised manifest of a departed flight
// gives a shipment it adds (see ManifestSubmitted.FoundOnBoard): the
// flight's departure, as its change gave the shipments on board then. It
// is dated when the manifest told it, right after the MAN, its notes
// saying when the flight departed: dated at the departure, before the
// MAN, it would leave the MAN the shipment's latest status while it is in
// the air.
func FoundOnBoardStatus(m ManifestSubmitted, l Load) ShipmentStatusRecorded {
	notes := "departed on " + m.FlightID + " at " + m.DepartedAt.UTC().Format(time.RFC3339) + ", found on board"
	return ShipmentStatusRecorded{AWBNumber: l.AWBNumber, StatusEventID: m.ManifestID + "-DEP", StatusCode: "DEP", EventDate: m.SubmittedAt,
		Location: m.Origin, Pieces: &l.Pieces, Weight: &l.WeightKg, Notes: notes, RecordedAt: m.SubmittedAt, Source: StatusFromFlight, FlightID: m.FlightID}
}

// OffloadedStatus is the DIS/OFLD status an offload gives its shipment,
// under the offload's id.
func OffloadedStatus(o OffloadReported) ShipmentStatusRecorded {
	notes := "offloaded from " + o.FlightID + ": " + o.Reason
	if o.Notes != "" {
		notes += " — " + o.Notes
	}
	return ShipmentStatusRecorded{AWBNumber: o.AWBNumber, StatusEventID: o.OffloadID, StatusCode: "DIS", DiscrepancyCode: "OFLD",
		EventDate: o.ReportedAt, Location: o.Origin, Pieces: &o.Pieces, Weight: &o.WeightKg, Notes: notes, RecordedAt: o.ReportedAt,
		Source: StatusFromOffload, FlightID: o.FlightID}
}

// FlightChangeStatuses are the statuses a flight's change gives each
// shipment on board, as its latest manifest less offloads has them, under
// the id of the change: its departure a DEP at its origin, its arrival an
// ARR at its destination, and its cancellation a DIS/OFLD at its origin
// (the cargo stays behind, no longer manifested on it, free to go on
// another flight: the IATA codes have none for a cancelled flight); none
// for another change.
func FlightChangeStatuses(f Flight, e FlightStatusChanged, id string) []ShipmentStatusRecorded {
	code, discrepancy, at, notes := "", "", "", ""
	switch e.Status {
	case FlightStatusDeparted:
		code, at, notes = "DEP", f.Origin, "departed on "+f.ID
	case FlightStatusArrived:
		code, at, notes = "ARR", f.Destination, "arrived on "+f.ID
	case FlightStatusCancelled:
		code, discrepancy, at, notes = "DIS", "OFLD", f.Origin, "offloaded: flight "+f.ID+" cancelled"
	default:
		return nil
	}
	var out []ShipmentStatusRecorded
	for _, awb := range slices.Sorted(maps.Keys(f.Loaded)) {
		l := f.Loaded[awb]
		out = append(out, ShipmentStatusRecorded{AWBNumber: awb, StatusEventID: id, StatusCode: code, DiscrepancyCode: discrepancy,
			EventDate: e.ChangedAt, Location: at, Pieces: &l.Pieces, Weight: &l.WeightKg, Notes: notes, RecordedAt: e.ChangedAt,
			Source: StatusFromFlight, FlightID: f.ID})
	}
	return out
}

// StatusesFrom are the statuses an event of flight f (as it stands after
// the event) gives the shipments it names, under the event's id: a
// manifest's MAN to each shipment it loads (and the DEP to those found on
// board a departed flight, after their MAN) and DIS/OFLD to each it leaves
// out, an offload's DIS/OFLD, and a departure's, arrival's or
// cancellation's (FlightChangeStatuses); none for another event. They are
// stored with the event, which then says so (StatusesStored); the
// shipments reactor records those of an event stored before that was so.
func StatusesFrom(e Event, f Flight, id string) []ShipmentStatusRecorded {
	switch e := e.(type) {
	case ManifestSubmitted:
		var out []ShipmentStatusRecorded
		found := map[string]bool{}
		for _, awb := range e.FoundOnBoard {
			found[awb] = true
		}
		for _, l := range e.Shipments {
			out = append(out, ManifestedStatus(e, l))
			if found[l.AWBNumber] {
				out = append(out, FoundOnBoardStatus(e, l))
			}
		}
		for _, l := range e.Dropped {
			out = append(out, DroppedStatus(e, l))
		}
		return out
	case OffloadReported:
		return []ShipmentStatusRecorded{OffloadedStatus(e)}
	case FlightStatusChanged:
		return FlightChangeStatuses(f, e, id)
	}
	return nil
}

// WithStatusesStored is e, a flight's event, saying that the statuses it
// gives the shipments (StatusesFrom) are stored with it.
func WithStatusesStored(e Event) Event {
	switch e := e.(type) {
	case ManifestSubmitted:
		e.StatusesStored = true
		return e
	case OffloadReported:
		e.StatusesStored = true
		return e
	case FlightStatusChanged:
		e.StatusesStored = true
		return e
	}
	return e
}

// StatusesStoredWith says whether the statuses e gives the shipments are
// stored with it (see WithStatusesStored).
func StatusesStoredWith(e Event) bool {
	switch e := e.(type) {
	case ManifestSubmitted:
		return e.StatusesStored
	case OffloadReported:
		return e.StatusesStored
	case FlightStatusChanged:
		return e.StatusesStored
	}
	return false
}

// Shipment is what a shipment's status events decide on: its departures
// and arrivals on its flight, so that a movement both the flight's change
// and the airline's own post report is recorded once, whichever comes
// first.
type Shipment struct {
	// Flight is the flight whose manifest last loaded the shipment: the
	// flight of a DEP or ARR the airline posts, which names none.
	Flight string
	// Moved are the DEPs and ARRs, oldest first, each with its flight
	// (Flight, when posted), since the shipment was last offloaded or
	// loaded on another flight than the one it moved with: a movement
	// after that is another. All of them, not the latest alone: the
	// airline's DEP may come after the flight's arrival.
	Moved []ShipmentStatusRecorded
}

// EvolveShipment applies a status event to a shipment.
func EvolveShipment(s Shipment, e Event) Shipment {
	st, ok := e.(ShipmentStatusRecorded)
	if !ok {
		return s
	}
	switch {
	case st.StatusCode == "MAN" && st.Source == StatusFromManifest:
		s.Flight = st.FlightID
		// A revised manifest of the flight it moved with keeps the
		// movements that flight's. A movement of no known flight was
		// posted before any manifest loaded the shipment (its MAN is
		// stored with the manifest): not this flight's, whose own DEP and
		// ARR are then recorded. (Before the MAN was, it came moments
		// after the manifest, and the airline may have posted its DEP in
		// between: that DEP then stands beside the flight's.)
		if slices.ContainsFunc(s.Moved, func(m ShipmentStatusRecorded) bool { return m.FlightID != st.FlightID }) {
			s.Moved = nil
		}
	case st.StatusCode == "DIS" && st.DiscrepancyCode == "OFLD":
		s.Moved = nil
	case st.StatusCode == "DEP" || st.StatusCode == "ARR":
		if st.FlightID == "" {
			st.FlightID = s.Flight
		}
		// Clipped: a state may be shared (a cached one, a pending one),
		// and its slice must not be appended to in place.
		s.Moved = append(slices.Clip(s.Moved), st)
	}
	return s
}

// Repeated returns the movement on record (Moved) that e reports again,
// if any: a DEP or ARR at the same airport, on the same flight, where one
// of the two is the flight's (marked departed or arrived) and the other
// the airline's post. A shipment cannot depart an airport again before
// anything else moves it. Two posts of the airline are both recorded, as
// posted: a part shipment departs in parts.
func (s Shipment) Repeated(e ShipmentStatusRecorded) (ShipmentStatusRecorded, bool) {
	for _, m := range slices.Backward(s.Moved) {
		switch {
		case m.StatusCode != e.StatusCode || m.Location != e.Location:
		case (m.Source == StatusFromFlight) == (e.Source == StatusFromFlight):
		case m.FlightID == "" || e.FlightID == "" || m.FlightID == e.FlightID:
			return m, true
		}
	}
	return ShipmentStatusRecorded{}, false
}

// DecideStatusFrom records the statuses that a manifest, offload or flight
// gives a shipment, in their order, each unless it repeats one on record
// (see Repeated).
func DecideStatusFrom(s Shipment, statuses ...ShipmentStatusRecorded) []Event {
	var out []Event
	for _, st := range statuses {
		if _, ok := s.Repeated(st); ok {
			continue
		}
		out = append(out, st)
		s = EvolveShipment(s, st)
	}
	return out
}

// StatusesByShipment groups statuses (StatusesFrom's, sorted or not) by
// shipment: those of one shipment come together there.
func StatusesByShipment(statuses []ShipmentStatusRecorded) [][]ShipmentStatusRecorded {
	var out [][]ShipmentStatusRecorded
	for i, st := range statuses {
		if i > 0 && statuses[i-1].AWBNumber == st.AWBNumber {
			out[len(out)-1] = append(out[len(out)-1], st)
			continue
		}
		out = append(out, []ShipmentStatusRecorded{st})
	}
	return out
}

// XFSUCode is the event's code as a Cargo-XML XFSU message carries it:
// the status code, and for a discrepancy its qualifier (DIS_OFLD).
func (e ShipmentStatusRecorded) XFSUCode() string {
	if e.DiscrepancyCode != "" {
		return e.StatusCode + "_" + e.DiscrepancyCode
	}
	return e.StatusCode
}

// SplitEventType reads an event type as a status code and its
// discrepancy qualifier, if any: DIS/OFLD, or DIS_OFLD as Cargo-XML XFSU
// and ONE Record write it (and as the service's xfsuCode answers it).
func SplitEventType(s string) (code, qualifier string) {
	s = strings.ToUpper(strings.TrimSpace(s))
	code, qualifier, found := strings.Cut(s, "/")
	if !found {
		code, qualifier, _ = strings.Cut(s, "_")
	}
	return code, qualifier
}

// RecordStatus is a status event posted for a shipment.
type RecordStatus struct {
	AWBNumber       string
	StatusEventID   string
	EventType       string // a code, or DIS/OFLD
	DiscrepancyCode string
	EventDate       string
	Location        string
	Pieces          *int
	Weight          *float64
	Notes           string
	// Declared is the shipment as declared (see Declared), of no pieces
	// when the service knows no declaration.
	Declared Declaration
	At       time.Time
}

// DecideRecordStatus validates a status event and records it, unless it
// repeats a departure or arrival on record (see Shipment.Repeated): then
// it decides nothing, and returns the status on record as repeated.
func DecideRecordStatus(s Shipment, c RecordStatus, ref Lookup) (events []Event, repeated *ShipmentStatusRecorded, err error) {
	var p Problems
	e := ShipmentStatusRecorded{AWBNumber: c.AWBNumber, StatusEventID: c.StatusEventID, Notes: c.Notes, RecordedAt: c.At,
		Location: strings.ToUpper(strings.TrimSpace(c.Location)), Pieces: c.Pieces, Weight: c.Weight}
	code, qualifier := SplitEventType(c.EventType)
	qualifiedIn := "eventType" // the field a problem of the qualifier is told on: the one that sent it
	switch field := strings.ToUpper(strings.TrimSpace(c.DiscrepancyCode)); {
	case qualifier == "":
		qualifier, qualifiedIn = field, "discrepancyCode"
	case field != "" && field != qualifier:
		p.Add("discrepancyCode", CodeMismatch, "is %s, but eventType says %s", field, qualifier)
	}
	e.StatusCode, e.DiscrepancyCode = code, qualifier
	switch {
	case code == "":
		p.Add("eventType", CodeRequired, "is required")
	case !KnownStatus(code, ""):
		p.Add("eventType", CodeInvalidEventType, "%q is not an IATA status code (RCS, MAN, DEP, ARR, DLV, DIS, …)", code)
	case code == "DIS" && qualifier == "":
		p.Add("discrepancyCode", CodeInvalidEventType, "a DIS event needs a discrepancy code (OFLD, MSCA, FDCA, …)")
	case code == "DIS" && discrepancyCodes[qualifier] == "":
		p.Add(qualifiedIn, CodeInvalidEventType, "%q is no discrepancy code of a DIS event (OFLD, MSCA, FDCA, …)", qualifier)
	case code != "DIS" && qualifier != "":
		p.Add(qualifiedIn, CodeInvalidEventType, "only a DIS event takes a discrepancy code")
	}
	checkAirport(&p, "location", e.Location)
	checkKnownAirport(&p, ref, "location", e.Location)
	if c.EventDate == "" {
		p.Add("eventDate", CodeRequired, "is required")
	} else {
		e.EventDate = pastDateTime(&p, "eventDate", c.EventDate, c.At)
	}
	onRecord, repeats := s.Repeated(e)
	switch {
	case c.Pieces == nil:
	case *c.Pieces < 0 || *c.Pieces > maxPieces:
		p.Add("pieces", CodeInvalidRange, "must be 0 to %d", maxPieces)
	case c.Declared.Pieces > 0 && *c.Pieces > c.Declared.Pieces:
		// A status reports what happened to the shipment or a part of
		// it: more pieces than it has is a typing error, which the
		// timeline and the shipment's reported pieces would keep. A
		// repeat of a departure or arrival on record is answered by the
		// record, as a retry of it must be, even if the declaration has
		// shrunk since it was recorded.
		if !repeats {
			p.Add("pieces", CodeExceedsShipment, "%s has %s as declared by %s: a status event reports at most all of them",
				c.AWBNumber, countOf(c.Declared.Pieces, "piece"), c.Declared.By)
		}
	}
	if c.Weight != nil && !(*c.Weight >= 0 && *c.Weight <= maxWeightKg) {
		p.Add("weight", CodeInvalidRange, "must be 0 to %d kg", maxWeightKg)
	}
	checkLength(&p, "notes", c.Notes, maxNotes)
	if err := p.Err(); err != nil {
		return nil, nil, err
	}
	if repeats {
		return nil, &onRecord, nil
	}
	return []Event{e}, nil, nil
}

// ShipmentOwnership is what the read models know of whose a shipment is:
// the forwarder organisation whose confirmed booking carries the AWB
// number, the one that filed its MAWB, and the one whose AWB stock holds
// the number; "" where there is none. The access rules of a shipment
// take it as an argument so that they stay pure.
type ShipmentOwnership struct {
	AWBNumber   string // canonical
	BookedBy    string
	WaybilledBy string
	StockHolder string
}

// Owner is the forwarder organisation the shipment is of: the booking's,
// else the MAWB's, else the stock's; "" when none. Filings and uploads
// never make a shipment anyone's: else a forwarder could file first on a
// number it does not hold and so read the shipment.
func (s ShipmentOwnership) Owner() string {
	return cmp.Or(s.BookedBy, s.WaybilledBy, s.StockHolder)
}

// VisibleTo: admins; the airline of the AWB's prefix; the forwarder the
// shipment is of (see Owner).
func (s ShipmentOwnership) VisibleTo(p Principal) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleAirline:
		return carries(p, s.AWBNumber)
	}
	return s.Owner() == p.OrganizationID
}

// carries: the airline whose AWB prefix a number bears issued it and
// carries the shipment.
func carries(p Principal, awb string) bool {
	return p.Role == RoleAirline && p.AWBPrefix == awb[:3]
}

// CheckStatusPoster: a shipment's status events (received, departed,
// discrepancies, …) report what the carrier does with the cargo, so only
// the airline of the AWB's prefix posts them.
func CheckStatusPoster(p Principal, awb string) error {
	if !carries(p, awb) {
		return Errorf(Forbidden, "status events of %s are posted by the airline with prefix %s", awb, awb[:3])
	}
	return nil
}

// CheckFiler: a forwarder files declarations and uploads documents for
// its own shipments only (see Owner) — a declaration may come before the
// MAWB, for a number of its stock.
func (s ShipmentOwnership) CheckFiler(p Principal) error {
	if s.Owner() != p.OrganizationID {
		return Errorf(Forbidden, "%s is not a shipment of yours: file for the AWB numbers you booked, waybilled or hold in stock", s.AWBNumber)
	}
	return nil
}

// HeldInStockBy is the forwarder whose AWB stock alone makes the shipment
// its own, with no booking or MAWB yet; "" when there is none. A filing,
// document or status of the shipment then holds the number in that
// forwarder's ledger (DecideHoldAWBForRecord), as one decision with it,
// whoever makes it: else the ledger, which counted the number unused,
// gave it to the forwarder's next booking naming none, whose consignment
// then had the airline's RCS or e-CSD of another on its number.
func (s ShipmentOwnership) HeldInStockBy() string {
	if s.BookedBy != "" || s.WaybilledBy != "" {
		return ""
	}
	return s.StockHolder
}

// checkOwnerOrAirline: a forwarder files for its own shipments only (see
// CheckFiler), an airline for the AWB numbers of its prefix. Anyone else
// is refused in the words of refusal, a format of the AWB number and its
// prefix.
func (s ShipmentOwnership) checkOwnerOrAirline(p Principal, refusal string) error {
	awb := s.AWBNumber
	switch {
	case p.Role == RoleForwarder:
		return s.CheckFiler(p)
	case !carries(p, awb):
		return Errorf(Forbidden, refusal, awb, awb[:3])
	}
	return nil
}
