package httpapi

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/refdata"
	"github.com/cargostream/cargostream/views"
	"github.com/gorilla/mux"
)

// upperQuery reads the query parameters named, in upper case.
func upperQuery(r *http.Request, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToUpper(strings.TrimSpace(r.URL.Query().Get(n)))
	}
	return out
}

func (s *Server) handleAirports() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		if err := p.Err(); err != nil {
			return err
		}
		c := upperQuery(r, "iataCode", "icaoCode", "country")
		q := r.URL.Query()
		airports, total := s.reference.Airports(projections.AirportFilter{IATACode: c[0], ICAOCode: c[1], Country: c[2],
			Name: q.Get("name"), City: q.Get("city")}, page, limit)
		writePage(w, "airports", airports, views.ToAirportJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleAirlines() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		if err := p.Err(); err != nil {
			return err
		}
		c := upperQuery(r, "iataCode", "icaoCode", "country")
		q := r.URL.Query()
		airlines, total := s.reference.Airlines(projections.AirlineFilter{IATACode: c[0], ICAOCode: c[1], Country: c[2],
			Name: q.Get("name"), Alliance: q.Get("alliance")}, page, limit)
		writePage(w, "airlines", airlines, views.ToAirlineJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleCommodities() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		f := projections.CommodityFilter{Code: upperQuery(r, "code")[0], Name: r.URL.Query().Get("name"), HSCode: r.URL.Query().Get("hsCode")}
		if v := r.URL.Query().Get("dangerousGoods"); v != "" {
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
		kind := mux.Vars(r)["kind"]
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
				return domain.Errorf(domain.InvalidRequest, "cannot tell the format of this %s file from its first line; name it with format", kind)
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
			batch.Commodities, report.Rows, report.Skipped, report.Rejected = parsed.Rows, len(parsed.Rows), parsed.Skipped, parsed.Rejected
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
