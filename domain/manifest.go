package domain

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxManifestShipments bounds one manifest: a widebody freighter carries a
// few hundred AWBs. The manifest and the status of each shipment it lists
// or leaves out are one decision (see StatusesFrom), which the store takes
// in one atomic batch of at most 1,000 events.
const MaxManifestShipments = 999

// Codes of manifest and offload refusals.
const (
	CodeNotOnFlight   FieldCode = "AWB_NOT_ON_FLIGHT"
	CodeOnOtherFlight FieldCode = "AWB_ON_OTHER_FLIGHT"
	CodeExceedsLoaded FieldCode = "EXCEEDS_LOADED"
	// CodeCargoAircraftOnly: goods forbidden on passenger aircraft, or
	// cargo secured for cargo aircraft only, named on the manifest of a
	// passenger aircraft.
	CodeCargoAircraftOnly FieldCode = "CARGO_AIRCRAFT_ONLY"
	// CodeNotSecured: cargo whose e-CSD says it is not secured (NSC)
	// named on a manifest: no aircraft may load it until it is.
	CodeNotSecured FieldCode = "NOT_SECURED"
)

// Load is what one AWB puts on a flight, as its air waybill (or else its
// booking) declares.
type Load struct {
	AWBNumber string  `json:"awbNumber"`
	Pieces    int     `json:"pieces"`
	WeightKg  float64 `json:"weight"`
	VolumeM3  float64 `json:"volume"`
}

// ManifestDifference is a manifest total that differs from the sum of its
// shipments' declarations.
type ManifestDifference struct {
	Field      string  `json:"field"`
	Manifested float64 `json:"manifested"`
	Declared   float64 `json:"declared"`
}

// ManifestSubmitted records an airline's manifest of a flight. A later
// manifest of the same flight supersedes the earlier one.
type ManifestSubmitted struct {
	ManifestID    string               `json:"manifestId"`
	FlightID      string               `json:"flightId"`
	FlightNumber  string               `json:"flightNumber"`
	Origin        string               `json:"origin"`
	Shipments     []Load               `json:"shipments"`
	TotalPieces   int                  `json:"totalPieces"`
	TotalWeightKg float64              `json:"totalWeight"`
	TotalVolumeM3 float64              `json:"totalVolume"`
	Differences   []ManifestDifference `json:"differences,omitempty"`
	// Dropped are the shipments the earlier manifest of the flight loaded
	// and this one leaves out: taken off the flight.
	Dropped []Load `json:"dropped,omitempty"`
	// FoundOnBoard are the shipments a revised manifest of a departed
	// flight adds to it (cargo found on board): they departed with it,
	// at DepartedAt, and get its DEP with their MAN (see
	// FoundOnBoardStatus).
	FoundOnBoard   []string  `json:"foundOnBoard,omitempty"`
	DepartedAt     time.Time `json:"departedAt,omitzero"`
	SubmittedAt    time.Time `json:"submittedAt"`
	StatusesStored bool      `json:"statusesStored,omitempty"` // see StatusesFrom
}

func (ManifestSubmitted) EventType() string { return "ManifestSubmitted" }

// Restates: a revised manifest's differences are the flight's, none
// when it has none; and what it takes off the flight, or finds on board,
// is its own, none when it leaves them out, not what the last one did.
func (ManifestSubmitted) Restates() []string {
	return []string{"differences", "dropped", "foundOnBoard"}
}

// OffloadReported records cargo taken off a flight it was manifested on.
type OffloadReported struct {
	OffloadID    string  `json:"offloadId"`
	FlightID     string  `json:"flightId"`
	FlightNumber string  `json:"flightNumber"`
	Origin       string  `json:"origin"`
	AWBNumber    string  `json:"awbNumber"`
	Reason       string  `json:"reason"`
	Pieces       int     `json:"pieces"`
	WeightKg     float64 `json:"weight"` // taken off the flight's load
	// ReportedWeightKg is the weight the report gave for the last pieces
	// of the AWB when it differs from what was left of it on board, which
	// they take off (0 when it does not, and before it was kept).
	ReportedWeightKg float64   `json:"reportedWeight,omitempty"`
	VolumeM3         float64   `json:"volume"` // the share of the AWB's volume offloaded
	Notes            string    `json:"notes,omitempty"`
	ReportedAt       time.Time `json:"reportedAt"`
	StatusesStored   bool      `json:"statusesStored,omitempty"` // see StatusesFrom
}

func (OffloadReported) EventType() string { return "OffloadReported" }

// ManifestCandidate is an AWB named on a manifest, with what the service
// knows of it: whether it is booked on the flight or otherwise a known
// shipment of the airline, its declared load, and the other flight still
// on the ground whose manifest has it on board ("" when none).
type ManifestCandidate struct {
	Load
	Known   bool
	OnBoard string
	// OnBoardPieces are the pieces of it that flight has on board: fewer
	// than declared once some were offloaded there.
	OnBoardPieces int
	// LeftOn is the flight that carried the whole shipment away from this
	// flight's origin, to elsewhere ("" when none): it is not waiting there.
	LeftOn Flight
	// CargoAircraftOnly is the UN number of an e-DGD of the shipment
	// that no passenger aircraft may carry ("" when none).
	CargoAircraftOnly string
	// SecurityStatus is that of the shipment's e-CSD (SPX, SCO, SHR,
	// NSC), "" when none was filed: security is then the airline's, at
	// acceptance.
	SecurityStatus string
	// CancelledOn is the airline's cancelled flight from this flight's
	// origin that had the shipment, of the airline's prefix, on board,
	// when nothing else makes it known: its booking went with the flight,
	// and it goes on once it has a MAWB or a confirmed booking again
	// ("" when none).
	CancelledOn string
	// BookingID is the confirmed booking on this flight that carries
	// the AWB number, as the facts knew it ("" when none): the flight
	// holds its reservation until it is cancelled, which the facts may
	// not know yet (see ReservationGone).
	BookingID string
	// Version is that of the shipment's statuses the facts were read at
	// (see ManifestFacts.Version).
	Version uint64
}

// ReservationGone reports whether the booking the candidate was known by
// no longer holds a reservation on flight f: it was cancelled after the
// facts were read, in one transaction with the release, and the facts are
// to be read again before the manifest is decided.
func (c ManifestCandidate) ReservationGone(f Flight) bool {
	if c.BookingID == "" {
		return false
	}
	_, held := f.Reservations[c.BookingID]
	return !held
}

// ManifestFacts are what the read models know of an AWB named on a
// manifest: the confirmed booking that carries the number (zero when
// none) and the flight that booking is on, the shipment's MAWB (nil
// when none), and the flights whose manifests or offloads named it.
type ManifestFacts struct {
	AWBNumber string // canonical
	// Version is the stream sequence of the shipment's last status
	// event, read before the rest: a manifest that puts the shipment on
	// board records its MAN status in the same decision, so the facts of
	// a shipment whose statuses are still at Version know of every
	// manifest that loaded it.
	Version      uint64
	Booking      Booking
	BookedFlight Flight
	MAWB         *MAWBCreated
	Manifested   []Flight
	Filings      Compliance               // the shipment's e-DGDs and e-CSD
	Statuses     []ShipmentStatusRecorded // the shipment's status events
}

// NewManifestCandidate decides whether an AWB named on a manifest of
// flight may go: if its confirmed booking is on the flight, or if it is a
// shipment of the airline's prefix waiting at the flight's origin (its
// MAWB from there, its confirmed booking on another flight from there, or
// a flight that carried it whole arriving there): freight on hand the
// airline moves to this flight. A shipment a flight carried away whole
// from there is not waiting there, unless a status since says it stayed.
// Its load is as declared (DeclaredLoad).
func NewManifestCandidate(flight Flight, awb ManifestFacts) ManifestCandidate {
	c := ManifestCandidate{Load: Declared(awb.AWBNumber, awb.Booking, awb.MAWB).Load, Version: awb.Version}
	own := awb.AWBNumber[:3] == flight.AWBPrefix
	if b := awb.Booking; b.Status == BookingStatusConfirmed {
		c.Known = b.FlightID == flight.ID || (own && awb.BookedFlight.Origin == flight.Origin)
		if b.FlightID == flight.ID {
			c.BookingID = b.ID
		}
	}
	if m := awb.MAWB; m != nil {
		c.Known = c.Known || (own && m.Origin == flight.Origin)
	}
	// Where the shipment is now: what the last flight that carried it
	// whole left with it says, unless a status since places it here (cargo
	// a manifest named that stayed behind, found once the flight had
	// gone). Asked of the airline's own shipments and of those booked on
	// this flight alone: of any other, the answer would tell the airline
	// where another's cargo went. Cargo this flight has on board already
	// is its own (a revised manifest after its departure).
	_, aboard := flight.Loaded[awb.AWBNumber]
	if last, ok := awb.lastCarrier(flight.ID, c.Pieces); ok && (c.Known || own) && !aboard && !awb.statusSince(last.departure(), flight.Origin) {
		if last.Destination == flight.Origin {
			c.Known = true
		} else {
			c.Known, c.LeftOn = false, last
		}
	}
	// Part of it a flight from here already took away (the rest
	// offloaded before it left) is not here: what waits, and goes on
	// this flight, is the rest, else the flight's load, its MAN and its
	// DEP and ARR would count the pieces gone twice.
	if c.LeftOn.ID == "" {
		c.Load = awb.leftBehind(flight, c.Load)
	}
	if !c.Known && own && c.LeftOn.ID == "" {
		for _, f := range awb.Manifested {
			if _, loaded := f.Loaded[awb.AWBNumber]; loaded && f.Status == FlightStatusCancelled &&
				f.Origin == flight.Origin && f.Carrier == flight.Carrier {
				c.CancelledOn = f.ID
			}
		}
	}
	c.CargoAircraftOnly = awb.Filings.CargoAircraftOnly()
	if awb.Filings.CSD != nil {
		c.SecurityStatus = awb.Filings.CSD.SecurityStatus
	}
	// A manifest loads the whole shipment: one a flight not yet gone has
	// on board is there, and moves only once taken off (an offload, or a
	// revised manifest). Else both flights would count its weight, and
	// both could fly it. Cargo a departed flight left behind may go.
	for _, f := range awb.Manifested {
		if l, loaded := f.Loaded[awb.AWBNumber]; loaded && f.ID != flight.ID && f.Bookable() {
			c.OnBoard, c.OnBoardPieces = f.ID, l.Pieces
		}
	}
	return c
}

// NoPassengerAircraft says why no passenger aircraft may carry the
// shipment: the UN number of an e-DGD declaring goods for cargo aircraft
// only, or SCO, the status of an e-CSD that secures it for cargo aircraft
// only; "" when neither.
func (c Compliance) NoPassengerAircraft() string {
	if un := c.CargoAircraftOnly(); un != "" {
		return un
	}
	if c.CSD != nil && c.CSD.SecurityStatus == securedForCargoAircraftOnly {
		return securedForCargoAircraftOnly
	}
	return ""
}

// CargoAircraftOnly is the UN number of an e-DGD of the shipment that
// declares goods for cargo aircraft only, or "" when none does.
func (c Compliance) CargoAircraftOnly() string {
	un := ""
	for _, d := range c.DGDs {
		// An e-DGD filed before the field was recorded has the
		// built-in list's word alone.
		if d.CargoAircraftOnly || forbiddenOnPassengerAircraft(nil, nil, d.UNNumber) {
			un = d.UNNumber
		}
	}
	return un
}

// lastCarrier is the flight, other than the one of id, that last left
// with the whole shipment on board (of pieces, as declared): the shipment
// is at its destination, or on its way there. Part of it left behind (an
// offload of some pieces) is still at the origin, and may go from there.
func (awb ManifestFacts) lastCarrier(id string, pieces int) (Flight, bool) {
	var last Flight
	for _, f := range awb.Manifested {
		l, loaded := f.Loaded[awb.AWBNumber]
		gone := f.Status == FlightStatusDeparted || f.Status == FlightStatusArrived
		if f.ID != id && gone && loaded && l.Pieces >= pieces && !f.departure().Before(last.departure()) {
			last = f
		}
	}
	return last, last.ID != ""
}

// leftBehind is what is left at flight's origin of the declared load:
// less what the flights other than flight that have left from there
// carried of it. When they carried it all, or more than it declares
// (cargo a manifest named that stayed behind, see statusSince), what is
// there is the declaration.
func (awb ManifestFacts) leftBehind(flight Flight, declared Load) Load {
	rest := declared
	for _, f := range awb.Manifested {
		l, loaded := f.Loaded[awb.AWBNumber]
		gone := f.Status == FlightStatusDeparted || f.Status == FlightStatusArrived
		if f.ID != flight.ID && gone && loaded && f.Origin == flight.Origin {
			rest.Pieces -= l.Pieces
			rest.WeightKg -= l.WeightKg
			rest.VolumeM3 -= l.VolumeM3
		}
	}
	if rest.Pieces < 1 || rest.WeightKg <= 0 {
		return declared
	}
	rest.WeightKg, rest.VolumeM3 = round3(rest.WeightKg), round3(max(0, rest.VolumeM3))
	return rest
}

// statusSince reports whether a status event of the shipment dated after
// t is at location.
func (awb ManifestFacts) statusSince(t time.Time, location string) bool {
	return slices.ContainsFunc(awb.Statuses, func(s ShipmentStatusRecorded) bool {
		return s.EventDate.After(t) && s.Location == location
	})
}

// departure is when the flight left: as reported, else as scheduled.
func (f Flight) departure() time.Time {
	if f.DepartedAt.IsZero() {
		return f.DepartsAt
	}
	return f.DepartedAt
}

// Carriers are the flights still on the ground (scheduled or delayed) set
// to carry the shipment: that of its confirmed booking, unless a manifest
// of it leaves the shipment out, and the others whose manifest loads it.
func (awb ManifestFacts) Carriers() []Flight {
	loads := func(f Flight) bool { _, ok := f.Loaded[awb.AWBNumber]; return ok }
	var carriers []Flight
	if f := awb.BookedFlight; awb.Booking.Status == BookingStatusConfirmed && f.Bookable() && (len(f.Loaded) == 0 || loads(f)) {
		carriers = append(carriers, f)
	}
	for _, f := range awb.Manifested {
		if f.Bookable() && loads(f) && f.ID != awb.BookedFlight.ID {
			carriers = append(carriers, f)
		}
	}
	return carriers
}

// SubmitManifest is a manifest as posted, its AWBs looked up.
type SubmitManifest struct {
	ManifestID  string
	FlightID    string // the body's flightId, if given
	Shipments   []ManifestCandidate
	TotalPieces *int
	TotalWeight *float64
	TotalVolume *float64
	Carrier     string // the posting airline
	At          time.Time
}

// DecideSubmitManifest checks a manifest: the flight is the airline's and
// has not arrived, every AWB is booked on it or waiting at its origin (see
// ManifestCandidate), none twice, and once it has departed none it loaded
// is left out. Totals that differ from the shipments' declarations are
// accepted — the airline's scales are the truth — and reported.
func DecideSubmitManifest(f Flight, c SubmitManifest) ([]Event, error) {
	if err := checkOwnFlight(f, c.Carrier); err != nil {
		return nil, err
	}
	if f.Status == FlightStatusArrived {
		return nil, Errorf(Conflict, "flight %s has arrived: its manifest is closed", f.ID)
	}
	var p Problems
	if c.FlightID != "" && c.FlightID != f.ID {
		p.Add("flightId", CodeMismatch, "must be the flight of the path, %s", f.ID)
	}
	switch n := len(c.Shipments); {
	case n == 0:
		p.Add("awbNumbers", CodeRequired, "must name at least one AWB")
	case n > MaxManifestShipments:
		p.Add("awbNumbers", CodeTooMany, "at most %d AWBs per manifest", MaxManifestShipments)
	}
	e := ManifestSubmitted{ManifestID: c.ManifestID, FlightID: f.ID, FlightNumber: f.FlightNumber, Origin: f.Origin, SubmittedAt: c.At}
	var declared Load
	seen := map[string]bool{}
	for i, s := range c.Shipments {
		field := "awbNumbers[" + strconv.Itoa(i) + "]"
		switch {
		case seen[s.AWBNumber]:
			p.Add(field, CodeDuplicate, "%s is named twice", s.AWBNumber)
		case s.LeftOn.ID != "" && s.LeftOn.Carrier == f.Carrier:
			p.Add(field, CodeNotOnFlight, "%s is not waiting at %s: it left on %s, whole, for %s (a status at %s since then says it stayed)",
				s.AWBNumber, f.Origin, s.LeftOn.ID, s.LeftOn.Destination, f.Origin)
		case s.LeftOn.ID != "":
			p.Add(field, CodeNotOnFlight, "%s is not waiting at %s: another airline's flight took it away", s.AWBNumber, f.Origin)
		case !s.Known && s.CancelledOn != "":
			p.Add(field, CodeNotOnFlight, "%s is neither booked on %s nor known as waiting at %s: it came off %s when that flight was cancelled, "+
				"and goes on as freight on hand once it has a MAWB from %s or a confirmed booking again",
				s.AWBNumber, f.ID, f.Origin, s.CancelledOn, f.Origin)
		case !s.Known:
			p.Add(field, CodeNotOnFlight, "%s is neither booked on %s nor a shipment of prefix %s waiting at %s", s.AWBNumber, f.ID, f.AWBPrefix, f.Origin)
		case s.OnBoard != "" && s.OnBoardPieces > 0 && s.OnBoardPieces < s.Pieces:
			// Some pieces were offloaded there already: they go once the
			// flight has left with the rest (see leftBehind).
			p.Add(field, CodeOnOtherFlight, "%s is on board %s, %d of its %d pieces: the pieces offloaded there may go once %s has departed; else offload the rest there, or leave it out of a revised manifest of %s, first",
				s.AWBNumber, s.OnBoard, s.OnBoardPieces, s.Pieces, s.OnBoard, s.OnBoard)
		case s.OnBoard != "":
			p.Add(field, CodeOnOtherFlight, "%s is on board %s: offload it there, or leave it out of a revised manifest of %s, first", s.AWBNumber, s.OnBoard, s.OnBoard)
		case s.CargoAircraftOnly != "" && f.PassengerAircraft():
			p.Add(field, CodeCargoAircraftOnly, "%s has dangerous goods (%s) forbidden on passenger aircraft, and %s is a passenger aircraft (%s)", s.AWBNumber, s.CargoAircraftOnly, f.ID, f.AircraftType)
		case s.SecurityStatus == notSecured:
			// Aviation security (ICAO Annex 17): cargo is loaded on no
			// aircraft until screened, or exempt, and so secured.
			p.Add(field, CodeNotSecured, "%s is not secured (its e-CSD says NSC): screen it, and file an e-CSD saying so, before an aircraft loads it", s.AWBNumber)
		case s.SecurityStatus == securedForCargoAircraftOnly && f.PassengerAircraft():
			p.Add(field, CodeCargoAircraftOnly, "%s is secured for cargo aircraft only (its e-CSD says SCO), and %s is a passenger aircraft (%s)", s.AWBNumber, f.ID, f.AircraftType)
		}
		seen[s.AWBNumber] = true
		load := s.Load
		if l, aboard := f.Loaded[s.AWBNumber]; aboard && f.Status == FlightStatusDeparted {
			// What the flight departed with: pieces offloaded before it
			// left stayed behind, and may go on another flight (see
			// leftBehind). Reloaded whole, the flight's load, the MAN and
			// the ARR would count them on board, and the flight that takes
			// them would count them again.
			load = l
		}
		e.Shipments = append(e.Shipments, load)
		declared.Pieces += load.Pieces
		declared.WeightKg += load.WeightKg
		declared.VolumeM3 += load.VolumeM3
	}
	e.TotalPieces, e.TotalWeightKg, e.TotalVolumeM3 = declared.Pieces, round3(declared.WeightKg), round3(declared.VolumeM3)
	// A manifest loads at least one AWB: its pieces and weight are more
	// than nothing. Its volume may be unknown (0).
	if v := c.TotalPieces; v != nil {
		if *v < 1 || *v > maxPieces*MaxManifestShipments {
			p.Add("totalPieces", CodeInvalidRange, "must be from 1 to %d", maxPieces*MaxManifestShipments)
		} else {
			e.TotalPieces = *v
		}
	}
	if v := c.TotalWeight; v != nil {
		if !(*v > 0 && *v <= maxWeightKg) {
			p.Add("totalWeight", CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
		} else {
			e.TotalWeightKg = *v
		}
	}
	if v := c.TotalVolume; v != nil {
		if !(*v >= 0 && *v <= maxVolumeM3) {
			p.Add("totalVolume", CodeInvalidRange, "must be from 0 to %d m³", maxVolumeM3)
		} else {
			e.TotalVolumeM3 = *v
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	for _, awb := range slices.Sorted(maps.Keys(f.Loaded)) {
		if !seen[awb] {
			e.Dropped = append(e.Dropped, f.Loaded[awb])
		}
	}
	if f.Status == FlightStatusDeparted {
		// A shipment left out is offloaded (DIS/OFLD): not from a
		// flight in the air, as an offload report is not.
		if len(e.Dropped) > 0 {
			return nil, Errorf(Conflict, "flight %s has departed with %s on board: a revised manifest cannot leave it out (cargo missing on arrival is a DIS event)",
				f.ID, e.Dropped[0].AWBNumber)
		}
		// Cargo found on board may still be added: it departed with
		// the flight.
		for _, l := range e.Shipments {
			if _, ok := f.Loaded[l.AWBNumber]; !ok {
				e.FoundOnBoard = append(e.FoundOnBoard, l.AWBNumber)
			}
		}
		if len(e.FoundOnBoard) > 0 {
			e.DepartedAt = f.DepartedAt
		}
	}
	// Each shipment listed or left out gets its status with the manifest
	// (StatusesFrom), in one atomic batch of at most 1,000 events.
	if n := len(e.Shipments) + len(e.Dropped) + len(e.FoundOnBoard); n > MaxManifestShipments {
		if len(e.FoundOnBoard) > 0 {
			p.Add("awbNumbers", CodeTooMany, "a revised manifest of departed flight %s lists %d AWBs, %d of them not on board at its departure, each of which gets its DEP as well as its MAN: at most %d statuses in all; add them in more than one revision",
				f.ID, len(e.Shipments), len(e.FoundOnBoard), MaxManifestShipments)
		} else {
			p.Add("awbNumbers", CodeTooMany, "a revised manifest lists %d AWBs and takes %d off %s: at most %d in all, as each gets its status with the manifest; take some off with a revision of their own first",
				len(e.Shipments), len(e.Dropped), f.ID, MaxManifestShipments)
		}
		return nil, p.Err()
	}
	for _, d := range []ManifestDifference{
		{"totalPieces", float64(e.TotalPieces), float64(declared.Pieces)},
		{"totalWeight", e.TotalWeightKg, round3(declared.WeightKg)},
		{"totalVolume", e.TotalVolumeM3, round3(declared.VolumeM3)},
	} {
		if math.Abs(d.Manifested-d.Declared) > 0.0005 {
			e.Differences = append(e.Differences, d)
		}
	}
	return []Event{e}, nil
}

// ReportOffload is an offload as posted.
type ReportOffload struct {
	OffloadID string
	AWBNumber string
	Reason    string
	Pieces    *int
	WeightKg  *float64
	Notes     string
	Carrier   string
	At        time.Time
}

// DecideReportOffload checks an offload against what the flight's
// manifest loaded for the AWB, less what was offloaded before.
func DecideReportOffload(f Flight, c ReportOffload) ([]Event, error) {
	if err := checkOwnFlight(f, c.Carrier); err != nil {
		return nil, err
	}
	if f.Status == FlightStatusDeparted || f.Status == FlightStatusArrived {
		return nil, Errorf(Conflict, "flight %s has %s: cargo missing on arrival is a discrepancy (DIS) event, not an offload", f.ID, f.Status)
	}
	var p Problems
	e := OffloadReported{OffloadID: c.OffloadID, FlightID: f.ID, FlightNumber: f.FlightNumber, Origin: f.Origin, AWBNumber: c.AWBNumber,
		Reason: strings.TrimSpace(c.Reason), Notes: c.Notes, ReportedAt: c.At}
	if e.Reason == "" {
		p.Add("reason", CodeRequired, "is required")
	}
	checkLength(&p, "reason", e.Reason, maxText)
	checkLength(&p, "notes", e.Notes, maxNotes)
	e.Pieces, e.WeightKg = cargoAmounts(&p, c.Pieces, c.WeightKg)
	loaded, ok := f.Loaded[c.AWBNumber]
	if !ok {
		p.Add("awbNumber", CodeNotOnFlight, "%s is not on the manifest of %s", c.AWBNumber, f.ID)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if e.Pieces > loaded.Pieces {
		p.Add("pieces", CodeExceedsLoaded, "%s has %s of %s on board", f.ID, countOf(loaded.Pieces, "piece"), c.AWBNumber)
	}
	switch {
	case e.WeightKg > loaded.WeightKg+0.0005:
		p.Add("weight", CodeExceedsLoaded, "%g kg of %s are loaded on %s", loaded.WeightKg, c.AWBNumber, f.ID)
	case e.Pieces < loaded.Pieces && e.WeightKg >= loaded.WeightKg:
		p.Add("weight", CodeExceedsLoaded, "leaves no weight for the %s of %s still loaded", countOf(loaded.Pieces-e.Pieces, "piece"), c.AWBNumber)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	switch {
	case e.Pieces == loaded.Pieces:
		// The last pieces take off what is left of the AWB (evolveLoad),
		// so the offload records that weight and volume, whatever they
		// weighed: the flight's actual weight, the offload and the
		// shipment's DIS/OFLD then say the same. Refusing a weight that
		// differs would not put the cargo back on board, and would leave
		// the flight carrying what no longer is; the weight reported is
		// kept, as a manifest keeps its differences from the declarations.
		if e.WeightKg != loaded.WeightKg {
			e.ReportedWeightKg = e.WeightKg
		}
		e.WeightKg, e.VolumeM3 = loaded.WeightKg, loaded.VolumeM3
	case loaded.WeightKg > 0:
		e.VolumeM3 = round3(loaded.VolumeM3 * e.WeightKg / loaded.WeightKg)
	}
	return []Event{e}, nil
}

// LoadVisibleTo: a flight's load is its airline's and admins' business:
// its manifests (the flight's shipments hear of them as MAN status
// events), and the weight and volume its bookings hold and its manifests
// put on board (others see only what is left to book, see Available). The
// load of the airline's customers, and its changes with each booking, is
// what competing airlines and forwarders must not learn. A flight not
// scheduled (yet) shows its load to nobody.
func (f Flight) LoadVisibleTo(p Principal) bool {
	return f.Exists() && (p.Role == RoleAdmin || (p.Role == RoleAirline && p.AirlineCode == f.Carrier))
}

// CheckCarrier: a flight's status, manifest and offloads are its own
// airline's to post. A flight not scheduled passes, so that a caller may
// check this first and leave "no such flight" to the decision, after the
// request's own problems.
func (f Flight) CheckCarrier(airlineCode string) error {
	if f.Exists() && f.Carrier != airlineCode {
		return Errorf(Forbidden, "flight %s is not one of yours", f.ID)
	}
	return nil
}

// checkOwnFlight: manifests and offloads are for a flight of the posting
// airline that is not cancelled.
func checkOwnFlight(f Flight, carrier string) error {
	if !f.Exists() {
		return Errorf(NotFound, "no such flight")
	}
	if err := f.CheckCarrier(carrier); err != nil {
		return err
	}
	if f.Status == FlightStatusCancelled {
		return Errorf(Conflict, "flight %s is cancelled", f.ID)
	}
	return nil
}

// evolveLoad applies a manifest or an offload to a flight's load.
func evolveLoad(f Flight, e Event) Flight {
	switch e := e.(type) {
	case ManifestSubmitted:
		f.Loaded = make(map[string]Load, len(e.Shipments))
		for _, s := range e.Shipments {
			f.Loaded[s.AWBNumber] = s
		}
		f.ActualKg, f.ActualM3 = e.TotalWeightKg, e.TotalVolumeM3
	case OffloadReported:
		f.Loaded = maps.Clone(f.Loaded)
		l := f.Loaded[e.AWBNumber]
		off := Load{Pieces: e.Pieces, WeightKg: e.WeightKg, VolumeM3: e.VolumeM3}
		if off.Pieces >= l.Pieces {
			off = l // the last pieces take what is left of the AWB
			delete(f.Loaded, e.AWBNumber)
		} else {
			f.Loaded[e.AWBNumber] = Load{AWBNumber: l.AWBNumber, Pieces: l.Pieces - off.Pieces,
				WeightKg: round3(l.WeightKg - off.WeightKg), VolumeM3: round3(l.VolumeM3 - off.VolumeM3)}
		}
		f.ActualKg = round3(max(0, f.ActualKg-off.WeightKg))
		f.ActualM3 = round3(max(0, f.ActualM3-off.VolumeM3))
		if len(f.Loaded) == 0 {
			// Nothing on board weighs nothing: the manifest's totals
			// weighed more than its shipments declared, and the
			// surplus was theirs, not room the flight lost.
			f.ActualKg, f.ActualM3 = 0, 0
		}
	}
	return f
}

// round3 hides the float noise of sums (to the gram, or the litre).
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// ManifestPart is what a manifest says of one shipment: the manifest
// without the other shipments on board and without its totals, which
// are the flight's load (see Flight.LoadVisibleTo).
type ManifestPart struct {
	ManifestID   string    `json:"manifestId"`
	FlightID     string    `json:"flightId"`
	FlightNumber string    `json:"flightNumber"`
	Origin       string    `json:"origin"`
	Shipments    []Load    `json:"shipments"`
	Dropped      []Load    `json:"dropped,omitempty"`
	SubmittedAt  time.Time `json:"submittedAt"`
}

// Boarding are the shipments m puts on board flight f, as it stood
// before m: those it loads that f did not have on board.
func (m ManifestSubmitted) Boarding(f Flight) []Load {
	var boarding []Load
	for _, l := range m.Shipments {
		if _, loaded := f.Loaded[l.AWBNumber]; !loaded {
			boarding = append(boarding, l)
		}
	}
	return boarding
}

// PartOf is the part of the manifest about the shipment of a (canonical)
// AWB number: its line, on board or dropped.
func (m ManifestSubmitted) PartOf(awb string) ManifestPart {
	part := ManifestPart{ManifestID: m.ManifestID, FlightID: m.FlightID, FlightNumber: m.FlightNumber, Origin: m.Origin,
		Shipments: []Load{}, SubmittedAt: m.SubmittedAt}
	for _, l := range m.Shipments {
		if l.AWBNumber == awb {
			part.Shipments = append(part.Shipments, l)
		}
	}
	for _, l := range m.Dropped {
		if l.AWBNumber == awb {
			part.Dropped = append(part.Dropped, l)
		}
	}
	return part
}

// Names reports whether the manifest loads or drops the shipment of a
// (canonical) AWB number.
func (m ManifestSubmitted) Names(awb string) bool {
	part := m.PartOf(awb)
	return len(part.Shipments)+len(part.Dropped) > 0
}

// HistoryEventVisibleTo: of a flight's history, its schedule, status and
// aircraft are everyone's, as the flight is; its reservations, manifests
// and offloads are its load (see LoadVisibleTo).
func (f Flight) HistoryEventVisibleTo(p Principal, e Event) bool {
	switch e.(type) {
	case FlightScheduled, FlightStatusChanged, FlightAircraftChanged:
		return true
	}
	return f.LoadVisibleTo(p)
}
