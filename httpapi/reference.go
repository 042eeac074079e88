package httpapi

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/refdata"
	"github.com/cargostream/cargostream/views"
)

// The shapes of the codes reference data filters take.
const (
	countryShape     = "a two-letter ISO 3166 country code"
	airportShape     = "a three-letter IATA airport code"
	icaoAirportShape = "a four-character ICAO airport code"
	airlineShape     = "a two-character IATA airline code"
	icaoAirlineShape = "a three-letter ICAO airline code"
)

func (s *Server) handleAirports() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.AirportFilter{IATACode: codeParam(q, &p, "iataCode", domain.ValidAirportCode, airportShape),
			ICAOCode: codeParam(q, &p, "icaoCode", domain.ValidICAOAirportCode, icaoAirportShape),
			Country:  codeParam(q, &p, "country", domain.ValidCountryCode, countryShape), Name: q.Get("name"), City: q.Get("city")}
		if err := p.Err(); err != nil {
			return err
		}
		airports, total := s.reference.Airports(f, page, limit)
		writePage(w, "airports", airports, views.ToAirportJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleAirlines() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.AirlineFilter{IATACode: codeParam(q, &p, "iataCode", domain.ValidAirlineCode, airlineShape),
			ICAOCode: codeParam(q, &p, "icaoCode", domain.ValidICAOAirlineCode, icaoAirlineShape),
			Country:  codeParam(q, &p, "country", domain.ValidCountryCode, countryShape), Name: q.Get("name"), Alliance: q.Get("alliance")}
		if err := p.Err(); err != nil {
			return err
		}
		airlines, total := s.reference.Airlines(f, page, limit)
		writePage(w, "airlines", airlines, views.ToAirlineJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleCommodities() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.CommodityFilter{Code: codeParam(q, &p, "code", domain.ValidCommodityCode, "a commodity code: letters, digits, '-' or '_'"),
			Name: q.Get("name"), HSCode: codeParam(q, &p, "hsCode", domain.ValidHSCodePrefix, "the first 1 to 10 digits of an HS code")}
		if v := q.Get("dangerousGoods"); v != "" {
			dg, err := strconv.ParseBool(v)
			if err != nil {
				p.Add("dangerousGoods", domain.CodeInvalidValue, "must be true or false")
			}
			f.DangerousGoods = &dg
		}
		if err := p.Err(); err != nil {
			return err
		}
		items, total := s.reference.Commodities(f, page, limit)
		writePage(w, "commodities", items, views.ToCommodityJSON, page, limit, total)
		return nil
	}
}

// handleImportReference imports a reference file (or a chunk of one: a
// chunk repeats the header and says where it starts with firstLine).
func (s *Server) handleImportReference() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		kind := r.PathValue("kind")
		q := r.URL.Query()
		var p domain.Problems
		firstLine := intParam(q, "firstLine", 1, 1, 1<<30, &p)
		if kind != domain.RefAirports && kind != domain.RefAirlines && kind != domain.RefCommodities {
			p.Add("kind", domain.CodeInvalidValue, "must be airports, airlines or commodities")
		}
		if err := p.Err(); err != nil {
			return err
		}
		if err := plainUTF8(r); err != nil {
			return err
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return readError(err)
		}
		format := q.Get("format")
		if format == "" {
			first, _, _ := bufio.NewReader(bytes.NewReader(body)).ReadLine()
			if format = refdata.DetectFormat(kind, string(first)); format == "" {
				return domain.Errorf(domain.InvalidRequest, "cannot tell the format of this %s file from its first line; name it with the parameter format (cargoctl import --format): %s",
					kind, refdata.FormatsOf(kind))
			}
		}
		source := q.Get("source")
		if source == "" {
			source = "upload"
		}
		batch := domain.ReferenceChanged{Kind: kind, Source: source}
		report := views.ImportReportJSON{Kind: kind, Format: format}
		switch kind {
		case domain.RefAirports:
			parsed, err := refdata.ParseAirports(bytes.NewReader(body), format, firstLine, zoneKnown)
			if err != nil {
				return domain.Errorf(domain.InvalidRequest, "%s", err.Error())
			}
			batch.Airports, report.Rows, report.Skipped, report.Rejected = parsed.Rows, len(parsed.Rows), parsed.Skipped, parsed.Rejected
		case domain.RefAirlines:
			parsed, err := refdata.ParseAirlines(bytes.NewReader(body), format, firstLine)
			if err != nil {
				return domain.Errorf(domain.InvalidRequest, "%s", err.Error())
			}
			batch.Airlines, report.Rows, report.Skipped, report.Rejected = parsed.Rows, len(parsed.Rows), parsed.Skipped, parsed.Rejected
		default:
			parsed, err := refdata.ParseCommodities(bytes.NewReader(body), format, firstLine)
			if err != nil {
				return domain.Errorf(domain.InvalidRequest, "%s", err.Error())
			}
			batch.Commodities, batch.Stated, report.Rows, report.Skipped, report.Rejected = parsed.Rows, parsed.Stated, len(parsed.Rows), parsed.Skipped, parsed.Rejected
		}
		res, err := s.commands.ImportReference(r.Context(), meta(r), batch)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		report.Changed, report.Unchanged = res.Changed, res.Rows-res.Changed
		if report.Rejected == nil {
			report.Rejected = []refdata.RowError{}
		}
		writeJSON(w, http.StatusOK, report)
		return nil
	}
}

// zoneKnown reports whether an IANA zone name exists.
func zoneKnown(name string) bool {
	_, err := time.LoadLocation(name)
	return err == nil && name != "" && name != "Local"
}
