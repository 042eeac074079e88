package httpapi

import (
	"bytes"
	"net/http"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// flightRequest is one flight of a timetable.
type flightRequest struct {
	FlightNumber  string   `json:"flightNumber"`
	Origin        string   `json:"origin"`
	Destination   string   `json:"destination"`
	DepartureDate string   `json:"departureDate"`
	DepartureTime string   `json:"departureTime"`
	ArrivalDate   string   `json:"arrivalDate"`
	ArrivalTime   string   `json:"arrivalTime"`
	AircraftType  string   `json:"aircraftType"`
	CapacityKg    *float64 `json:"capacityKg"`
	CapacityM3    *float64 `json:"capacityM3"`

	// Not in the spec: the UTC offsets of the local times, which name the
	// instant of a time the clocks show twice (see domain.ScheduleFlight).
	DepartureUTCOffset string `json:"departureUtcOffset"`
	ArrivalUTCOffset   string `json:"arrivalUtcOffset"`
}

// command is the flight to schedule that f asks for.
func (f flightRequest) command() domain.ScheduleFlight {
	return domain.ScheduleFlight{FlightNumber: f.FlightNumber, Origin: f.Origin, Destination: f.Destination,
		DepartureDate: f.DepartureDate, DepartureTime: f.DepartureTime, ArrivalDate: f.ArrivalDate, ArrivalTime: f.ArrivalTime,
		DepartureUTCOffset: f.DepartureUTCOffset, ArrivalUTCOffset: f.ArrivalUTCOffset,
		AircraftType: f.AircraftType, CapacityKg: f.CapacityKg, CapacityM3: f.CapacityM3}
}

// maxFlightBatch bounds one timetable upload.
const maxFlightBatch = 500

// handleScheduleFlights publishes one flight (a JSON object) or a batch (a
// JSON array) of the calling airline.
func (s *Server) handleScheduleFlights() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readJSONBody(r)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			var req flightRequest
			if err := unmarshal(body, &req); err != nil {
				return err
			}
			res, err := s.commands.ScheduleFlight(r.Context(), meta(r), req.command())
			if err != nil {
				return err
			}
			s.writeCreated(w, r, res.Sequence, res.Version, "/api/flights/"+res.State.ID, views.ToFlightJSON(res.State))
			return nil
		}
		var reqs []flightRequest
		if err := unmarshal(body, &reqs); err != nil {
			return err
		}
		if len(reqs) == 0 || len(reqs) > maxFlightBatch {
			return domain.Errorf(domain.InvalidRequest, "send 1 to %d flights", maxFlightBatch)
		}
		cmds := make([]domain.ScheduleFlight, len(reqs))
		for i, f := range reqs {
			cmds[i] = f.command()
		}
		res, err := s.commands.ScheduleFlights(r.Context(), meta(r), cmds)
		if err != nil {
			return err
		}
		s.settle(w, r, res[len(res)-1].Sequence)
		flights := make([]views.FlightJSON, len(res))
		for i, f := range res {
			flights[i] = views.ToFlightJSON(f.State)
		}
		writeJSON(w, http.StatusCreated, map[string]any{"flights": flights})
		return nil
	}
}

// flightIDOf is the flight id of the path, its number written as the
// service writes it.
func flightIDOf(r *http.Request) string { return domain.CanonicalFlightID(r.PathValue("id")) }

// handleChangeFlight changes a flight's status (a delay may estimate its
// new departure and arrival), or its aircraft and capacity: one or the
// other, each its own command.
func (s *Server) handleChangeFlight() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Status             string   `json:"status"`
			EstimatedDepartsAt string   `json:"estimatedDepartsAt"`
			EstimatedArrivesAt string   `json:"estimatedArrivesAt"`
			AircraftType       string   `json:"aircraftType"`
			CapacityKg         *float64 `json:"capacityKg"`
			CapacityM3         *float64 `json:"capacityM3"`
		}
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		m, err := changeMeta(r)
		if err != nil {
			return err
		}
		status := domain.ChangeFlightStatus{Status: req.Status, EstimatedDepartsAt: req.EstimatedDepartsAt, EstimatedArrivesAt: req.EstimatedArrivesAt}
		aircraft := domain.ChangeFlightAircraft{AircraftType: req.AircraftType, CapacityKg: req.CapacityKg, CapacityM3: req.CapacityM3}
		changesAircraft, err := domain.FlightChangeOf(status, aircraft)
		if err != nil {
			return err
		}
		var res commands.Result[domain.Flight]
		if changesAircraft {
			// What is on board is read from the read models, as a
			// manifest's shipments are: an e-DGD filed through another
			// replica a moment ago must count.
			if err := s.caughtUp(r, "what the flight has on board; its aircraft was not changed"); err != nil {
				return err
			}
			onBoard := func(awb string) string { return s.shipmentFacts.Shipments.Compliance(awb).NoPassengerAircraft() }
			res, err = s.commands.ChangeFlightAircraft(r.Context(), m, flightIDOf(r), aircraft, onBoard)
		} else {
			res, err = s.commands.ChangeFlightStatus(r.Context(), m, flightIDOf(r), status)
		}
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		setVersion(w, res.Version)
		writeJSON(w, http.StatusOK, views.ToFlightJSON(res.State))
		return nil
	}
}

// handleGetFlight is a flight now, or as it was at a past moment (?at=,
// ?seq=).
func (s *Server) handleGetFlight() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, p := flightIDOf(r), principal(r.Context())
		return answerVersion(s, w, r, domain.Aggregate{Type: domain.AggregateFlight, ID: id},
			func(cut projections.Cut) (domain.Flight, uint64, error) {
				f, version, err := s.past.Flight(r.Context(), id, cut)
				return f, views.FlightVersion(f, p, version), err
			},
			func() (domain.Flight, uint64, bool) {
				f, version, ok := s.flights.GetVersion(id)
				return f, views.FlightVersion(f, p, version), ok
			},
			"no flight "+id, views.ToFlightJSON)
	}
}

// flightFilter reads the query filters shared by flights and capacity.
func flightFilter(r *http.Request, p *domain.Problems) projections.FlightFilter {
	q := r.URL.Query()
	f := projections.FlightFilter{
		Origin:       codeParam(q, p, "origin", domain.ValidAirportCode, "a three-letter IATA airport code"),
		Destination:  codeParam(q, p, "destination", domain.ValidAirportCode, "a three-letter IATA airport code"),
		Status:       q.Get("status"),
		Date:         q.Get("date"),
		FlightNumber: domain.CanonicalFlightNumber(q.Get("flightNumber")),
		AircraftType: codeParam(q, p, "aircraftType", domain.ValidAircraftType, "an aircraft type: 2 to 8 letters or digits"),
	}
	if f.FlightNumber != "" && !domain.ValidFlightNumber(f.FlightNumber) {
		p.Add("flightNumber", domain.CodeInvalidFormat, "must be an airline code and 1 to 4 digits, such as LH8160")
	}
	if _, err := time.Parse(time.DateOnly, f.Date); f.Date != "" && err != nil {
		p.Add("date", domain.CodeInvalidDate, "must be a date as YYYY-MM-DD")
	}
	switch f.Status {
	case "", domain.FlightStatusScheduled, domain.FlightStatusDelayed, domain.FlightStatusDeparted, domain.FlightStatusArrived, domain.FlightStatusCancelled:
	default:
		p.Add("status", domain.CodeInvalidValue, "must be scheduled, delayed, departed, arrived or cancelled")
	}
	return f
}

// handleListFlights is the timetable: open to every caller.
func (s *Server) handleListFlights() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		f := flightFilter(r, &p)
		if err := p.Err(); err != nil {
			return err
		}
		flights, total := s.flights.List(f, page, limit)
		writePage(w, "flights", flights, views.ToFlightJSON, page, limit, total)
		return nil
	}
}

// handleCapacity reports per flight what is left to book, and to the
// flight's airline and admins its booked (projected) and manifested
// (actual) load (see views.ToCapacityJSON). Paged like the flights.
func (s *Server) handleCapacity() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		f := flightFilter(r, &p)
		if err := p.Err(); err != nil {
			return err
		}
		who := principal(r.Context())
		now := time.Now()
		flights, total := s.flights.List(f, page, limit)
		writePage(w, "capacity", flights, func(fl domain.Flight) views.CapacityJSON { return views.ToCapacityJSON(fl, who, now) }, page, limit, total)
		return nil
	}
}
