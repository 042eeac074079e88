package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
)

const shipmentSynopsis = `Usage: cargoctl shipment [flags] AWB [flags]

Prints the whole life of one air waybill, in the order it happened: the
quote and booking it came from, its MAWB and HAWBs, e-DGDs, e-CSD and PLACI,
documents, the manifests and offloads of its flights, and its status events.
One line an event: the time (UTC, to the millisecond), who caused it, the
aggregate, the event type and the fields of the event (their times as the
API has them); under it, the webhook deliveries of that event, each
with its subscription, status, attempts and the last attempt's outcome.

It asks the server's API (GET /api/shipments/{awb}/history) as an API
client, with the flags of cargoctl admin: --url or CARGOCTL_URL,
--client-id or CARGOCTL_CLIENT_ID, and the secret from
CARGOCTL_CLIENT_SECRET or --client-secret-file. Any client may: a
forwarder's or an airline's sees its own part of the shipment, an
admin's all of it.
`

// historyPageSize is how many events one request asks for: the API's
// largest page.
const historyPageSize = 100

func runShipment(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	conn := connFlagsOf(getenv)
	fs := newFlagSet("shipment", shipmentSynopsis)
	conn.register(fs)
	asJSON := fs.Bool("json", false, "print the events as the API answers them, one JSON object a line")
	positional, help, err := parseInterspersed(fs, args, stdout)
	if help || err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("shipment", "give one AWB number, not %d arguments", len(positional))
	}
	awb, err := parseAWBArg("shipment", positional[0])
	if err != nil {
		return err
	}
	client, err := conn.client("shipment", getenv, stderr)
	if err != nil {
		return err
	}
	if err := client.authorize(ctx); err != nil {
		return err
	}
	entries, err := client.shipmentHistory(ctx, awb)
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		// The API answers 404 alike for an AWB no shipment's event names
		// and for one the client may not see (its organisation's, or an
		// admin's). A booking refused for the number (not in stock, in
		// use) is no event of its shipment, though it names the number.
		return fmt.Errorf("the server shows %s no shipment %s: no event of a shipment names it, or none the client may see (an admin's sees every one); "+
			"a booking refused for the number is none of its shipment: cargoctl events --type booking --event-type BookingRequested lists the bookings asked", conn.clientID, awb)
	}
	if err != nil {
		return err
	}
	eventIDs := make([]string, len(entries))
	for i, e := range entries {
		eventIDs[i] = e.EventID
	}
	deliveries, err := client.deliveriesByEvent(ctx, eventIDs)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type == "" {
			// The API answers an event it could not read (a bad envelope
			// header) as stored, without a type, and without a time if
			// the envelope gave none: the stream's own time of it is in
			// no answer of the API.
			fmt.Fprintf(stderr, "cargoctl: sequence %d: cargod could not read this event: it has no type, nor a time if its envelope gave none; "+
				"cargoctl events --from-seq %d --to-seq %d prints it with when the stream stored it, and why\n", e.Sequence, e.Sequence, e.Sequence)
		}
		ds := deliveries[e.EventID]
		line := shipmentLine(e, ds)
		if *asJSON {
			if line, err = jsonLine(e, ds); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(stdout, line); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "%s of %s\n", eventCount(len(entries)), awb)
	return nil
}

// parseAWBArg reads an AWB number given to cmd, in the server's form; one
// that is not is a usage error (exit 2), before a token is asked for.
func parseAWBArg(cmd, s string) (string, error) {
	awb, err := domain.ParseAWB(s)
	if err != nil {
		return "", usagef(cmd, "%q is not an AWB number: %v", s, err)
	}
	return awb, nil
}

// historyEntry is one event of a history, as the API answers it; raw is
// its JSON as it came.
type historyEntry struct {
	Sequence      uint64                     `json:"sequence"`
	OccurredAt    string                     `json:"occurredAt"`
	Type          string                     `json:"type"`
	EventID       string                     `json:"eventId"`
	AggregateType string                     `json:"aggregateType"`
	AggregateID   string                     `json:"aggregateId"`
	Actor         string                     `json:"actor"`
	Data          map[string]json.RawMessage `json:"data"`
	raw           json.RawMessage
}

// shipmentHistory reads every page of the history of a (canonical) AWB
// number.
func (c *apiClient) shipmentHistory(ctx context.Context, awb string) ([]historyEntry, error) {
	var out []historyEntry
	for page := 1; ; page++ {
		q := url.Values{"page": {fmt.Sprint(page)}, "limit": {fmt.Sprint(historyPageSize)}}
		body, err := c.call(ctx, http.MethodGet, "/api/shipments/"+url.PathEscape(awb)+"/history?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		var res struct {
			Data       []json.RawMessage `json:"data"`
			Pagination struct {
				TotalPages int `json:"totalPages"`
			} `json:"pagination"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return nil, fmt.Errorf("the history of %s is not what the API answers: %w", awb, err)
		}
		for _, raw := range res.Data {
			e := historyEntry{raw: raw}
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, fmt.Errorf("an event of the history of %s: %w", awb, err)
			}
			out = append(out, e)
		}
		if page >= res.Pagination.TotalPages {
			return out, nil
		}
	}
}

// delivery is a webhook delivery of an event, as the API answers it, with
// the subscription it went to.
type delivery struct {
	WebhookID  string `json:"webhookId"`
	DeliveryID string `json:"deliveryId"`
	EventName  string `json:"eventName"`
	EventID    string `json:"eventId"`
	Status     string `json:"status"`
	Attempts   []struct {
		At         string  `json:"at"`
		StatusCode *int    `json:"statusCode"`
		Error      *string `json:"error"`
		Outcome    string  `json:"outcome"`
	} `json:"attempts"`
}

// maxEventIDsPerCall is the server's bound on the events one request for
// deliveries names (the eventId parameter repeated).
const maxEventIDsPerCall = 100

// deliveriesByEvent reads the deliveries of the events eventIDs from every
// webhook subscription listed (not those deleted), by the id of the event
// delivered: the server filters, so that a subscription's whole log never
// crosses the wire.
func (c *apiClient) deliveriesByEvent(ctx context.Context, eventIDs []string) (map[string][]delivery, error) {
	body, err := c.call(ctx, http.MethodGet, "/api/webhooks", nil)
	if err != nil {
		return nil, err
	}
	var hooks struct {
		Webhooks []struct {
			ID string `json:"webhookId"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(body, &hooks); err != nil {
		return nil, fmt.Errorf("the webhooks are not what the API answers: %w", err)
	}
	out := map[string][]delivery{}
	for _, h := range hooks.Webhooks {
		for ids := range slices.Chunk(eventIDs, maxEventIDsPerCall) {
			if err := c.deliveriesOf(ctx, h.ID, ids, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// deliveriesOf adds to out the deliveries of the events eventIDs made for
// the subscription webhookID, every page.
func (c *apiClient) deliveriesOf(ctx context.Context, webhookID string, eventIDs []string, out map[string][]delivery) error {
	for page := 1; ; page++ {
		q := url.Values{"page": {fmt.Sprint(page)}, "limit": {fmt.Sprint(historyPageSize)}, "eventId": eventIDs}
		body, err := c.call(ctx, http.MethodGet, "/api/webhooks/"+url.PathEscape(webhookID)+"/deliveries?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		var res struct {
			Deliveries []delivery `json:"deliveries"`
			Pagination struct {
				TotalPages int `json:"totalPages"`
			} `json:"pagination"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return fmt.Errorf("the deliveries of webhook %s are not what the API answers: %w", webhookID, err)
		}
		for _, d := range res.Deliveries {
			d.WebhookID = webhookID
			out[d.EventID] = append(out[d.EventID], d)
		}
		if page >= res.Pagination.TotalPages {
			return nil
		}
	}
}

// shipmentLine is one event of a shipment's life, for people: the time,
// who, the aggregate, the event type, and its fields by name, each value
// compact (strings bare); then a line for each of its deliveries.
func shipmentLine(e historyEntry, deliveries []delivery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s/%s  %s", lineTime(e.OccurredAt), or(e.Actor, "?"), e.AggregateType, e.AggregateID, or(e.Type, "?"))
	for _, name := range slices.Sorted(maps.Keys(e.Data)) {
		b.WriteString("  " + name + "=" + compactValue(e.Data[name]))
	}
	for _, d := range deliveries {
		fmt.Fprintf(&b, "\n    webhook %s  delivery %s  %s  %s  %d attempts", d.WebhookID, d.DeliveryID, d.EventName, d.Status, len(d.Attempts))
		if n := len(d.Attempts); n > 0 {
			last := d.Attempts[n-1]
			fmt.Fprintf(&b, ", the last at %s: %s", lineTime(last.At), last.Outcome)
			if last.StatusCode != nil {
				fmt.Fprintf(&b, " (HTTP %d)", *last.StatusCode)
			}
			if last.Error != nil {
				fmt.Fprintf(&b, " (%s)", *last.Error)
			}
		}
	}
	return b.String()
}

// lineTime is an RFC 3339 time of the API in UTC to the millisecond, as
// trace prints times: the API's own drops a fraction's trailing zeros,
// and lines of times of different widths neither align nor sort as text.
// A time that does not parse is printed as it came. The zero time, which
// the API answers for an event whose envelope had no time it could read,
// is said to be unknown, in the same width, rather than the year 1.
func lineTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	switch {
	case err != nil:
		return s
	case t.IsZero():
		return fmt.Sprintf("%-*s", len(utcMillis), "(time unknown)")
	}
	return t.UTC().Format(utcMillis)
}

// utcMillis is how cargoctl prints the time of an event for people.
const utcMillis = "2006-01-02T15:04:05.000Z"

// jsonLine is the entry as the API answered it, with its deliveries
// under "deliveries" when it has any.
func jsonLine(e historyEntry, deliveries []delivery) (string, error) {
	if len(deliveries) == 0 {
		return compactValue(e.raw), nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(e.raw, &fields); err != nil {
		return "", err
	}
	ds, err := json.Marshal(deliveries)
	if err != nil {
		return "", err
	}
	fields["deliveries"] = ds
	line, err := json.Marshal(fields)
	return string(line), err
}

// compactValue is a JSON value on one line, a string without its quotes.
func compactValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}
