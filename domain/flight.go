package domain

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Flight states.
const (
	FlightStatusScheduled = "scheduled"
	FlightStatusDelayed   = "delayed"
	FlightStatusDeparted  = "departed"
	FlightStatusArrived   = "arrived"
	FlightStatusCancelled = "cancelled"
)

// Reasons a flight refuses a reservation.
const (
	ReasonNoCapacity   = "no_capacity"
	ReasonFlightClosed = "flight_closed"
)

// flightTransitions are the status changes an airline may make.
var flightTransitions = map[string][]string{
	FlightStatusScheduled: {FlightStatusDelayed, FlightStatusDeparted, FlightStatusCancelled},
	FlightStatusDelayed:   {FlightStatusDelayed, FlightStatusDeparted, FlightStatusCancelled},
	FlightStatusDeparted:  {FlightStatusArrived},
}

var (
	flightNumberPattern = regexp.MustCompile(`^([A-Z0-9]{2})([0-9]{1,4}[A-Z]?)$`)
	clockPattern        = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	utcOffsetPattern    = regexp.MustCompile(`^[+-]([01][0-9]|2[0-3]):[0-5][0-9]$`)
	// An ICAO type designator (B748) or IATA code (74N), or a freighter
	// variant (B748F): letters and digits, nothing a timetable would not
	// print.
	aircraftTypePattern = regexp.MustCompile(`^[A-Z0-9]{2,8}$`)
)

// ValidFlightNumber reports whether s, in upper case without spaces, is a
// flight number: an airline code and 1 to 4 digits, maybe a letter.
func ValidFlightNumber(s string) bool { return flightNumberPattern.MatchString(s) }

// ValidAircraftType reports whether s, in upper case, can be an aircraft
// type.
func ValidAircraftType(s string) bool { return aircraftTypePattern.MatchString(s) }

// Reservation is the capacity a booking holds on a flight.
type Reservation struct {
	WeightKg float64 `json:"weightKg"`
	VolumeM3 float64 `json:"volumeM3"`
}

// Flight is one departure of a flight number, with its capacity and the
// reservations against it. Times are local to each airport.
type Flight struct {
	ID              string
	Carrier         string
	AWBPrefix       string
	FlightNumber    string
	Origin          string
	Destination     string
	DepartureDate   string
	DepartureTime   string
	ArrivalDate     string
	ArrivalTime     string
	OriginZone      string
	DestinationZone string
	DepartsAt       time.Time // UTC
	AircraftType    string
	CapacityKg      float64
	CapacityM3      float64
	// Published is the aircraft and capacity the flight was published
	// with, which a timetable sent again names whatever flies it now
	// (see DecideScheduleFlight).
	Published    PublishedAircraft
	Status       string
	Reservations map[string]Reservation // by booking id
	ReservedKg   float64
	ReservedM3   float64
	Loaded       map[string]Load // by AWB: the latest manifest, less offloads
	ActualKg     float64         // the manifest's total, less offloads; 0 once cancelled
	ActualM3     float64

	// EstimatedDepartsAt and EstimatedArrivesAt (UTC) are the estimate
	// of the flight's latest delay report, zero when it gave none or
	// its latest status change was no delay (see EvolveFlight).
	EstimatedDepartsAt time.Time
	EstimatedArrivesAt time.Time
	// DepartedAt and ArrivedAt (UTC) are when the airline reported the
	// flight departed and arrived, zero before.
	DepartedAt time.Time
	ArrivedAt  time.Time

	// ArrivalUTCOffset is the offset the airline gave its arrival time,
	// "" for none (see atOffset).
	ArrivalUTCOffset string
}

// PublishedAircraft is an aircraft type and the capacity offered on it.
type PublishedAircraft struct {
	Type       string
	CapacityKg float64
	CapacityM3 float64
}

// ArrivesAt is the flight's scheduled arrival, in UTC, read from its
// local date and time at the destination; the zero time when those do
// not make one (a time zone this server does not know).
func (f Flight) ArrivesAt() time.Time {
	return arrivesAt(f.ArrivalDate, f.ArrivalTime, f.ArrivalUTCOffset, f.DestinationZone)
}

// arrivesAt is a scheduled arrival in UTC (see localTime), of a schedule
// checked when it was published.
func arrivesAt(date, clock, offset, zone string) time.Time {
	var ignored Problems
	return localTime(&ignored, "", date, clock, offset, zone).UTC()
}

// Exists reports whether the flight has been scheduled.
func (f Flight) Exists() bool { return f.ID != "" }

// CheckAirlineTakesBookings refuses a booking on a flight of the airline
// whose organisation is o (known: the service has one of that code) when
// that organisation is disabled or deleted: no one of it could manifest,
// offload or report the flight, nor answer the forwarder. Its flights are
// priced no more either. An airline the service has no organisation of
// (flights published before organisations were) takes them.
func CheckAirlineTakesBookings(o Organization, known bool, flightID string) error {
	if !known || o.Status.Active() {
		return nil
	}
	return Refusal(ReasonFlightClosed, "flight %s takes no bookings: its airline's organisation is %s", flightID, o.Status.Shown())
}

// Bookable reports whether the flight still takes reservations.
func (f Flight) Bookable() bool {
	return f.Status == FlightStatusScheduled || f.Status == FlightStatusDelayed
}

// ClosedAt reports whether the flight takes no more bookings at now
// (see whyClosedAt). A closed flight opens again only when a delay
// estimates a later departure than the time that closed it.
func (f Flight) ClosedAt(now time.Time) bool { return f.whyClosedAt(now) != "" }

// whyClosedAt says why the flight takes no more bookings at now, or ""
// when it takes them: it is cancelled, departed or arrived, or its
// departure (ClosesAt) has come, whatever its status. A booking of it is
// refused flight_closed (refuseBookingAt), a quote's option on it shows
// closed, and it is priced no more.
func (f Flight) whyClosedAt(now time.Time) string {
	if !f.Bookable() {
		return "is " + f.Status
	}
	// Its departure time, not "departed": no one reported it so.
	switch closes := f.ClosesAt(); {
	case now.Before(closes):
		return ""
	case closes.Equal(f.DepartsAt):
		return "reached its departure time, " + closes.Format(time.RFC3339)
	default:
		return "reached the departure time its delay estimates, " + closes.Format(time.RFC3339)
	}
}

// ClosesAt is when the flight stops taking bookings: its scheduled
// departure, or the later departure its delay estimates. An airline
// takes cargo for a delayed flight until it actually leaves.
func (f Flight) ClosesAt() time.Time {
	if f.EstimatedDepartsAt.After(f.DepartsAt) {
		return f.EstimatedDepartsAt
	}
	return f.DepartsAt
}

// departureDate is the local date the flight leaves on: its scheduled
// one, or the later one its delay estimates. A flight of 23:00 delayed
// to 03:00 leaves the next day, and takes cargo delivered to the airline
// that day.
func (f Flight) departureDate() string {
	if f.ClosesAt().Equal(f.DepartsAt) {
		return f.DepartureDate
	}
	return localDate(f.ClosesAt(), f.OriginZone)
}

// refuseBookingAt is the refusal, flight_closed, of a booking of the
// flight at now once it takes no more (whyClosedAt), or nil. A booking is
// refused so when it is filed (DecideRequestBooking) and, should the
// flight close in between, when it is confirmed (DecideReserveCapacity).
func (f Flight) refuseBookingAt(now time.Time) error {
	if why := f.whyClosedAt(now); why != "" {
		return Refusal(ReasonFlightClosed, "flight %s %s: it takes no more bookings", f.ID, why)
	}
	return nil
}

// Those who may not see a flight's load (LoadVisibleTo) see what is left
// of it in steps of availabilityStepKg and availabilityStepM3: to the
// kilogram, what is left against the capacity the timetable shows would
// give the load away, and its changes the size of each booking.
const (
	availabilityStepKg = 100
	availabilityStepM3 = 1
)

// Available is what is left of the flight to book at now, as p may see
// it: its capacity less the larger of the load booked and the load on
// board by its manifests, never below 0, and nothing on a flight that
// takes no more bookings: one no longer scheduled or delayed, or at or
// past its departure, scheduled or as its delay estimates (as
// DecideReserveCapacity refuses them, whatever its status says). Those who may not see the load see it
// rounded down to availabilityStepKg and availabilityStepM3: at least
// that much is left.
func (f Flight) Available(p Principal, now time.Time) (kg, m3 float64) {
	if f.ClosedAt(now) {
		return 0, 0
	}
	kg, m3 = f.room()
	if !f.LoadVisibleTo(p) {
		kg = math.Floor(kg/availabilityStepKg) * availabilityStepKg
		m3 = math.Floor(m3/availabilityStepM3) * availabilityStepM3
	}
	return kg, m3
}

// room is what is left of the flight's capacity to book: its capacity
// less the larger of the load booked and the load on board by its
// manifests (cargo weighed heavier than booked, or freight on hand the
// airline loaded, takes room whether booked or not), never below 0. It is
// what the capacity shown says is left (Available) and what reservations
// and pricing are checked against, to the gram and the litre: the sums of
// reservations and releases carry float noise (1.3 and 6.9 reserved, 1.3
// released, leave 6.900000000000001), which must not refuse a booking of
// exactly what is shown left.
func (f Flight) room() (kg, m3 float64) {
	return round3(max(0, f.CapacityKg-max(f.ReservedKg, f.ActualKg))), round3(max(0, f.CapacityM3-max(f.ReservedM3, f.ActualM3)))
}

// StatusToldTo is whether p is told of the flight's status changes (the
// flight.status webhook), given bookings, which lists those on the flight
// that p may see (asked of a forwarder alone), and to a forwarder the ids
// of its own bookings they concern. A
// status change goes to the flight's airline and to each forwarder with a
// booking on it that was not rejected: one cancelled, by the forwarder or
// by the flight's cancellation, still has cargo at the airport to rebook.
// Nobody else hears of it, admins neither: who ships on a flight is its
// airline's business (see LoadVisibleTo), and the timetable shows anyone
// its status.
func (f Flight) StatusToldTo(p Principal, bookings func() []Booking) (ownBookings []string, told bool) {
	switch {
	case !f.Exists():
		return nil, false
	case p.Role == RoleAirline:
		return nil, p.AirlineCode == f.Carrier
	case p.Role != RoleForwarder:
		return nil, false
	}
	for _, b := range bookings() {
		if b.OrganizationID == p.OrganizationID && b.FlightID == f.ID && b.Status != BookingStatusRejected {
			ownBookings = append(ownBookings, b.ID)
		}
	}
	return ownBookings, len(ownBookings) > 0
}

// FlightStatusScheduled records a flight published in a timetable.
type FlightScheduled struct {
	FlightID        string    `json:"flightId"`
	Carrier         string    `json:"carrier"`
	AWBPrefix       string    `json:"awbPrefix"`
	FlightNumber    string    `json:"flightNumber"`
	Origin          string    `json:"origin"`
	Destination     string    `json:"destination"`
	DepartureDate   string    `json:"departureDate"`
	DepartureTime   string    `json:"departureTime"`
	ArrivalDate     string    `json:"arrivalDate"`
	ArrivalTime     string    `json:"arrivalTime"`
	OriginZone      string    `json:"originZone"`
	DestinationZone string    `json:"destinationZone"`
	DepartsAt       time.Time `json:"departsAt"`
	AircraftType    string    `json:"aircraftType"`
	CapacityKg      float64   `json:"capacityKg"`
	CapacityM3      float64   `json:"capacityM3"`
	ScheduledAt     time.Time `json:"scheduledAt"`

	// The UTC offsets the airline gave its local times, if any: on the
	// night the clocks go back they tell which of an hour shown twice is
	// meant (see atOffset).
	DepartureUTCOffset string `json:"departureUtcOffset,omitempty"`
	ArrivalUTCOffset   string `json:"arrivalUtcOffset,omitempty"`
}

func (FlightScheduled) EventType() string  { return "FlightStatusScheduled" }
func (FlightScheduled) SetsStatus() string { return FlightStatusScheduled }

// FlightStatusChanged records a new status of a flight. A delay may
// estimate the flight's new departure and arrival (UTC); events stored
// before delays took an estimate have none.
type FlightStatusChanged struct {
	FlightID           string    `json:"flightId"`
	Status             string    `json:"status"`
	Previous           string    `json:"previous"`
	EstimatedDepartsAt time.Time `json:"estimatedDepartsAt,omitzero"`
	EstimatedArrivesAt time.Time `json:"estimatedArrivesAt,omitzero"`
	ChangedAt          time.Time `json:"changedAt"`
	StatusesStored     bool      `json:"statusesStored,omitempty"` // see StatusesFrom
}

func (FlightStatusChanged) EventType() string { return "FlightStatusChanged" }

// Restates: each status change states the estimate, which a delay without
// one, or any other status, withdraws (see evolve).
func (FlightStatusChanged) Restates() []string {
	return []string{"estimatedDepartsAt", "estimatedArrivesAt"}
}

// FlightAircraftChanged records that the airline flies the flight with
// another aircraft, or offers another capacity on it (an aircraft
// swapped for a smaller one, space taken by mail), with what it had
// before.
type FlightAircraftChanged struct {
	FlightID             string    `json:"flightId"`
	AircraftType         string    `json:"aircraftType"`
	CapacityKg           float64   `json:"capacityKg"`
	CapacityM3           float64   `json:"capacityM3"`
	PreviousAircraftType string    `json:"previousAircraftType"`
	PreviousCapacityKg   float64   `json:"previousCapacityKg"`
	PreviousCapacityM3   float64   `json:"previousCapacityM3"`
	ChangedAt            time.Time `json:"changedAt"`
}

func (FlightAircraftChanged) EventType() string { return "FlightAircraftChanged" }

// CapacityReserved records capacity taken by a booking.
type CapacityReserved struct {
	FlightID  string  `json:"flightId"`
	BookingID string  `json:"bookingId"`
	WeightKg  float64 `json:"weightKg"`
	VolumeM3  float64 `json:"volumeM3"`
}

func (CapacityReserved) EventType() string { return "CapacityReserved" }

// CapacityReleased records capacity given back by a booking.
type CapacityReleased struct {
	FlightID  string  `json:"flightId"`
	BookingID string  `json:"bookingId"`
	WeightKg  float64 `json:"weightKg"`
	VolumeM3  float64 `json:"volumeM3"`
}

func (CapacityReleased) EventType() string { return "CapacityReleased" }

// ScheduleFlight publishes one flight. Carrier and AWBPrefix are the
// publishing airline's.
type ScheduleFlight struct {
	Carrier       string
	AWBPrefix     string
	FlightNumber  string
	Origin        string
	Destination   string
	DepartureDate string
	DepartureTime string
	ArrivalDate   string
	ArrivalTime   string
	AircraftType  string
	CapacityKg    *float64
	CapacityM3    *float64
	At            time.Time

	// DepartureUTCOffset and ArrivalUTCOffset ("+01:00"; "" for none) say
	// which instant a local time shown twice is (see atOffset).
	DepartureUTCOffset string
	ArrivalUTCOffset   string
}

// CanonicalFlightNumber writes a flight number one way: upper case,
// without spaces or leading zeros, so that LH084 and LH0084 are LH84, one
// flight, as timetables (SSIM) pad them.
func CanonicalFlightNumber(s string) string {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	m := flightNumberPattern.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	number := strings.TrimLeft(m[2], "0")
	if number == "" || number[0] < '0' || number[0] > '9' {
		number = "0" + number // all zeros, or zeros before a suffix letter
	}
	return m[1] + number
}

// CanonicalFlightID writes a flight id as FlightID does, whatever way its
// number was written: LH0084-2026-11-26 is LH84-2026-11-26.
func CanonicalFlightID(id string) string {
	// Surrounding white space is taken, as around any code sent.
	number, date, ok := strings.Cut(strings.TrimSpace(id), "-")
	if !ok {
		return id
	}
	return CanonicalFlightNumber(number) + "-" + date
}

// ValidFlightID reports whether id, canonical (see CanonicalFlightID),
// is one a flight can have: a flight number and a departure date.
func ValidFlightID(id string) bool {
	number, date, ok := strings.Cut(id, "-")
	if !ok || !ValidFlightNumber(number) {
		return false
	}
	_, err := time.Parse(time.DateOnly, date)
	return err == nil
}

// FlightID is the id of a flight number's departure on a local date.
func FlightID(flightNumber, departureDate string) string { return flightNumber + "-" + departureDate }

// Normalise validates the command and returns the event it would record;
// field names are prefixed with prefix (for batches).
func (c ScheduleFlight) Normalise(prefix string, ref Lookup) (FlightScheduled, error) {
	var p Problems
	e := FlightScheduled{
		Carrier: c.Carrier, AWBPrefix: c.AWBPrefix,
		FlightNumber: CanonicalFlightNumber(c.FlightNumber),
		Origin:       strings.ToUpper(strings.TrimSpace(c.Origin)), Destination: strings.ToUpper(strings.TrimSpace(c.Destination)),
		DepartureDate: c.DepartureDate, DepartureTime: c.DepartureTime,
		ArrivalDate: c.ArrivalDate, ArrivalTime: c.ArrivalTime,
		DepartureUTCOffset: strings.TrimSpace(c.DepartureUTCOffset), ArrivalUTCOffset: strings.TrimSpace(c.ArrivalUTCOffset),
		AircraftType: strings.ToUpper(strings.TrimSpace(c.AircraftType)), ScheduledAt: c.At,
	}
	if m := flightNumberPattern.FindStringSubmatch(e.FlightNumber); m == nil {
		p.Add(prefix+"flightNumber", CodeInvalidFormat, "must be an airline code and 1 to 4 digits, such as LH8160")
	} else if m[1] != c.Carrier {
		p.Add(prefix+"flightNumber", CodeInvalidValue, "must be one of your own flights (%s…)", c.Carrier)
	}
	from, to := checkRoute(&p, ref, prefix, e.Origin, e.Destination)
	e.OriginZone, e.DestinationZone = from.Timezone, to.Timezone
	dep := localTime(&p, prefix+"departure", e.DepartureDate, e.DepartureTime, e.DepartureUTCOffset, e.OriginZone)
	arr := localTime(&p, prefix+"arrival", e.ArrivalDate, e.ArrivalTime, e.ArrivalUTCOffset, e.DestinationZone)
	if !dep.IsZero() && !arr.IsZero() {
		checkFlightDuration(&p, prefix+"arrivalTime", dep, arr, localTimesInUTC(e, dep, arr))
	}
	// A timetable runs up to a year ahead; a flight may be published a
	// few days late (a charter that flew), not years off.
	if !dep.IsZero() && (dep.Before(c.At.AddDate(0, 0, -maxDaysLate)) || dep.After(c.At.AddDate(0, 0, maxDaysAhead))) {
		p.Add(prefix+"departureDate", CodeInvalidDate, "must be from %d days ago to %d days ahead", maxDaysLate, maxDaysAhead)
	}
	e.DepartsAt = dep.UTC()
	if e.AircraftType == "" {
		p.Add(prefix+"aircraftType", CodeRequired, "is required")
	} else {
		typical, known := AircraftTypeCapacity(e.AircraftType)
		e.CapacityKg, e.CapacityM3 = aircraftCapacity(&p, prefix, e.AircraftType, c.CapacityKg, c.CapacityM3, typical, known)
	}
	e.FlightID = FlightID(e.FlightNumber, e.DepartureDate)
	return e, p.Err()
}

// aircraftCapacity checks an aircraft type (given) and the capacities sent
// for it (nil: none), adding to p, with field names prefixed with prefix,
// what is wrong; it returns the capacities: those sent, else the
// defaults' (a type's typical), which a type whose capacity is not known
// has none of (known false: then each is required).
func aircraftCapacity(p *Problems, prefix, aircraftType string, kg, m3 *float64, defaults AircraftCapacity, known bool) (float64, float64) {
	valid := ValidAircraftType(aircraftType)
	if !valid {
		p.Add(prefix+"aircraftType", CodeInvalidFormat, "must be 2 to 8 letters or digits, such as B77F")
	}
	outKg, outM3 := defaults.PayloadKg, defaults.VolumeM3
	for _, cp := range []struct {
		field string
		v     *float64
		dst   *float64
		max   float64
	}{{"capacityKg", kg, &outKg, 200000}, {"capacityM3", m3, &outM3, maxVolumeM3}} {
		switch {
		case cp.v != nil && !(*cp.v >= 0 && *cp.v <= cp.max):
			p.Add(prefix+cp.field, CodeInvalidRange, "must be from 0 to %g", cp.max)
		case cp.v != nil:
			*cp.dst = *cp.v
		case !known && valid: // of a type that is none, the capacity is not the problem
			p.Add(prefix+cp.field, CodeRequired, "is required for aircraft type %s, whose capacity is not known", aircraftType)
		}
	}
	return outKg, outM3
}

// maxFlightDuration is the longest a cargo flight lasts, scheduled or
// estimated: the longest flown are some 19 hours.
const maxFlightDuration = 22 * time.Hour

// checkFlightDuration adds to p, on field, the problem of an arrival arr
// not after the departure dep (which departure says), or later than any
// cargo flight lasts.
func checkFlightDuration(p *Problems, field string, dep, arr time.Time, departure string) {
	switch d := arr.Sub(dep); {
	case d <= 0:
		p.Add(field, CodeInvalidValue, "the arrival must be after the departure (%s)", departure)
	case d > maxFlightDuration:
		// Not the duration itself: years apart, it is the largest a
		// Duration holds, 2562047h, which tells the sender nothing.
		p.Add(field, CodeInvalidValue, "must be at most %d hours after the departure (%s): no cargo flight lasts longer",
			int(maxFlightDuration.Hours()), departure)
	}
}

// localTime reads a local date and time at an airport, at the UTC offset
// given for it ("" for none; see atOffset).
func localTime(p *Problems, field, date, clock, offset, zone string) time.Time {
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		p.Add(field+"Date", CodeInvalidDate, "must be a date as YYYY-MM-DD")
	}
	if !clockPattern.MatchString(clock) {
		p.Add(field+"Time", CodeInvalidFormat, "must be a local time as HH:MM")
		return time.Time{}
	}
	if err != nil || zone == "" {
		return time.Time{}
	}
	loc, lerr := location(zone)
	if lerr != nil {
		p.Add(field+"Time", CodeInvalidValue, "the time zone %s is not known to this server", zone)
		return time.Time{}
	}
	t, _ := time.ParseInLocation("2006-01-02 15:04", day.Format(time.DateOnly)+" "+clock, loc)
	if t.Format("15:04") != clock { // Go moves a time the clocks skip
		p.Add(field+"Time", CodeInvalidValue, "%s does not exist on %s in %s: the clocks go forward then", clock, date, zone)
	}
	return atOffset(p, field, t, offset)
}

// atOffset is the instant whose local clock shows what t's shows at the
// UTC offset given ("+01:00"), or, given none, the first. When the clocks
// go back, the hour before is shown twice, first in summer time: a flight
// leaving at 02:30 that night leaves at one of two instants an hour apart,
// and only an offset tells which, as SSIM timetables give one beside each
// local time. Go takes either (the later east of Greenwich, the earlier
// west of it), so the same timetable line would be an hour apart in
// Frankfurt and in New York: without an offset the first, as a clock on
// the wall shows it first, is taken everywhere. An offset the airport's
// clock does not have then is refused.
func atOffset(p *Problems, field string, t time.Time, offset string) time.Time {
	shown := shownAt(t)
	slices.SortFunc(shown, time.Time.Compare)
	if offset == "" {
		return shown[0]
	}
	if !utcOffsetPattern.MatchString(offset) {
		p.Add(field+"UtcOffset", CodeInvalidFormat, "must be a UTC offset as +HH:MM or -HH:MM, such as +01:00")
		return time.Time{}
	}
	var offsets []string
	for _, at := range shown {
		if at.Format(utcOffsetLayout) == offset {
			return at
		}
		offsets = append(offsets, at.Format(utcOffsetLayout))
	}
	p.Add(field+"UtcOffset", CodeMismatch, "is %s, but %s on %s in %s is at UTC%s", offset, t.Format("15:04"), t.Format(time.DateOnly),
		t.Location(), strings.Join(offsets, " or UTC"))
	return time.Time{}
}

// utcOffsetLayout writes a UTC offset as timetables give it: +01:00,
// -05:00, +00:00.
const utcOffsetLayout = "-07:00"

// shownAt is every instant whose local clock shows what t's shows, t
// among them: two when t is in the hour the clocks show twice.
func shownAt(t time.Time) []time.Time {
	const wall = "2006-01-02 15:04"
	_, offset := t.Zone()
	at := []time.Time{t}
	// Clocks change at most once in a day: the offsets half a day either
	// side are the two a wall clock time can have.
	for _, near := range []time.Time{t.Add(-12 * time.Hour), t.Add(12 * time.Hour)} {
		_, other := near.Zone()
		if c := t.Add(time.Duration(offset-other) * time.Second); !c.Equal(t) && c.Format(wall) == t.Format(wall) {
			at = append(at, c)
		}
	}
	return at
}

// localTimesInUTC tells a schedule refused for its duration what its local
// times are in UTC, and which of them the clocks show twice, taken as the
// first: across the date line, or on the night the clocks go back, local
// times in order may still arrive before the departure ("both local
// times" alone left the sender to find why).
func localTimesInUTC(e FlightScheduled, dep, arr time.Time) string {
	s := fmt.Sprintf("both local times: in UTC it departs at %s and arrives at %s",
		dep.UTC().Format(time.RFC3339), arr.UTC().Format(time.RFC3339))
	for _, lt := range []struct {
		t             time.Time
		offset, field string
	}{{dep, e.DepartureUTCOffset, "departureUtcOffset"}, {arr, e.ArrivalUTCOffset, "arrivalUtcOffset"}} {
		if lt.offset == "" && len(shownAt(lt.t)) > 1 {
			s += fmt.Sprintf("; %s comes twice on %s in %s and is taken as the first, in summer time (%s names the other)",
				lt.t.Format("15:04"), lt.t.Format(time.DateOnly), lt.t.Location(), lt.field)
		}
	}
	return s
}

// DecideScheduleFlight publishes the flight once.
// The same flight published again with the same schedule changes nothing.
func DecideScheduleFlight(f Flight, e FlightScheduled) ([]Event, error) {
	if !f.Exists() {
		return []Event{e}, nil
	}
	if f.Origin != e.Origin || f.Destination != e.Destination || f.DepartureTime != e.DepartureTime ||
		f.ArrivalDate != e.ArrivalDate || f.ArrivalTime != e.ArrivalTime {
		return nil, Errorf(Conflict, "flight %s is already scheduled with another schedule", e.FlightID)
	}
	// A timetable that gives UTC offsets says which instants it means: a
	// local time the clocks show twice, sent at the other offset than the
	// one on record, is another schedule. (Without one, the local times
	// are the schedule, as they were before offsets were taken.)
	arrives, arrivesSent := f.ArrivesAt(), arrivesAt(e.ArrivalDate, e.ArrivalTime, e.ArrivalUTCOffset, e.DestinationZone)
	if e.DepartureUTCOffset != "" && !e.DepartsAt.Equal(f.DepartsAt) || e.ArrivalUTCOffset != "" && !arrivesSent.Equal(arrives) {
		return nil, Errorf(Conflict, "flight %s is already scheduled to depart at %s and arrive at %s (UTC), not at %s and %s as sent: its local times at other UTC offsets",
			e.FlightID, f.DepartsAt.Format(time.RFC3339), arrives.Format(time.RFC3339), e.DepartsAt.Format(time.RFC3339), arrivesSent.Format(time.RFC3339))
	}
	// A timetable sent again names the aircraft the flight was published
	// with, or, from an airline system that knows of a change made since
	// (PATCH), the one that flies it now: either is the flight on record.
	// (Compared with the aircraft now alone, a timetable sent again after
	// a change was refused whole, the flights new to it too.)
	sent := PublishedAircraft{Type: e.AircraftType, CapacityKg: e.CapacityKg, CapacityM3: e.CapacityM3}
	now := PublishedAircraft{Type: f.AircraftType, CapacityKg: f.CapacityKg, CapacityM3: f.CapacityM3}
	if sent == f.Published || sent == now {
		return nil, nil
	}
	// Say what was sent against what is on record: a type sent without
	// its capacities takes the type's typical ones, which may not be those
	// a change gave the flight ("already scheduled with B77W" answered to
	// B77W sent read as a refusal of the same aircraft).
	onRecord := fmt.Sprintf("%s, %g kg and %g m³", now.Type, now.CapacityKg, now.CapacityM3)
	if now != f.Published {
		onRecord += fmt.Sprintf(" (published with %s, %g kg and %g m³; either, sent again, changes nothing)",
			f.Published.Type, f.Published.CapacityKg, f.Published.CapacityM3)
	}
	return nil, Errorf(Conflict, "flight %s is already scheduled with aircraft %s, not %s, %g kg and %g m³ as sent: "+
		"publishing it does not change its aircraft or capacity; PATCH /api/flights/%s does",
		e.FlightID, onRecord, sent.Type, sent.CapacityKg, sent.CapacityM3, e.FlightID)
}

// maxEarlyDeparture is how long before its scheduled time a flight may
// be reported departed.
const maxEarlyDeparture = 12 * time.Hour

// maxDelay is how long after its scheduled departure a delay may
// estimate the flight to leave. A flight held longer has in practice
// been cancelled and is flown as another (the flight of another day's
// id); and a flight takes bookings until its estimated departure, so a
// mistyped day must not keep it open for weeks.
const maxDelay = 72 * time.Hour

// ChangeFlightStatus is an airline's report of a flight's new status. A
// delay may estimate the flight's new departure and arrival, each an RFC
// 3339 date-time ("" for none), an arrival only with a departure.
type ChangeFlightStatus struct {
	Status             string
	EstimatedDepartsAt string
	EstimatedArrivesAt string
	At                 time.Time
}

// estimate reads the departure and arrival that c, a delay of f,
// estimates (zero where it gives none), adding to p what is wrong with
// them: a departure before the scheduled one (no delay), already past
// (but for the one on record, sent again), or more than maxDelay after it, an arrival without a departure, or one not after
// the departure or later than any cargo flight lasts. Another status
// than a delay takes no estimate.
func (c ChangeFlightStatus) estimate(p *Problems, f Flight) (departs, arrives time.Time) {
	if c.Status != FlightStatusDelayed {
		for _, field := range []struct{ name, value string }{{"estimatedDepartsAt", c.EstimatedDepartsAt}, {"estimatedArrivesAt", c.EstimatedArrivesAt}} {
			if field.value != "" {
				p.Add(field.name, CodeInvalidValue, "is taken with status delayed alone: a flight reported %s has no estimate", c.Status)
			}
		}
		return time.Time{}, time.Time{}
	}
	departs = estimatedTime(p, "estimatedDepartsAt", c.EstimatedDepartsAt)
	arrives = estimatedTime(p, "estimatedArrivesAt", c.EstimatedArrivesAt)
	scheduled := f.DepartsAt.Format(time.RFC3339)
	switch {
	case c.EstimatedDepartsAt == "" && c.EstimatedArrivesAt != "":
		p.Add("estimatedDepartsAt", CodeRequired, "is required with estimatedArrivesAt: an arrival is estimated from the departure")
	case departs.IsZero() || f.DepartsAt.IsZero():
	case departs.Before(f.DepartsAt):
		p.Add("estimatedDepartsAt", CodeInvalidDate, "must not be before the scheduled departure, %s: a delay departs later", scheduled)
	case departs.Before(c.At) && !departs.Equal(f.EstimatedDepartsAt):
		// It would close the flight at once, as if it had left, though
		// it stays delayed: no shipment on board would depart. The
		// estimate on record, sent again once past (airline systems
		// send their messages again), closes nothing that is not
		// closed: it is no news (DecideChangeFlightStatus).
		p.Add("estimatedDepartsAt", CodeInvalidDate, "must not be in the past (it is %s now): a flight that has left is reported departed",
			c.At.UTC().Format(time.RFC3339))
	case departs.After(f.DepartsAt.Add(maxDelay)):
		p.Add("estimatedDepartsAt", CodeInvalidDate, "must be at most %d hours after the scheduled departure, %s: a flight held longer is cancelled and flown as another",
			int(maxDelay.Hours()), scheduled)
	}
	if !departs.IsZero() && !arrives.IsZero() {
		checkFlightDuration(p, "estimatedArrivesAt", departs, arrives, "estimatedDepartsAt, "+departs.Format(time.RFC3339))
	}
	return departs, arrives
}

// estimatedTime reads an estimate's date-time, in UTC, or the zero time
// when value is "" (none given) or is no date-time (added to p).
func estimatedTime(p *Problems, field, value string) time.Time {
	if value == "" {
		return time.Time{}
	}
	t, _ := dateTime(p, field, value)
	return t
}

// DecideChangeFlightStatus moves a flight to the status c reports, with
// the estimate of a delay.
func DecideChangeFlightStatus(f Flight, c ChangeFlightStatus) ([]Event, error) {
	if !f.Exists() {
		return nil, Errorf(NotFound, "no such flight")
	}
	var p Problems
	switch c.Status {
	case FlightStatusScheduled, FlightStatusDelayed, FlightStatusDeparted, FlightStatusArrived, FlightStatusCancelled:
	case "":
		p.Add("status", CodeRequired, "is required: delayed, departed, arrived or cancelled (or, to change the aircraft, aircraftType, capacityKg or capacityM3)")
		return nil, p.Err()
	default:
		// scheduled too, as the enum says: a report of it is taken, and
		// changes nothing on a flight that is (any other refuses it).
		p.Add("status", CodeInvalidValue, "must be scheduled, delayed, departed, arrived or cancelled")
		return nil, p.Err()
	}
	departs, arrives := c.estimate(&p, f)
	if err := p.Err(); err != nil {
		return nil, err
	}
	// A report of the status on record changes nothing, and tells
	// nobody again: a delay only if its estimate is the one on record
	// (airline systems send their messages again).
	if c.Status == f.Status && (c.Status != FlightStatusDelayed ||
		departs.Equal(f.EstimatedDepartsAt) && arrives.Equal(f.EstimatedArrivesAt)) {
		return nil, nil
	}
	if !slices.Contains(flightTransitions[f.Status], c.Status) {
		return nil, Errorf(Conflict, "a flight whose status is %s cannot become %s", f.Status, c.Status)
	}
	// Freighters leave early when loaded, but not by half a day: a flight
	// marked departed days ahead is a mistake, and would close it to
	// offloads and bookings. The schedule says when it was to leave, not
	// a delay's estimate.
	if c.Status == FlightStatusDeparted && !f.DepartsAt.IsZero() && c.At.Before(f.DepartsAt.Add(-maxEarlyDeparture)) {
		return nil, Errorf(Conflict, "flight %s is scheduled to depart at %s: it cannot have departed more than %d hours early",
			f.ID, f.DepartsAt.Format(time.RFC3339), int(maxEarlyDeparture.Hours()))
	}
	return []Event{FlightStatusChanged{FlightID: f.ID, Status: c.Status, Previous: f.Status,
		EstimatedDepartsAt: departs, EstimatedArrivesAt: arrives, ChangedAt: c.At}}, nil
}

// ChangeFlightAircraft is an airline's report that it flies a flight
// with another aircraft type, or offers another capacity on it. A field
// left out ("", nil) stays as it is, but that another type comes with its
// own typical capacity, unless the capacity is sent too.
type ChangeFlightAircraft struct {
	AircraftType string
	CapacityKg   *float64
	CapacityM3   *float64
	At           time.Time
}

// FlightChangeOf says which change a flight's PATCH asks for: its aircraft
// or capacity (true), or its status (false). Both at once are refused:
// each is its own change, with its own webhook, and a status that closes
// the flight would refuse the aircraft.
func FlightChangeOf(status ChangeFlightStatus, aircraft ChangeFlightAircraft) (bool, error) {
	changesAircraft := strings.TrimSpace(aircraft.AircraftType) != "" || aircraft.CapacityKg != nil || aircraft.CapacityM3 != nil
	changesStatus := status.Status != "" || status.EstimatedDepartsAt != "" || status.EstimatedArrivesAt != ""
	if changesAircraft && changesStatus {
		var p Problems
		p.Add("status", CodeInvalidValue, "is changed in a request of its own: send the aircraft or capacity (aircraftType, capacityKg, capacityM3) without status or estimates")
		return false, p.Err()
	}
	return changesAircraft, nil
}

// DecideChangeFlightAircraft records the flight's new aircraft or
// capacity, while it has not left (nor been cancelled). A capacity below
// what is booked or manifested is taken: the aircraft is what the airline
// flies, and the flight then takes no more bookings (Available is never
// negative) while the airline offloads what does not fit. Bookings stand,
// as do those of goods for cargo aircraft only on a flight now flown by a
// passenger aircraft: no new quote is priced so, a new booking is refused
// (RefuseOnPassengerAircraft), and a manifest refuses them (see
// DecideSubmitManifest). But such goods on board (the manifest loaded
// them: cargoAircraftOnly, given an AWB number, is the UN number of its
// e-DGD that declares them, or "") would depart with the passenger
// aircraft: the change is refused until they are offloaded.
func DecideChangeFlightAircraft(f Flight, c ChangeFlightAircraft, cargoAircraftOnly func(awb string) string) ([]Event, error) {
	if !f.Exists() {
		return nil, Errorf(NotFound, "no such flight")
	}
	var p Problems
	typ := strings.ToUpper(strings.TrimSpace(c.AircraftType))
	var kg, m3 float64
	switch {
	case typ == "" && c.CapacityKg == nil && c.CapacityM3 == nil:
		p.Add("aircraftType", CodeRequired, "is required, or capacityKg or capacityM3: send the aircraft or capacity the flight now has")
	case typ == "" || typ == f.AircraftType:
		typ = f.AircraftType
		current := AircraftCapacity{PayloadKg: f.CapacityKg, VolumeM3: f.CapacityM3}
		kg, m3 = aircraftCapacity(&p, "", typ, c.CapacityKg, c.CapacityM3, current, true)
	default:
		typical, known := AircraftTypeCapacity(typ)
		kg, m3 = aircraftCapacity(&p, "", typ, c.CapacityKg, c.CapacityM3, typical, known)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if typ == f.AircraftType && kg == f.CapacityKg && m3 == f.CapacityM3 {
		return nil, nil // the aircraft on record, sent again: no news
	}
	if f.Status != FlightStatusScheduled && f.Status != FlightStatusDelayed {
		return nil, Errorf(Conflict, "flight %s is %s: its aircraft and capacity no longer change", f.ID, f.Status)
	}
	if passenger, _ := AircraftTypeCapacity(typ); passenger.Passenger {
		var held []string
		for _, awb := range slices.Sorted(maps.Keys(f.Loaded)) {
			if un := cargoAircraftOnly(awb); un != "" {
				held = append(held, awb+" ("+un+")")
			}
		}
		if len(held) > 0 {
			return nil, Errorf(Conflict, "flight %s has goods no passenger aircraft may carry on board, %s: a passenger aircraft (%s) cannot fly them; "+
				"offload them first (POST /api/offloads)", f.ID, strings.Join(held, ", "), typ)
		}
	}
	return []Event{FlightAircraftChanged{FlightID: f.ID, AircraftType: typ, CapacityKg: kg, CapacityM3: m3,
		PreviousAircraftType: f.AircraftType, PreviousCapacityKg: f.CapacityKg, PreviousCapacityM3: f.CapacityM3, ChangedAt: c.At}}, nil
}

// DecideReserveCapacity takes capacity for a booking, once: a booking
// that already holds a reservation gets no second one.
func DecideReserveCapacity(f Flight, bookingID string, r Reservation, now time.Time) ([]Event, error) {
	if !f.Exists() {
		return nil, Refusal("unknown_flight", "no such flight")
	}
	if _, ok := f.Reservations[bookingID]; ok {
		return nil, nil
	}
	if err := f.refuseBookingAt(now); err != nil {
		return nil, err
	}
	if kg, m3 := f.room(); r.WeightKg > kg || r.VolumeM3 > m3 {
		// The refusal is the booking's, which its forwarder reads (its
		// history, the audit log): it says what is left as GET
		// /api/capacity shows it to a forwarder, rounded down, as the
		// exact figure against the capacity the timetable shows would
		// give the other bookings' load away.
		return nil, Refusal(ReasonNoCapacity, "flight %s has not the room for %g kg and %g m³: %g kg and %g m³ are left (at least; rounded down, as GET /api/capacity shows it to forwarders)",
			f.ID, r.WeightKg, r.VolumeM3, math.Floor(kg/availabilityStepKg)*availabilityStepKg, math.Floor(m3/availabilityStepM3)*availabilityStepM3)
	}
	return []Event{CapacityReserved{FlightID: f.ID, BookingID: bookingID, WeightKg: r.WeightKg, VolumeM3: r.VolumeM3}}, nil
}

// DecideReleaseCapacity gives back what a booking holds, if anything.
func DecideReleaseCapacity(f Flight, bookingID string) ([]Event, error) {
	r, ok := f.Reservations[bookingID]
	if !ok {
		return nil, nil
	}
	return []Event{CapacityReleased{FlightID: f.ID, BookingID: bookingID, WeightKg: r.WeightKg, VolumeM3: r.VolumeM3}}, nil
}

// EvolveFlight applies an event to a flight.
func EvolveFlight(f Flight, e Event) Flight {
	switch e := e.(type) {
	case FlightScheduled:
		return Flight{
			ID: e.FlightID, Carrier: e.Carrier, AWBPrefix: e.AWBPrefix, FlightNumber: e.FlightNumber,
			Origin: e.Origin, Destination: e.Destination, DepartureDate: e.DepartureDate, DepartureTime: e.DepartureTime,
			ArrivalDate: e.ArrivalDate, ArrivalTime: e.ArrivalTime, OriginZone: e.OriginZone, DestinationZone: e.DestinationZone,
			ArrivalUTCOffset: e.ArrivalUTCOffset, DepartsAt: e.DepartsAt, AircraftType: e.AircraftType, CapacityKg: e.CapacityKg, CapacityM3: e.CapacityM3,
			Published: PublishedAircraft{Type: e.AircraftType, CapacityKg: e.CapacityKg, CapacityM3: e.CapacityM3},
			Status:    FlightStatusScheduled, Reservations: map[string]Reservation{},
		}
	case FlightStatusChanged:
		f.Status = e.Status
		// The latest report states the current estimate: a delay without
		// one withdraws the last, and a flight departed, arrived or
		// cancelled is delayed no more.
		f.EstimatedDepartsAt, f.EstimatedArrivesAt = e.EstimatedDepartsAt, e.EstimatedArrivesAt
		switch e.Status {
		case FlightStatusDelayed:
			// Not departed yet: a flight.status webhook of the delay,
			// sent once the flight has departed or arrived, shows it
			// delayed, not delayed with the departure that came after.
			f.DepartedAt, f.ArrivedAt = time.Time{}, time.Time{}
		case FlightStatusDeparted:
			// Not arrived yet: a flight.status webhook of the departure
			// shows the flight as it was then, whenever it is sent.
			f.DepartedAt, f.ArrivedAt = e.ChangedAt, time.Time{}
		case FlightStatusArrived:
			f.ArrivedAt = e.ChangedAt
		case FlightStatusCancelled:
			// A cancelled flight carries nothing: its cargo is offloaded
			// (see FlightChangeStatuses, which reads Loaded, kept as who
			// was on board when it was cancelled).
			f.ActualKg, f.ActualM3 = 0, 0
		}
	case FlightAircraftChanged:
		f.AircraftType, f.CapacityKg, f.CapacityM3 = e.AircraftType, e.CapacityKg, e.CapacityM3
	case CapacityReserved:
		f.Reservations = cloneReservations(f.Reservations)
		f.Reservations[e.BookingID] = Reservation{WeightKg: e.WeightKg, VolumeM3: e.VolumeM3}
		f.ReservedKg += e.WeightKg
		f.ReservedM3 += e.VolumeM3
	case CapacityReleased:
		f.Reservations = cloneReservations(f.Reservations)
		delete(f.Reservations, e.BookingID)
		f.ReservedKg -= e.WeightKg
		f.ReservedM3 -= e.VolumeM3
	case ManifestSubmitted, OffloadReported:
		return evolveLoad(f, e)
	}
	return f
}

// cloneReservations copies the map, so a Flight value can be shared
// between a read model and its readers without one changing the other.
func cloneReservations(m map[string]Reservation) map[string]Reservation {
	out := make(map[string]Reservation, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
