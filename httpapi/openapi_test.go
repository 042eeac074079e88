package httpapi

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/refdata"
	"github.com/cargostream/cargostream/tokens"
	"github.com/cargostream/cargostream/views"
	"github.com/cargostream/cargostream/webhooks"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/crypto/bcrypt"
)

// openAPIURL is where the test pretends the document lives, so that the
// schema compiler can resolve its "#/..." references.
const openAPIURL = "https://cargostream.invalid/openapi.json"

// httpMethods are the keys of a path item that name operations.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// openAPIDoc is the served document, decoded.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// openAPICompiler compiles schemas out of the served document.
func openAPICompiler(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPIDocument))
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020) // the dialect of OpenAPI 3.1
	c.AssertFormat()                     // so that examples and samples are checked for date, date-time, uuid
	if err := c.AddResource(openAPIURL, doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	return c
}

// pointer makes a JSON pointer fragment of tokens (RFC 6901).
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// lookup follows a JSON pointer fragment through the decoded document.
func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// operations lists "method path" of every documented operation.
func operations(doc map[string]any) map[string]map[string]any {
	ops := map[string]map[string]any{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if slices.Contains(httpMethods, method) {
				ops[method+" "+path] = op.(map[string]any)
			}
		}
	}
	return ops
}

func TestOpenAPIDocument(t *testing.T) {
	doc := openAPIDoc(t)
	if got := doc["openapi"]; got != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", got)
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] != "Cargostream" || info["version"] != "1.0.0" {
		t.Errorf("info = %v, want title Cargostream, version 1.0.0", info)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, openAPIDocument, "", "  "); err != nil || !bytes.Equal(bytes.TrimSpace(indented.Bytes()), bytes.TrimSpace(openAPIDocument)) {
		t.Errorf("openapi.json is not indented with two spaces (err %v)", err)
	}
}

func TestOpenAPIComponentSchemasCompile(t *testing.T) {
	doc := openAPIDoc(t)
	c := openAPICompiler(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		t.Run(name, func(t *testing.T) {
			if _, err := c.Compile(openAPIURL + "#" + pointer("components", "schemas", name)); err != nil {
				t.Errorf("%v", err)
			}
		})
	}
}

// schemaSite is a "schema" in the document outside components/schemas:
// of a request body, response, parameter or header, of an operation or of
// a webhook delivery.
type schemaSite struct {
	ptr     string // of the schema
	example any    // the example beside it, if any
}

func schemaSites(doc map[string]any) []schemaSite {
	var sites []schemaSite
	var walk func(v any, ptr []string)
	walk = func(v any, ptr []string) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["schema"]; ok {
				sites = append(sites, schemaSite{ptr: pointer(append(ptr, "schema")...), example: v["example"]})
			}
			for k, child := range v {
				if k != "schema" && k != "example" {
					walk(child, append(slices.Clip(ptr), k))
				}
			}
		case []any:
			for i, child := range v {
				walk(child, append(slices.Clip(ptr), strconv.Itoa(i)))
			}
		}
	}
	walk(doc["paths"], []string{"paths"})
	walk(doc["webhooks"], []string{"webhooks"})
	components := doc["components"].(map[string]any)
	for _, kind := range []string{"parameters", "headers", "responses", "requestBodies"} {
		walk(components[kind], []string{"components", kind})
	}
	slices.SortFunc(sites, func(a, b schemaSite) int { return strings.Compare(a.ptr, b.ptr) })
	return sites
}

// TestOpenAPIPathSchemasCompile compiles every schema of a request body,
// response, parameter and header, and checks each example against its
// schema.
func TestOpenAPIPathSchemasCompile(t *testing.T) {
	doc := openAPIDoc(t)
	c := openAPICompiler(t)
	sites := schemaSites(doc)
	if len(sites) < 50 {
		t.Fatalf("found only %d schemas under paths and components", len(sites))
	}
	for _, site := range sites {
		t.Run(site.ptr, func(t *testing.T) {
			sch, err := c.Compile(openAPIURL + "#" + site.ptr)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if site.example != nil {
				// Through JSON again, so numbers are what the validator expects.
				raw, _ := json.Marshal(site.example)
				v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
				if err := sch.Validate(v); err != nil {
					t.Errorf("the example does not match its schema: %#v", err)
				}
			}
		})
	}
}

// TestOpenAPIRefsResolve checks every $ref, including those the schema
// compiler never follows (parameters, headers).
func TestOpenAPIRefsResolve(t *testing.T) {
	doc := openAPIDoc(t)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !strings.HasPrefix(ref, "#/") {
					t.Errorf("$ref %q is not local", ref)
				} else if _, ok := lookup(doc, strings.TrimPrefix(ref, "#")); !ok {
					t.Errorf("$ref %q resolves to nothing", ref)
				}
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(doc)
}

// registeredRoutes lists the routes of routes.go: "method path" of each.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	var routes []string
	for _, pattern := range (&Server{}).routes().patterns {
		method, path, _ := strings.Cut(pattern, " ")
		routes = append(routes, strings.ToLower(method)+" "+path)
	}
	return routes
}

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	ops := operations(openAPIDoc(t))
	routes := registeredRoutes(t)
	if len(routes) == 0 {
		t.Fatal("no routes registered")
	}
	for _, r := range routes {
		if _, ok := ops[r]; !ok {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if !slices.Contains(routes, op) {
			t.Errorf("openapi.json documents %s, which routes.go does not serve", op)
		}
	}
}

// openEndpoints need no credential.
var openEndpoints = []string{
	"get /healthz", "get /readyz", "get /openapi.json", "get /docs/errors", "get /.well-known/jwks.json", "post /api/auth/token",
}

func TestOpenAPIOperations(t *testing.T) {
	doc := openAPIDoc(t)
	var tags []string
	for _, tag := range doc["tags"].([]any) {
		tags = append(tags, tag.(map[string]any)["name"].(string))
	}
	if want := []string{"authentication-v1", "quotes-v1", "flights-v1", "bookings-v1", "awb-stock-v1", "reference-data-v1", "shipments-v1", "webhooks-v1", "administration-v1", "operations"}; !slices.Equal(tags, want) {
		t.Errorf("tags = %v, want %v", tags, want)
	}
	if got, _ := json.Marshal(doc["security"]); string(got) != `[{"bearerAuth":[]},{"apiKey":[]}]` {
		t.Errorf("global security = %s, want bearerAuth or apiKey", got)
	}
	ids := map[string]string{}
	ops := operations(doc)
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		op := ops[name]
		t.Run(name, func(t *testing.T) {
			id, _ := op["operationId"].(string)
			if id == "" {
				t.Error("no operationId")
			} else if other, dup := ids[id]; dup {
				t.Errorf("operationId %s is also used by %s", id, other)
			}
			ids[id] = name
			if s, _ := op["summary"].(string); s == "" {
				t.Error("no summary")
			}
			opTags, _ := op["tags"].([]any)
			if len(opTags) != 1 || !slices.Contains(tags, opTags[0].(string)) {
				t.Errorf("tags = %v, want one of %v", opTags, tags)
			}

			security, hasSecurity := op["security"].([]any)
			switch got, _ := json.Marshal(security); {
			case name == "get /readyz":
				// Open, and an admin's credential adds the details.
				if string(got) != `[{},{"bearerAuth":[]},{"apiKey":[]}]` {
					t.Errorf("security = %s; /readyz takes a credential or none", got)
				}
			case slices.Contains(openEndpoints, name):
				if !hasSecurity || len(security) != 0 {
					t.Errorf("an open endpoint needs security: [], has %v", op["security"])
				}
			default:
				if _, ok := op["security"]; ok {
					t.Errorf("security = %v; endpoints that need a credential use the global requirement", op["security"])
				}
			}

			method, path, _ := strings.Cut(name, " ")
			responses, _ := op["responses"].(map[string]any)
			if len(responses) == 0 {
				t.Fatal("no responses")
			}
			for status, r := range responses {
				r := r.(map[string]any)
				headers, _ := r["headers"].(map[string]any)
				if _, ok := headers["X-Request-Id"]; !ok {
					t.Errorf("%s: no X-Request-Id header", status)
				}
				code, _ := strconv.Atoi(status)
				if code == http.StatusNoContent || code == http.StatusNotModified || strings.HasPrefix(name, "head ") {
					if _, ok := r["content"]; ok {
						t.Errorf("%s: has content", status)
					}
					continue
				}
				content, _ := r["content"].(map[string]any)
				if path == "/docs/errors" && code == http.StatusOK {
					for _, media := range []string{"text/markdown", "text/html"} {
						if _, ok := content[media]; !ok {
							t.Errorf("%s: not %s", status, media)
						}
					}
					continue
				}
				if path == "/metrics" && code == http.StatusOK {
					if _, ok := content["text/plain"]; !ok {
						t.Errorf("%s: not text/plain", status)
					}
					continue
				}
				if path == "/api/documents/{id}" && (code == http.StatusOK || code == http.StatusPartialContent) {
					// A document's file, of whatever type it has.
					if _, ok := content["*/*"]; !ok {
						t.Errorf("%s: not */*", status)
					}
					continue
				}
				ref, _ := lookup(content, pointer("application/json", "schema", "$ref"))
				if ref == nil {
					ref, _ = lookup(content, pointer("application/json", "schema", "type"))
				}
				if ref == nil {
					t.Errorf("%s: no application/json schema", status)
				}
				if code >= 400 && name != "get /readyz" && ref != "#/components/schemas/Error" {
					t.Errorf("%s: schema %v, want Error", status, ref)
				}
				if code == http.StatusUnauthorized {
					if _, ok := headers["WWW-Authenticate"]; !ok {
						t.Errorf("%s: no WWW-Authenticate header", status)
					}
				}
				if code == http.StatusCreated {
					if _, ok := headers["Cargo-Sequence"]; !ok {
						t.Errorf("%s: no Cargo-Sequence header", status)
					}
				}
			}
			if !slices.Contains(openEndpoints, name) {
				for _, status := range []string{"401", "500"} {
					if _, ok := responses[status]; !ok {
						t.Errorf("no %s response", status)
					}
				}
			}
			if method == "post" {
				if _, ok := op["requestBody"]; !ok {
					t.Error("no requestBody")
				}
			}
			if method == "get" && strings.HasPrefix(path, "/api/") && !hasParameter(doc, op, "header", "Cargo-Sequence") {
				t.Error("no Cargo-Sequence request header")
			}
			for _, seg := range strings.Split(path, "/") {
				if strings.HasPrefix(seg, "{") && !hasParameter(doc, doc["paths"].(map[string]any)[path].(map[string]any), "path", strings.Trim(seg, "{}")) {
					t.Errorf("path parameter %s is not declared", seg)
				}
			}
		})
	}
}

// hasParameter reports whether the operation or path item declares a
// parameter, directly or by $ref.
func hasParameter(doc map[string]any, holder map[string]any, in, name string) bool {
	params, _ := holder["parameters"].([]any)
	for _, p := range params {
		p := p.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			resolved, _ := lookup(doc, strings.TrimPrefix(ref, "#"))
			p, _ = resolved.(map[string]any)
		}
		if p["in"] == in && p["name"] == name {
			return true
		}
	}
	return false
}

// TestOpenAPIErrorCodes checks that the documented error codes are the
// ones errors.go maps to statuses, and that /docs/errors has each.
func TestOpenAPIErrorCodes(t *testing.T) {
	doc := openAPIDoc(t)
	enum, _ := lookup(doc, pointer("components", "schemas", "Error", "properties", "error", "enum"))
	var documented []string
	for _, code := range enum.([]any) {
		documented = append(documented, code.(string))
	}
	slices.Sort(documented)
	if mapped := slices.Sorted(maps.Keys(statusOf)); !slices.Equal(documented, mapped) {
		t.Errorf("Error.error enum = %v, statusOf has %v", documented, mapped)
	}
	for _, code := range documented {
		if !bytes.Contains(errorDocs, []byte(`<a id="`+code+`"></a>`)) {
			t.Errorf("errors.md has no entry for %s", code)
		}
		if !bytes.Contains(errorDocsHTML, []byte(`<td><a id="`+code+`"></a><code>`+code+`</code></td>`)) {
			t.Errorf("the HTML of errors.md has no table cell anchored at %s", code)
		}
	}
}

// TestOpenAPIWebhookEvents checks the documented event names and
// subscription patterns against the catalogue: every name, every group
// pattern and "*" are accepted, and nothing else is listed.
func TestOpenAPIWebhookEvents(t *testing.T) {
	doc := openAPIDoc(t)
	enum := func(schema string) []string {
		v, _ := lookup(doc, pointer("components", "schemas", schema, "enum"))
		var out []string
		for _, s := range v.([]any) {
			out = append(out, s.(string))
		}
		return out
	}
	names := append(slices.Clone(domain.WebhookEvents), "webhook.ping")
	if got := enum("WebhookEventName"); !slices.Equal(got, names) {
		t.Errorf("WebhookEventName enum = %v, want the catalogue and webhook.ping, %v", got, names)
	}
	patterns := []string{"*"}
	for _, name := range domain.WebhookEvents {
		group, _, _ := strings.Cut(name, ".")
		if !slices.Contains(patterns, group+".*") {
			patterns = append(patterns, group+".*")
		}
		patterns = append(patterns, name)
	}
	got := enum("WebhookEventPattern")
	if !slices.Equal(got, patterns) {
		t.Errorf("WebhookEventPattern enum = %v, want %v", got, patterns)
	}
	anyURL := func(*url.URL) string { return "" }
	for _, p := range got {
		if err := domain.ValidateWebhook("https://192.0.2.1/", []string{p}, anyURL); err != nil {
			t.Errorf("documented pattern %q is refused: %v", p, err)
		}
	}
	for _, p := range []string{"webhook.ping", "quote", "quote.", "q.*", "**", "quote.*.created"} {
		if domain.ValidateWebhook("https://192.0.2.1/", []string{p}, anyURL) == nil {
			t.Errorf("%q is accepted but not documented", p)
		}
	}
}

// The audit log's actions and resources are documented as the domain
// lists them, in the filters and in the entries: a resource the log
// names but the document leaves out would be refused by a client that
// checks the document, and one the document lists but the server refuses
// would be a filter no one can use.
func TestOpenAPIAuditActionsAndResourcesAreTheDomainsLists(t *testing.T) {
	doc := openAPIDoc(t)
	param := func(name string) string {
		params, _ := lookup(doc, pointer("paths", "/api/audit-logs", "get", "parameters"))
		for i, p := range params.([]any) {
			if p.(map[string]any)["name"] == name {
				return pointer("paths", "/api/audit-logs", "get", "parameters", strconv.Itoa(i), "schema", "enum")
			}
		}
		t.Fatalf("GET /api/audit-logs has no parameter %s", name)
		return ""
	}
	for _, c := range []struct {
		ptr  string
		want []string
	}{
		{param("action"), domain.AuditActions},
		{param("resource"), domain.AuditResources},
		{pointer("components", "schemas", "AuditEntry", "properties", "action", "enum"), domain.AuditActions},
		{pointer("components", "schemas", "AuditEntry", "properties", "resource", "enum"), domain.AuditResources},
	} {
		v, _ := lookup(doc, c.ptr)
		values, _ := v.([]any)
		var got []string
		for _, s := range values {
			got = append(got, s.(string))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.ptr, got, c.want)
		}
	}
}

// TestOpenAPIMatchesGoTypes compares the properties of schemas with the
// JSON fields of the Go types they describe. For responses, a field
// without omitempty or omitzero is always written, so it must be required; the others
// must not be, except where a handler always fills them.
func TestOpenAPIMatchesGoTypes(t *testing.T) {
	doc := openAPIDoc(t)
	tests := []struct {
		schema        string // of components/schemas, or a JSON pointer into the document
		goType        any
		response      bool
		ignore        []string // JSON fields of the type the schema leaves out
		alwaysWritten []string // omitempty fields that a handler always fills
	}{
		{schema: "Error", goType: errorBody{}, response: true},
		{schema: "ValidationError", goType: domain.FieldError{}, response: true},
		{schema: "TokenRequest", goType: tokenRequest{}},
		{schema: "TokenResponse", goType: tokenResponse{}, response: true},
		{schema: "RFQ", goType: rfqRequest{}},
		{schema: "Party", goType: domain.Party{}},
		{schema: "DimensionLine", goType: domain.SentDimensionLine{}},
		{schema: "Quote", goType: views.QuoteJSON{}, response: true},
		{schema: "PriceOption", goType: views.PriceOptionJSON{}, response: true},
		{schema: "QuoteList", goType: views.QuoteListJSON{}, response: true},
		{schema: "Pagination", goType: views.PaginationJSON{}, response: true},
		{schema: "CreateOrganization", goType: organizationRequest{}, ignore: []string{"createdAt", "status"}},
		{schema: "Organization", goType: views.OrganizationJSON{}, response: true},
		{schema: "CreateClient", goType: clientRequest{}, ignore: []string{"status", "createdAt", "secretRotatedAt"}},
		{schema: "OAuthClientStatus", goType: views.ClientJSON{}, response: true, ignore: []string{"clientSecret"}},
		{schema: "RotateClientSecret", goType: rotateSecretRequest{}},
		{schema: "SetPassword", goType: setPasswordRequest{}},
		{schema: "RevokeTokens", goType: revokeTokensRequest{}},
		{schema: "OAuthClient", goType: views.ClientJSON{}, response: true, alwaysWritten: []string{"clientSecret"}},
		{schema: "CreateUser", goType: userRequest{}, ignore: []string{"status", "createdAt", "passwordChangedAt"}},
		{schema: "User", goType: views.UserJSON{}, response: true, ignore: []string{"password"}},
		{schema: "CreateAPIKey", goType: apiKeyRequest{}, ignore: []string{"id", "revoked", "apiKey", "createdAt", "revokedAt"}},
		{schema: "APIKey", goType: views.APIKeyJSON{}, response: true},
		{schema: "MaintenanceJob", goType: views.MaintenanceJobJSON{}, response: true},
		{schema: "StreamProblem", goType: views.StreamProblemJSON{}, response: true},
		{schema: "ModelDifference", goType: views.ModelDifferenceJSON{}, response: true},
		{schema: "FlightRequest", goType: flightRequest{}},
		{schema: "Flight", goType: views.FlightJSON{}, response: true},
		{schema: "Capacity", goType: views.CapacityJSON{}, response: true},
		{schema: "RateCardRequest", goType: rateCardRequest{}},
		{schema: "RateCard", goType: views.RateCardJSON{}, response: true},
		{schema: "BookingRequest", goType: bookingRequest{}},
		{schema: "BookingParty", goType: domain.FullParty{}},
		{schema: "AWBReference", goType: awbRef{}},
		{schema: "RoutingLeg", goType: domain.RoutingLeg{}},
		{schema: "Booking", goType: views.BookingJSON{}, response: true},
		{schema: "BookedParty", goType: domain.FullParty{}, response: true},
		{schema: "CreateStockRequest", goType: stockRequestBody{}},
		{schema: "StockRequest", goType: views.StockRequestJSON{}, response: true},
		{schema: "StockReplyRequest", goType: stockReplyBody{}},
		{schema: "StockReply", goType: views.StockReplyJSON{}, response: true},
		{schema: "StockLedger", goType: views.LedgerJSON{}, response: true},
		{schema: "StockLedgerRange", goType: views.LedgerRangeJSON{}, response: true},
		{schema: "ShipmentEventRequest", goType: statusEventRequest{}},
		{schema: "ShipmentEventCreated", goType: views.StatusEventCreatedJSON{}, response: true},
		{schema: "ShipmentEvent", goType: views.StatusEventJSON{}, response: true},
		{schema: "ShipmentCargo", goType: views.CargoJSON{}, response: true},
		{schema: "Shipment", goType: views.ShipmentJSON{}, response: true},
		{schema: "HistoryEntry", goType: views.HistoryEntryJSON{}, response: true},
		{schema: "WaybillParty", goType: domain.FullParty{}, response: true},
		{schema: "WaybillPartyRequest", goType: domain.FullParty{}},
		{schema: "MAWBRequest", goType: mawbRequest{}},
		{schema: "MAWBCreated", goType: views.MAWBCreatedJSON{}, response: true},
		{schema: "MAWB", goType: views.MAWBJSON{}, response: true},
		{schema: "HAWBRequest", goType: hawbRequest{}},
		{schema: "HAWB", goType: views.HAWBJSON{}, response: true},
		{schema: "PLACIRequest", goType: placiRequest{}},
		{schema: "PLACI", goType: views.PLACIJSON{}, response: true},
		{schema: "CSDRequest", goType: csdRequest{}},
		{schema: "CSD", goType: views.CSDJSON{}, response: true},
		{schema: "DGDRequest", goType: dgdRequest{}},
		{schema: "DGD", goType: views.DGDJSON{}, response: true},
		{schema: "ManifestRequest", goType: manifestRequest{}},
		{schema: "Manifest", goType: views.ManifestJSON{}, response: true},
		{schema: "ManifestDifference", goType: domain.ManifestDifference{}, response: true},
		{schema: "OffloadRequest", goType: offloadRequest{}},
		{schema: "Offload", goType: views.OffloadJSON{}, response: true},
		{schema: "Document", goType: views.DocumentJSON{}, response: true},
		{schema: "RegulatedEntity", goType: domain.RegulatedEntity{}, response: true},
		{schema: "RegulatedEntityRequest", goType: domain.RegulatedEntity{}},
		{schema: "Airport", goType: views.AirportJSON{}, response: true},
		{schema: "Airline", goType: views.AirlineJSON{}, response: true},
		{schema: "Commodity", goType: views.CommodityJSON{}, response: true},
		{schema: "ImportReport", goType: views.ImportReportJSON{}, response: true},
		{schema: "RejectedRow", goType: refdata.RowError{}, response: true},
		{schema: "AuditEntry", goType: views.AuditEntryJSON{}, response: true},
		{schema: "AuditDetail", goType: views.AuditDetailJSON{}, response: true},
		{schema: "Usage", goType: views.UsageJSON{}, response: true},
		{schema: "SetRateLimits", goType: rateLimitsRequest{}},
		{schema: "RateLimits", goType: views.RateLimitsJSON{}, response: true},
		{schema: "WebhookRequest", goType: webhookRequest{}},
		{schema: "Webhook", goType: views.WebhookJSON{}, response: true},
		{schema: "WebhookDelivery", goType: views.DeliveryJSON{}, response: true},
		{schema: "WebhookDeliveryAttempt", goType: views.AttemptJSON{}, response: true},
		{schema: "WebhookQueued", goType: views.QueuedDeliveryJSON{}, response: true},
		{schema: pointer("webhooks", "stock-low", "post", "requestBody", "content", "application/json", "schema", "properties", "data"),
			goType: domain.StockLow{}, response: true},
		{schema: pointer("webhooks", "flight-status", "post", "requestBody", "content", "application/json", "schema", "properties", "data"),
			goType: views.FlightStatusJSON{}, response: true},
		{schema: pointer("webhooks", "flight-aircraft", "post", "requestBody", "content", "application/json", "schema", "properties", "data"),
			goType: views.FlightAircraftJSON{}, response: true},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			at := tt.schema
			if !strings.HasPrefix(at, "/") {
				at = pointer("components", "schemas", tt.schema)
			}
			v, ok := lookup(doc, at)
			if !ok {
				t.Fatalf("no schema %s", tt.schema)
			}
			sch := v.(map[string]any)
			var props, required []string
			for name := range sch["properties"].(map[string]any) {
				props = append(props, name)
			}
			req, _ := sch["required"].([]any)
			for _, name := range req {
				required = append(required, name.(string))
			}
			fields, always := jsonFields(reflect.TypeOf(tt.goType))
			fields = slices.DeleteFunc(fields, func(f string) bool { return slices.Contains(tt.ignore, f) })
			always = slices.DeleteFunc(always, func(f string) bool { return slices.Contains(tt.ignore, f) })
			slices.Sort(props)
			slices.Sort(fields)
			if !slices.Equal(props, fields) {
				t.Errorf("properties %v, the Go type has %v", props, fields)
			}
			if !tt.response {
				// decodeJSON ignores fields a request does not have.
				if sch["additionalProperties"] == false {
					t.Error("a request schema refuses unknown fields, which the server ignores")
				}
				return
			}
			want := append(always, tt.alwaysWritten...)
			slices.Sort(want)
			slices.Sort(required)
			if !slices.Equal(required, want) {
				t.Errorf("required %v, want the always-written fields %v", required, want)
			}
			if sch["additionalProperties"] != false {
				t.Error("a response schema needs additionalProperties: false")
			}
		})
	}
}

// jsonFields lists the JSON names of a struct's fields, and those of them
// that encoding/json always writes (neither omitempty nor omitzero). The fields of an embedded struct
// without a JSON name are promoted, as encoding/json promotes them.
func jsonFields(typ reflect.Type) (all, always []string) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && tag != "-" && f.Type.Kind() == reflect.Struct {
			a, w := jsonFields(f.Type)
			all, always = append(all, a...), append(always, w...)
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		all = append(all, name)
		if o := strings.Split(opts, ","); !slices.Contains(o, "omitempty") && !slices.Contains(o, "omitzero") {
			always = append(always, name)
		}
	}
	return all, always
}

// responseSchema compiles the schema documented for a response: of its
// media type, or else of any (*/*).
func responseSchema(t *testing.T, c *jsonschema.Compiler, doc map[string]any, path, method string, status int, mediaType string) *jsonschema.Schema {
	t.Helper()
	ptr := pointer("paths", path, method, "responses", strconv.Itoa(status), "content", mediaType, "schema")
	if _, ok := lookup(doc, ptr); !ok {
		ptr = pointer("paths", path, method, "responses", strconv.Itoa(status), "content", "*/*", "schema")
	}
	if _, ok := lookup(doc, ptr); !ok {
		t.Fatalf("openapi.json documents no %s response %d of %s %s", mediaType, status, method, path)
	}
	sch, err := c.Compile(openAPIURL + "#" + ptr)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return sch
}

func validateJSON(t *testing.T, sch *jsonschema.Schema, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the body is not JSON: %v\n%s", err, body)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("the body does not match the documented schema: %#v\n%s", err, body)
	}
}

// TestOpenAPIResponsesOfHandlers sends requests through the whole handler
// stack of a server on an embedded event store (read models mostly filled
// directly) and checks each response against the document: the status is
// documented, the body matches its schema, and the headers every response
// of that status has are there.
func TestOpenAPIResponsesOfHandlers(t *testing.T) {
	doc := openAPIDoc(t)
	c := openAPICompiler(t)
	key, err := tokens.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	tokenAuthority, err := tokens.New(key, "https://cargostream.invalid", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	connected := false

	// A real command handler on an embedded event store, as the handlers
	// record authorization events (failed logins, rejected tokens,
	// forbidden attempts) and admin writes; read models that the test
	// fills below and the projector keeps following.
	ctx := t.Context() // cancelled before the cleanups run
	store := storetest.Open(t)
	usageCounts, err := store.Bucket(ctx, "usage", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	responses, err := store.Bucket(ctx, "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files, err := store.Objects(ctx, "documents")
	if err != nil {
		t.Fatal(err)
	}
	identity, quotes, audit, reference := projections.NewIdentity(), projections.NewQuotes(), projections.NewAudit(), builtinReference()
	flights, rates, bookings, stock := projections.NewFlights(), projections.NewRates(), projections.NewBookings(), projections.NewAWBStock()
	hooks, shipments, documents := projections.NewWebhooks(), projections.NewShipments(), projections.NewDocuments()
	projector := projections.NewProjector(store, log, identity, quotes, flights, rates, bookings, stock, reference, audit, hooks, shipments, documents)
	projected := make(chan struct{})
	go func() { defer close(projected); projector.Run(ctx) }()
	t.Cleanup(func() { <-projected }) // before the store closes
	cmds := commands.New(store, bcrypt.MinCost, reference)
	const maxBody, maxUpload = 1024, 4096
	// Webhook delivery as the service sets it up, without the senders: the
	// deliveries that ping and redeliver queue stay in the queue. The SSRF
	// guard is on; the test's targets are public addresses (TEST-NET).
	queue, err := store.Queue(ctx, "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := webhooks.NewSealer(bytes.Repeat([]byte{7}, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	shipmentFacts := projections.ShipmentFacts{Bookings: bookings, Shipments: shipments, Stock: stock, Flights: flights}
	renderer := &views.Renderer{Identity: identity, Quotes: quotes, Bookings: bookings, Stock: stock, Flights: flights, ShipmentFacts: shipmentFacts}
	dispatcher := &webhooks.Dispatcher{Events: store, Queue: queue, Subs: hooks, Render: renderer.Render, Receives: renderer.Receives, Readers: projector, Sealer: sealer, Guard: webhooks.Guard{}}

	// Metering on, with the service's default limits, so that responses
	// carry the RateLimit headers and GET /api/usage has counts.
	s, err := New(Options{MaxBodyBytes: maxBody, MaxUploadBytes: maxUpload, HashCost: bcrypt.MinCost, Metering: true,
		RateLimits: domain.RateLimits{PerMinute: 600, PerHour: 20000, PerDay: 200000}}, Deps{
		Log: log, Commands: cmds, Projector: projector, Maintenance: projections.NewMaintenance(ctx, projector, store, log), Identity: identity, Quotes: quotes, Flights: flights, Rates: rates,
		Bookings: bookings, Stock: stock, Reference: reference, Audit: audit, Usage: commands.NewUsageMeter(usageCounts, log), Webhooks: hooks, Dispatcher: dispatcher,
		Shipments: shipments, Documents: documents, ShipmentFacts: shipmentFacts, History: store, Files: files, Tokens: tokenAuthority, Responses: responses, Ready: func() bool { return connected },
	})
	if err != nil {
		t.Fatal(err)
	}
	// One instant for the rate limiter, so that no window ends mid-test.
	limiterNow := time.Now()
	s.limiter.now, s.tokenLimiter.now = func() time.Time { return limiterNow }, func() time.Time { return limiterNow }
	handler := http.Handler(s)

	// Organisations: acme, and one limited to a request a minute, hour and
	// day. Their writes are in the audit log.
	system := func() commands.Meta { return commands.NewMeta(domain.Principal{Subject: "system:test"}, "", "") } // a command id each
	for _, id := range []string{"acme", "throttled", "retired"} {
		if _, err := cmds.CreateOrganization(ctx, system(), domain.CreateOrganization{OrganizationID: id, Name: id, Role: domain.RoleForwarder}); err != nil {
			t.Fatal(err)
		}
	}
	// A client and a user of their own for the life cycle's cases.
	if _, err := cmds.CreateClient(ctx, system(), "retired-tms", "retired", "a long enough secret", false); err != nil {
		t.Fatal(err)
	}
	if _, err := cmds.CreateUser(ctx, system(), "ana@retired", "retired", "a long enough password", false); err != nil {
		t.Fatal(err)
	}
	limited, err := cmds.SetRateLimits(ctx, system(), "throttled", domain.RateLimits{PerMinute: 1, PerHour: 1, PerDay: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.WaitFor(ctx, limited.Sequence); err != nil {
		t.Fatal(err)
	}

	// Read models with a flight (partly booked), a rate card and
	// bookings, so that the reads answer with data.
	created := time.Date(2026, 6, 20, 9, 14, 3, 512000000, time.UTC)
	scheduled, err := domain.ScheduleFlight{Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400", Origin: "FRA", Destination: "JFK",
		DepartureDate: "2026-07-01", DepartureTime: "10:35", ArrivalDate: "2026-07-01", ArrivalTime: "13:05", AircraftType: "B77F", At: created}.Normalise("", builtinReference())
	if err != nil {
		t.Fatal(err)
	}
	const confirmedID, rejectedID = "9d3c5e2a-6b1f-5a4e-8c7d-2e1f0a9b8c7d", "5a1b2c3d-4e5f-5061-8273-8495a6b7c8d9"
	flightRec := domain.Record{Aggregate: domain.Aggregate{Type: "flight", ID: scheduled.FlightID}}
	s.flights.Apply(flightRec, scheduled)
	s.flights.Apply(flightRec, domain.CapacityReserved{FlightID: scheduled.FlightID, BookingID: confirmedID, WeightKg: 1250.5, VolumeM3: 2.16})
	cards, err := domain.DecideSetRateCard(domain.SetRateCard{Carrier: "LH", Origin: "FRA", Destination: "*", Currency: "EUR",
		MinimumCharge: 85, WeightBreaks: map[string]float64{"N": 4.1, "100": 2.9}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31", At: created}, builtinReference())
	if err != nil {
		t.Fatal(err)
	}
	s.rates.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "ratecard", ID: "LH-FRA-ANY"}}, cards[0])
	for _, e := range []struct {
		booking string
		event   domain.Event
	}{
		{confirmedID, domain.BookingRequested{BookingID: confirmedID, QuoteID: "3f2b8c1e-9a4d-5e7f-8b6a-1c2d3e4f5a6b", FlightID: scheduled.FlightID,
			OrganizationID: "acme", Pieces: 4, WeightKg: 1250.5, VolumeM3: 2.16, ChargeableWeightKg: 1250.5, AWBNumber: "020-12345675", RequestedAt: created}},
		{confirmedID, domain.BookingConfirmed{BookingID: confirmedID, FlightID: scheduled.FlightID, AWBNumber: "020-12345675", ConfirmedAt: created}},
		{rejectedID, domain.BookingRequested{BookingID: rejectedID, QuoteID: "0b7c3f55-2f0e-4d8a-8d5e-3f1b2a9c6e21", FlightID: scheduled.FlightID,
			OrganizationID: "acme", Pieces: 1, WeightKg: 10, ChargeableWeightKg: 10, RequestedAt: created}},
		{rejectedID, domain.BookingRejected{BookingID: rejectedID, Reason: domain.ReasonOptionExpired, RejectedAt: created}},
	} {
		s.bookings.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "booking", ID: e.booking}}, e.event)
	}
	// The quote of the rejected booking, at version 7.
	const pendingQuoteID = "0b7c3f55-2f0e-4d8a-8d5e-3f1b2a9c6e21"
	s.quotes.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "quote", ID: pendingQuoteID}, Sequence: 7}, domain.QuoteRequested{QuoteID: pendingQuoteID,
		OrganizationID: "acme", Origin: "FRA", Destination: "JFK", Pieces: 1, GrossWeightKg: 10, Commodity: domain.Commodity{Code: "GEN"}, RequestedAt: created})
	// Flights of LH in the event store, for manifests and offloads: one
	// flying, one cancelled.
	lhPrincipal := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	// Published now, they fly tomorrow: a timetable takes no flights long past.
	flightDay, nextDay := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly), time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
	manifestFlight, cancelledFlight := "LH400-"+flightDay, "LH402-"+flightDay
	published, err := cmds.ScheduleFlights(ctx, commands.NewMeta(lhPrincipal, "", ""), []domain.ScheduleFlight{
		{FlightNumber: "LH400", Origin: "FRA", Destination: "JFK", DepartureDate: flightDay, DepartureTime: "23:50",
			ArrivalDate: nextDay, ArrivalTime: "02:20", AircraftType: "B77F"},
		{FlightNumber: "LH402", Origin: "FRA", Destination: "JFK", DepartureDate: flightDay, DepartureTime: "13:40",
			ArrivalDate: flightDay, ArrivalTime: "16:15", AircraftType: "B77F"},
	})
	if err != nil || len(published) != 2 || published[0].State.ID != manifestFlight || published[1].State.ID != cancelledFlight {
		t.Fatalf("flights: %+v, %v", published, err)
	}
	cancelled, err := cmds.ChangeFlightStatus(ctx, commands.NewMeta(lhPrincipal, "", ""), cancelledFlight, domain.ChangeFlightStatus{Status: domain.FlightStatusCancelled})
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.WaitFor(ctx, cancelled.Sequence); err != nil {
		t.Fatal(err)
	}
	// Stock requests in each status, and the ledgers of the allocations.
	const pendingStockID, approvedStockID, rejectedStockID = "6f1d2c3b-4a5e-5f60-8172-93a4b5c6d7e8", "2b8e4d1a-7c3f-5e29-9a10-b4c5d6e7f801",
		"9a0b1c2d-3e4f-5061-8273-a4b5c6d7e8f9"
	const partialStockID = "4c5d6e7f-8091-5a2b-8c3d-4e5f60718293"
	approvedRange, partialRange := domain.AWBRange{First: 1000001, Count: 500}, domain.AWBRange{First: 2000000, Count: 50}
	for _, e := range []struct {
		agg   string
		id    string
		event domain.Event
	}{
		{"stockrequest", pendingStockID, domain.StockRequested{RequestID: pendingStockID, OrganizationID: "acme", AirlinePrefix: "020",
			RequestedStock: 500, ValidityPeriod: 12, Notes: "peak season", SubmittedAt: created}},
		{"stockrequest", approvedStockID, domain.StockRequested{RequestID: approvedStockID, OrganizationID: "acme", AirlinePrefix: "020",
			RequestedStock: 500, ValidityPeriod: 12, SubmittedAt: created}},
		{"stockrequest", approvedStockID, domain.StockReplied{RequestID: approvedStockID, OrganizationID: "acme", AirlinePrefix: "020",
			Status: domain.StockStatusApproved, AllocatedStock: 500, ValidFrom: "2026-06-20", ValidTo: "2026-12-31", Range: approvedRange, RepliedAt: created}},
		{"stockrequest", rejectedStockID, domain.StockRequested{RequestID: rejectedStockID, OrganizationID: "acme", AirlinePrefix: "176",
			RequestedStock: 10, ValidityPeriod: 1, SubmittedAt: created}},
		{"stockrequest", rejectedStockID, domain.StockReplied{RequestID: rejectedStockID, OrganizationID: "acme", AirlinePrefix: "176",
			Status: domain.StockStatusRejected, ValidFrom: "2026-06-20", ValidTo: "2026-06-20", RejectionReason: "credit limit", RepliedAt: created}},
		{"stockrequest", partialStockID, domain.StockRequested{RequestID: partialStockID, OrganizationID: "globex", AirlinePrefix: "176",
			RequestedStock: 100, ValidityPeriod: 6, SubmittedAt: created}},
		{"stockrequest", partialStockID, domain.StockReplied{RequestID: partialStockID, OrganizationID: "globex", AirlinePrefix: "176",
			Status: domain.StockStatusPartiallyApproved, AllocatedStock: 50, ValidFrom: "2020-01-01", ValidTo: "2099-12-31", Range: partialRange,
			Notes: "half now", RepliedAt: created}},
		{"awbledger", "acme-020", domain.StockAllocated{OrganizationID: "acme", Prefix: "020",
			Range: domain.LedgerRange{RequestID: approvedStockID, Range: approvedRange, ValidFrom: "2026-06-20", ValidTo: "2026-12-31"}}},
		{"awbledger", "acme-020", domain.AWBNumberUsed{OrganizationID: "acme", AWBNumber: domain.AWBNumber("020", approvedRange.First), Reference: confirmedID}},
		{"awbledger", "globex-176", domain.StockAllocated{OrganizationID: "globex", Prefix: "176",
			Range: domain.LedgerRange{RequestID: partialStockID, Range: partialRange, ValidFrom: "2020-01-01", ValidTo: "2099-12-31"}}},
	} {
		s.stock.Apply(domain.Record{Aggregate: domain.Aggregate{Type: e.agg, ID: e.id}}, e.event)
	}
	bearer := func(p domain.Principal) http.Header {
		tok, _, err := tokenAuthority.Issue(p, false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return http.Header{"Authorization": {"Bearer " + tok}}
	}
	forwarderPrincipal := domain.Principal{Subject: "client:acme-tms", OrganizationID: "acme", Role: domain.RoleForwarder}
	forwarder := bearer(forwarderPrincipal)
	airline := bearer(domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"})
	otherAirline := bearer(domain.Principal{Subject: "client:ek", OrganizationID: "ek", Role: domain.RoleAirline, AirlineCode: "EK", AWBPrefix: "176"})
	admin := bearer(domain.Principal{Subject: "client:ops", OrganizationID: "ops", Role: domain.RoleAdmin})
	otherForwarder := bearer(domain.Principal{Subject: "client:globex", OrganizationID: "globex", Role: domain.RoleForwarder})
	throttled := bearer(domain.Principal{Subject: "client:throttled", OrganizationID: "throttled", Role: domain.RoleForwarder})
	with := func(h http.Header, k, v string) http.Header {
		h = h.Clone()
		h.Set(k, v)
		return h
	}
	big := `{"x":"` + strings.Repeat("x", maxBody) + `"}`

	// Webhooks of acme: one with a delivery log, one to delete, one its
	// receiver disabled with a 410. The log has a delivery retried until
	// delivered, a dead one of a stock request acme filed (so that it can
	// be redelivered), a ping, and one of an event no subscriber may see.
	register := func(events ...string) string {
		t.Helper()
		res, err := cmds.RegisterWebhook(ctx, commands.NewMeta(forwarderPrincipal, "", ""), domain.RegisterWebhook{URL: "https://192.0.2.1/hooks",
			Events: events, SealedSecret: sealer.Seal(webhooks.NewSecret())})
		if err != nil {
			t.Fatal(err)
		}
		if err := projector.WaitFor(ctx, res.Sequence); err != nil {
			t.Fatal(err)
		}
		return res.State.ID
	}
	acmeHook, doomedHook, goneHook := register("quote.*", "stock.*"), register("*"), register("booking.confirmed")
	hooks.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "webhook", ID: goneHook}},
		domain.WebhookDisabled{WebhookID: goneHook, Reason: "the receiver answered 410 Gone", DisabledAt: created})
	requestedStock, validity := 10, 6
	filed, err := cmds.RequestStock(ctx, commands.NewMeta(forwarderPrincipal, "", ""), domain.RequestStock{AirlinePrefix: "020",
		RequestedStock: &requestedStock, ValidityPeriod: &validity}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.WaitFor(ctx, filed.Sequence); err != nil {
		t.Fatal(err)
	}
	const retriedDelivery, deadDelivery, pingDelivery, hiddenDelivery = "6a1f0c8e-2b7d-5e4a-9c3f-1d2e3f4a5b6c", "7b2a1d9f-3c8e-5f5b-8d4a-2e3f4a5b6c7d",
		"0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a", "1e2d3c4b-5a69-5788-9aab-bccddeeff001"
	for _, a := range []domain.WebhookDeliveryAttempted{
		{DeliveryID: retriedDelivery, EventName: "quote.created", EventID: "e1", EventSeq: 1, Attempt: 1, LatencyMs: 10003,
			Error: "dial tcp 192.0.2.1:443: i/o timeout", Outcome: domain.DeliveryRetrying, NextTryAt: created.Add(5 * time.Second), At: created},
		{DeliveryID: retriedDelivery, EventName: "quote.created", EventID: "e1", EventSeq: 1, Attempt: 2, StatusCode: 500, LatencyMs: 212,
			Error: "the receiver answered 500 Internal Server Error", Outcome: domain.DeliveryRetrying, NextTryAt: created.Add(5 * time.Minute), At: created.Add(6 * time.Second)},
		{DeliveryID: retriedDelivery, EventName: "quote.created", EventID: "e1", EventSeq: 1, Attempt: 3, StatusCode: 204, LatencyMs: 87,
			Outcome: domain.DeliveryDelivered, At: created.Add(5 * time.Minute)},
		{DeliveryID: deadDelivery, EventName: "stock.requested", EventID: "e2", EventSeq: filed.Sequence, Attempt: 10, StatusCode: 503, LatencyMs: 15000,
			Error: "the receiver answered 503 Service Unavailable", Outcome: domain.DeliveryDead, At: created.Add(time.Hour)},
		{DeliveryID: pingDelivery, EventName: "webhook.ping", Attempt: 1, StatusCode: 200, LatencyMs: 64, Outcome: domain.DeliveryDelivered, At: created},
		{DeliveryID: hiddenDelivery, EventName: "quote.created", EventID: "e3", EventSeq: limited.Sequence, Attempt: 1, StatusCode: 204,
			Outcome: domain.DeliveryDelivered, At: created},
	} {
		a.WebhookID = acmeHook
		hooks.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "delivery", ID: a.DeliveryID}}, a)
	}
	hookPath := "/api/webhooks/" + acmeHook

	// Shipments: the AWB of acme's confirmed booking (LH's prefix 020),
	// and one of LH's prefix that no booking carries.
	const bookedAWB, unbookedAWB, unknownAWB = "020-12345675", "020-10000012", "020-99999992"
	shipmentPath, unbookedPath := "/api/shipments/"+bookedAWB, "/api/shipments/"+unbookedAWB
	hoursAgo := func(h int) string {
		return time.Now().UTC().Add(-time.Duration(h) * time.Hour).Truncate(time.Second).Format(time.RFC3339)
	}
	statusEvent := func(fields string) string {
		return `{"eventDate":"` + hoursAgo(5) + `","location":"FRA"` + fields + `}`
	}

	mawbBody := func(awb string) string {
		return `{"awbNumber":"` + awb + `","origin":"fra","destination":"JFK","pieces":4,"weight":1250.5,"volume":2.16,"commodity":"gen",` +
			`"shipper":{"name":"ACME Consolidators GmbH","address":"Cargo City Süd, 60549 Frankfurt","contact":"+49 69 1234567"},"consignee":{"name":"ACME USA Inc."}}`
	}
	hawbBody := func(number, mawb string, pieces int, weight float64) string {
		return `{"hawbNumber":"` + number + `","mawbNumber":"` + mawb + `","pieces":` + strconv.Itoa(pieces) + `,"weight":` + strconv.FormatFloat(weight, 'f', -1, 64) +
			`,"shipper":{"name":"Shipper ` + number + `"},"consignee":{"name":"Consignee","contact":"receiving@example.com"}}`
	}

	placiBody := `{"awbNumber":"` + bookedAWB + `","origin":"fra","destination":"JFK","departureDate":"` + time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly) + `","cargoDescription":"Machine parts: gearboxes",` +
		`"shipperName":"ACME Consolidators GmbH","consigneeName":"ACME USA Inc.","pieces":4,"weight":1250.5}`
	csdBody := `{"awbNumber":"` + bookedAWB + `","screeningMethod":"XRY","screeningDate":"` + hoursAgo(2) + `","screeningResult":"pass",` +
		`"screeningMethods":["etd"],"regulatedEntity":{"category":"RA","identifier":"DE/RA/00123-01"}}`
	// e-DGDs: the goods as fields of a body for the booked AWB.
	dgdBody := func(goods string) string {
		return `{"awbNumber":"` + bookedAWB + `",` + goods + `,"shipperDeclaration":"I declare that the contents of this consignment are fully and accurately described. Signed: J. Miller"}`
	}
	lithium := dgdBody(`"unNumber":"un3480","properShippingName":"Lithium ion batteries","class":"9","quantity":35,"netWeight":35,"grossWeight":42.5,"packingInstructions":"965"`)
	manifestPath, cancelledManifestPath := "/api/flights/"+manifestFlight+"/manifests", "/api/flights/"+cancelledFlight+"/manifests"
	manifestBody := `{"flightId":"` + manifestFlight + `","awbNumbers":["` + bookedAWB + `"],"totalPieces":4,"totalWeight":1262,"totalVolume":2.2}`
	offloadBody := func(flight string) string {
		return `{"awbNumber":"` + bookedAWB + `","flightId":"` + flight + `","reason":"weight and balance","pieces":1,"weight":312.5,"notes":"one crate left at FRA"}`
	}

	// A document acme uploaded for the booked AWB, its file stored as the
	// upload handler stores one; and multipart bodies of uploads.
	docMeta := commands.NewMeta(forwarderPrincipal, "", "")
	pdf := "%PDF-1.7\n" + strings.Repeat("invoice ", 100)
	if _, err := files.Put(ctx, commands.DocumentID(docMeta), strings.NewReader(pdf)); err != nil {
		t.Fatal(err)
	}
	pdfSum := sha256.Sum256([]byte(pdf))
	uploaded, err := cmds.UploadDocument(ctx, docMeta, domain.DocumentUploaded{AWBNumber: bookedAWB, DocumentType: "invoice", FileName: "invoice.pdf",
		ContentType: "application/pdf", Size: int64(len(pdf)), SHA256: hex.EncodeToString(pdfSum[:])}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.WaitFor(ctx, uploaded.Sequence); err != nil {
		t.Fatal(err)
	}
	documentPath := "/api/documents/" + uploaded.State.DocumentID
	const boundary = "cargo-test-boundary"
	uploadType := "multipart/form-data; boundary=" + boundary
	// upload makes a multipart body of name, value pairs; "file" is the
	// file part.
	upload := func(parts ...string) string {
		var b strings.Builder
		mw := multipart.NewWriter(&b)
		mw.SetBoundary(boundary)
		for i := 0; i+1 < len(parts); i += 2 {
			if parts[i] != "file" {
				mw.WriteField(parts[i], parts[i+1])
				continue
			}
			fw, _ := mw.CreateFormFile("file", "scan.pdf")
			io.WriteString(fw, parts[i+1])
		}
		mw.Close()
		return b.String()
	}
	document := upload("awbNumber", bookedAWB, "documentType", "coo", "file", pdf)

	type liveTest = struct {
		name        string
		method      string
		path        string // as requested
		route       string // as documented
		contentType string
		body        string
		header      http.Header
		connected   bool
		status      int
		answer      http.Header // headers the answer must carry, if any
	}
	tests := []liveTest{
		{name: "health", method: "GET", path: "/healthz", route: "/healthz", status: 200},
		{name: "ready", method: "GET", path: "/readyz", route: "/readyz", connected: true, status: 200},
		{name: "not ready", method: "GET", path: "/readyz", route: "/readyz", status: 503},
		{name: "ready, to an admin", method: "GET", path: "/readyz", route: "/readyz", header: admin, connected: true, status: 200},
		{name: "not ready, to an admin", method: "GET", path: "/readyz", route: "/readyz", header: admin, status: 503},
		{name: "ready, with a token that is not valid", method: "GET", path: "/readyz", route: "/readyz", header: http.Header{"Authorization": {"Bearer x.y.z"}}, connected: true, status: 200},
		{name: "openapi", method: "GET", path: "/openapi.json", route: "/openapi.json", status: 200},
		{name: "error docs", method: "GET", path: "/docs/errors", route: "/docs/errors", status: 200,
			answer: http.Header{"Content-Type": {"text/markdown; charset=utf-8"}, "Vary": {"Accept"}}},
		{name: "error docs to a browser", method: "GET", path: "/docs/errors", route: "/docs/errors", status: 200,
			header: http.Header{"Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}},
			answer: http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Vary": {"Accept"}}},
		{name: "jwks", method: "GET", path: "/.well-known/jwks.json", route: "/.well-known/jwks.json", status: 200},
		// The open endpoints take no parameters, but refuse a query
		// string as every endpoint does.
		{name: "health with a malformed query", method: "GET", path: "/healthz?probe=%zz", route: "/healthz", status: 400},
		{name: "ready with a parameter longer than any", method: "GET", path: "/readyz?probe=" + strings.Repeat("x", 201), route: "/readyz", status: 400},
		{name: "openapi with a malformed query", method: "GET", path: "/openapi.json?a=1;b=2", route: "/openapi.json", status: 400},
		{name: "error docs with a malformed query", method: "GET", path: "/docs/errors?%", route: "/docs/errors", status: 400},
		{name: "jwks with a malformed query", method: "GET", path: "/.well-known/jwks.json?kid=%g1", route: "/.well-known/jwks.json", status: 400},
		{name: "jwks with a well-formed query", method: "GET", path: "/.well-known/jwks.json?kid=1", route: "/.well-known/jwks.json", status: 200},
		{name: "metrics", method: "GET", path: "/metrics", route: "/metrics", header: admin, status: 200},
		{name: "metrics without a token", method: "GET", path: "/metrics", route: "/metrics", status: 401},
		{name: "metrics for a forwarder", method: "GET", path: "/metrics", route: "/metrics", header: forwarder, status: 403},
		{name: "metrics with a malformed query", method: "GET", path: "/metrics?name[]=%zz", route: "/metrics", header: admin, status: 400},
		{name: "token without grant", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/json", body: `{}`, status: 400},
		{name: "token with unknown grant", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/json", body: `{"grantType":"refresh_token"}`, status: 400},
		{name: "token with mistyped field", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/json", body: `{"grantType":5}`, status: 400},
		{name: "token form without grant", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/x-www-form-urlencoded", body: `client_id=x`, status: 400},
		{name: "token with malformed Basic", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/json", body: `{"grantType":"client_credentials"}`,
			header: http.Header{"Authorization": {"Basic !!!"}}, status: 401},
		{name: "token too large", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/json", body: `{"grantType":"` + strings.Repeat("x", maxBody) + `"}`, status: 413},
		{name: "token as text", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "text/plain", body: `grantType=password`, status: 415},
		{name: "quotes without credential", method: "GET", path: "/api/quotes", route: "/api/quotes", status: 401},
		{name: "quote by id", method: "GET", path: "/api/quotes?id=" + pendingQuoteID, route: "/api/quotes", header: forwarder, status: 200,
			answer: http.Header{"ETag": {`"7"`}}},
		{name: "quote by id at its version", method: "GET", path: "/api/quotes?id=" + pendingQuoteID, route: "/api/quotes",
			header: with(forwarder, "If-None-Match", `"7"`), status: 304, answer: http.Header{"ETag": {`"7"`}}},
		{name: "quote by id waited for at its version, unchanged", method: "GET", path: "/api/quotes?id=" + pendingQuoteID, route: "/api/quotes",
			header: with(with(forwarder, "If-None-Match", `"7"`), "Prefer", "wait=1"), status: 304, answer: http.Header{"Preference-Applied": {"wait=1"}}},
		{name: "quote by id waited for from an older version", method: "GET", path: "/api/quotes?id=" + pendingQuoteID, route: "/api/quotes",
			header: with(with(forwarder, "If-None-Match", `"1"`), "Prefer", "wait=5"), status: 200, answer: http.Header{"Preference-Applied": nil, "ETag": {`"7"`}}},
		{name: "quote by id that the filters leave out", method: "GET", path: "/api/quotes?status=priced&id=" + pendingQuoteID, route: "/api/quotes",
			header: with(forwarder, "If-None-Match", `"7"`), status: 404, answer: http.Header{"ETag": nil}},
		// At once, not after the wait.
		{name: "quote by id that the filters leave out, waited for", method: "GET", path: "/api/quotes?status=priced&id=" + pendingQuoteID, route: "/api/quotes",
			header: with(with(forwarder, "If-None-Match", `"7"`), "Prefer", "wait=30"), status: 404, answer: http.Header{"ETag": nil, "Preference-Applied": nil}},
		{name: "quotes, with no ETag", method: "GET", path: "/api/quotes", route: "/api/quotes", header: forwarder, status: 200, answer: http.Header{"ETag": nil}},
		{name: "quotes with a body too large", method: "GET", path: "/api/quotes", route: "/api/quotes", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "RFQ without credential", method: "POST", path: "/api/quotes", route: "/api/quotes",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "quote with a bad token", method: "GET", path: "/api/quotes/q1", route: "/api/quotes/{id}",
			header: http.Header{"Authorization": {"Bearer not-a-jwt"}}, status: 401},
		{name: "organisations with Basic", method: "GET", path: "/api/admin/organizations", route: "/api/admin/organizations",
			header: http.Header{"Authorization": {"Basic YTpi"}}, status: 401},
		{name: "revoke without credential", method: "DELETE", path: "/api/admin/api-keys/k1", route: "/api/admin/api-keys/{id}", status: 401},
		{name: "API keys of an organisation", method: "GET", path: "/api/admin/api-keys?organizationId=acme", route: "/api/admin/api-keys", header: admin, status: 200},
		{name: "API key with an Idempotency-Key", method: "POST", path: "/api/admin/api-keys", route: "/api/admin/api-keys", header: with(admin, "Idempotency-Key", "key-1"),
			contentType: "application/json", body: `{"organizationId":"acme","name":"TMS"}`, status: 201},
		{name: "API key again", method: "POST", path: "/api/admin/api-keys", route: "/api/admin/api-keys", header: with(admin, "Idempotency-Key", "key-1"),
			contentType: "application/json", body: `{"organizationId":"acme","name":"TMS"}`, status: 201, answer: http.Header{"Idempotent-Replayed": {"true"}}},
		{name: "another API key with the key", method: "POST", path: "/api/admin/api-keys", route: "/api/admin/api-keys", header: with(admin, "Idempotency-Key", "key-1"),
			contentType: "application/json", body: `{"organizationId":"acme","name":"ERP"}`, status: 422},
		{name: "client with an Idempotency-Key", method: "POST", path: "/api/admin/clients", route: "/api/admin/clients", header: with(admin, "Idempotency-Key", "client-1"),
			contentType: "application/json", body: `{"organizationId":"acme","clientId":"tms-idempotent"}`, status: 201},
		{name: "another client with the key", method: "POST", path: "/api/admin/clients", route: "/api/admin/clients", header: with(admin, "Idempotency-Key", "client-1"),
			contentType: "application/json", body: `{"organizationId":"acme","clientId":"erp-idempotent"}`, status: 422},
		{name: "a client's new secret with the key of another request", method: "POST", path: "/api/admin/clients/tms-idempotent/secret", route: "/api/admin/clients/{id}/secret",
			header: with(admin, "Idempotency-Key", "client-1"), status: 422},
		{name: "API keys of an organisation id that is none", method: "GET", path: "/api/admin/api-keys?organizationId=acme%2Fx", route: "/api/admin/api-keys",
			header: admin, status: 400},
		{name: "rebuild before any", method: "GET", path: "/api/admin/rebuild", route: "/api/admin/rebuild", header: admin, status: 404},
		{name: "rebuild by a forwarder", method: "POST", path: "/api/admin/rebuild", route: "/api/admin/rebuild", header: forwarder, status: 403},
		{name: "verify started", method: "POST", path: "/api/admin/verify", route: "/api/admin/verify", header: admin, status: 202},
		{name: "verify followed", method: "GET", path: "/api/admin/verify", route: "/api/admin/verify", header: admin, status: 200},

		{name: "flights without credential", method: "GET", path: "/api/flights", route: "/api/flights", status: 401},
		{name: "flights", method: "GET", path: "/api/flights", route: "/api/flights", header: forwarder, status: 200},
		{name: "flights filtered", method: "GET", path: "/api/flights?origin=fra&destination=JFK&date=2026-07-01&status=scheduled&flightNumber=lh8400&aircraftType=b77f&page=1&limit=5",
			route: "/api/flights", header: with(forwarder, "Cargo-Sequence", "0"), status: 200},
		{name: "flights on a day without flights", method: "GET", path: "/api/flights?date=2026-07-02", route: "/api/flights", header: airline, status: 200},
		{name: "flights in an unknown status", method: "GET", path: "/api/flights?status=boarding", route: "/api/flights", header: forwarder, status: 400},
		{name: "flights of a flight number of five digits", method: "GET", path: "/api/flights?flightNumber=LH84000", route: "/api/flights", header: forwarder, status: 400},
		{name: "flights of an aircraft type that is none", method: "GET", path: "/api/flights?aircraftType=B77F-ER", route: "/api/flights", header: forwarder, status: 400},
		{name: "flights of a lower-case flight number with a space", method: "GET", path: "/api/flights?flightNumber=lh%208400", route: "/api/flights", header: forwarder, status: 200},
		{name: "flights with a bad date and limit", method: "GET", path: "/api/flights?date=1.7.2026&limit=500", route: "/api/flights", header: forwarder, status: 400},
		{name: "flights with a bad Cargo-Sequence", method: "GET", path: "/api/flights", route: "/api/flights", header: with(forwarder, "Cargo-Sequence", "x"), status: 400},
		{name: "publish without credential", method: "POST", path: "/api/flights", route: "/api/flights", contentType: "application/json", body: `{}`, status: 401},
		{name: "publish as a forwarder", method: "POST", path: "/api/flights", route: "/api/flights", header: forwarder,
			contentType: "application/json", body: `{}`, status: 403},
		{name: "publish as text", method: "POST", path: "/api/flights", route: "/api/flights", header: airline,
			contentType: "text/plain", body: `{}`, status: 415},
		{name: "publish nothing", method: "POST", path: "/api/flights", route: "/api/flights", header: airline,
			contentType: "application/json", body: `[]`, status: 400},
		{name: "publish malformed", method: "POST", path: "/api/flights", route: "/api/flights", header: airline,
			contentType: "application/json", body: `{"flightNumber":`, status: 400},
		{name: "publish a mistyped field", method: "POST", path: "/api/flights", route: "/api/flights", header: airline,
			contentType: "application/json", body: `[{"capacityKg":"lots"}]`, status: 400},
		{name: "publish too much", method: "POST", path: "/api/flights", route: "/api/flights", header: airline,
			contentType: "application/json", body: big, status: 413},
		{name: "publish with a bad Idempotency-Key", method: "POST", path: "/api/flights", route: "/api/flights", header: with(airline, "Idempotency-Key", "a b"),
			contentType: "application/json", body: `{}`, status: 400},
		{name: "flight", method: "GET", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", header: forwarder, status: 200},
		// A body the operation does not read, over the limit: 413 as documented.
		{name: "flight with a body too large", method: "GET", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "flight without credential", method: "GET", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", status: 401},
		{name: "unknown flight", method: "GET", path: "/api/flights/LH1-2020-01-01", route: "/api/flights/{id}", header: forwarder, status: 404},
		{name: "change without credential", method: "PATCH", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}",
			contentType: "application/json", body: `{"status":"delayed"}`, status: 401},
		{name: "change as a forwarder", method: "PATCH", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", header: forwarder,
			contentType: "application/json", body: `{"status":"delayed"}`, status: 403},
		{name: "change as text", method: "PATCH", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", header: airline,
			contentType: "text/plain", body: `delayed`, status: 415},
		{name: "change malformed", method: "PATCH", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", header: airline,
			contentType: "application/json", body: `"delayed"`, status: 400},
		{name: "change too much", method: "PATCH", path: "/api/flights/LH8400-2026-07-01", route: "/api/flights/{id}", header: airline,
			contentType: "application/json", body: big, status: 413},
		{name: "capacity", method: "GET", path: "/api/capacity", route: "/api/capacity", header: forwarder, status: 200},
		{name: "capacity filtered", method: "GET", path: "/api/capacity?flightNumber=LH8400&origin=FRA&destination=jfk&date=2026-07-01&aircraftType=B77F&status=scheduled",
			route: "/api/capacity", header: admin, status: 200},
		{name: "capacity with a bad origin", method: "GET", path: "/api/capacity?origin=FRANKFURT", route: "/api/capacity", header: forwarder, status: 400},
		{name: "capacity without credential", method: "GET", path: "/api/capacity", route: "/api/capacity", status: 401},
		{name: "rates of an airline", method: "GET", path: "/api/rates", route: "/api/rates", header: airline, status: 200},
		{name: "rates of another airline", method: "GET", path: "/api/rates", route: "/api/rates", header: otherAirline, status: 200},
		{name: "all rates", method: "GET", path: "/api/rates", route: "/api/rates", header: admin, status: 200},
		{name: "rates for a forwarder", method: "GET", path: "/api/rates", route: "/api/rates", header: forwarder, status: 403},
		{name: "rates without credential", method: "GET", path: "/api/rates", route: "/api/rates", status: 401},
		{name: "rate card without credential", method: "PUT", path: "/api/rates/FRA/JFK", route: "/api/rates/{origin}/{destination}",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "rate card of a forwarder", method: "PUT", path: "/api/rates/FRA/JFK", route: "/api/rates/{origin}/{destination}", header: forwarder,
			contentType: "application/json", body: `{}`, status: 403},
		{name: "rate card as text", method: "PUT", path: "/api/rates/FRA/*", route: "/api/rates/{origin}/{destination}", header: airline,
			contentType: "text/plain", body: `{}`, status: 415},
		{name: "rate card mistyped", method: "PUT", path: "/api/rates/FRA/JFK", route: "/api/rates/{origin}/{destination}", header: airline,
			contentType: "application/json", body: `{"weightBreaks":{"N":"cheap"}}`, status: 400},
		{name: "rate card too large", method: "PUT", path: "/api/rates/FRA/JFK", route: "/api/rates/{origin}/{destination}", header: airline,
			contentType: "application/json", body: big, status: 413},
		{name: "book without credential", method: "POST", path: "/api/bookings", route: "/api/bookings", contentType: "application/json", body: `{}`, status: 401},
		{name: "book as an airline", method: "POST", path: "/api/bookings", route: "/api/bookings", header: airline,
			contentType: "application/json", body: `{}`, status: 403},
		{name: "book an unknown flight", method: "POST", path: "/api/bookings", route: "/api/bookings", header: forwarder,
			contentType: "application/json", body: `{"quoteId":"q1","flightId":"LH1-2020-01-01"}`, status: 400},
		{name: "book as text", method: "POST", path: "/api/bookings", route: "/api/bookings", header: forwarder,
			contentType: "text/plain", body: `{}`, status: 415},
		{name: "book too much", method: "POST", path: "/api/bookings", route: "/api/bookings", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "book with a bad Idempotency-Key", method: "POST", path: "/api/bookings", route: "/api/bookings", header: with(forwarder, "Idempotency-Key", "ä"),
			contentType: "application/json", body: `{}`, status: 400},
		{name: "bookings", method: "GET", path: "/api/bookings", route: "/api/bookings", header: forwarder, status: 200},
		{name: "bookings filtered", method: "GET", path: "/api/bookings?status=rejected&flightId=LH8400-2026-07-01&quoteId=0b7c3f55-2f0e-4d8a-8d5e-3f1b2a9c6e21&page=1&limit=10",
			route: "/api/bookings", header: forwarder, status: 200},
		{name: "bookings of the carrier", method: "GET", path: "/api/bookings", route: "/api/bookings", header: airline, status: 200},
		{name: "bookings in an unknown status", method: "GET", path: "/api/bookings?status=booked", route: "/api/bookings", header: forwarder, status: 400},
		{name: "bookings of a flight id that is none", method: "GET", path: "/api/bookings?flightId=LH8400.2026", route: "/api/bookings", header: forwarder, status: 400},
		{name: "bookings of an id that is no flight's", method: "GET", path: "/api/bookings?flightId=garbage", route: "/api/bookings", header: forwarder, status: 400},
		{name: "bookings of a flight on no date", method: "GET", path: "/api/bookings?flightId=LH8400-2026-02-30", route: "/api/bookings", header: forwarder, status: 400},
		{name: "bookings of a quote id that is none", method: "GET", path: "/api/bookings?quoteId=" + strings.Repeat("q", 65), route: "/api/bookings", header: forwarder, status: 400},
		{name: "bookings without credential", method: "GET", path: "/api/bookings", route: "/api/bookings", status: 401},
		{name: "confirmed booking", method: "GET", path: "/api/bookings/" + confirmedID, route: "/api/bookings/{id}", header: forwarder, status: 200},
		{name: "rejected booking", method: "GET", path: "/api/bookings/" + rejectedID, route: "/api/bookings/{id}", header: admin, status: 200},
		{name: "confirmed booking waited for from an older version", method: "GET", path: "/api/bookings/" + confirmedID, route: "/api/bookings/{id}",
			header: with(with(forwarder, "If-None-Match", `"1"`), "Prefer", "wait=5"), status: 200, answer: http.Header{"Preference-Applied": nil}},
		{name: "confirmed booking waited for at its version, unchanged", method: "GET", path: "/api/bookings/" + confirmedID, route: "/api/bookings/{id}",
			header: with(with(forwarder, "If-None-Match", `"0"`), "Prefer", "wait=1"), status: 304, answer: http.Header{"Preference-Applied": {"wait=1"}}},
		{name: "confirmed booking at its version with a wait that is no number", method: "GET", path: "/api/bookings/" + confirmedID, route: "/api/bookings/{id}",
			header: with(with(forwarder, "If-None-Match", `"0"`), "Prefer", "wait=soon"), status: 304, answer: http.Header{"Preference-Applied": nil}},
		{name: "booking of another airline's flight", method: "GET", path: "/api/bookings/" + confirmedID, route: "/api/bookings/{id}", header: otherAirline, status: 404},
		{name: "booking without credential", method: "GET", path: "/api/bookings/" + confirmedID, route: "/api/bookings/{id}", status: 401},
		{name: "cancel without credential", method: "POST", path: "/api/bookings/" + confirmedID + "/cancel", route: "/api/bookings/{id}/cancel", status: 401},
		{name: "cancel an impossible id", method: "POST", path: "/api/bookings/-x-/cancel", route: "/api/bookings/{id}/cancel", header: forwarder, status: 404},
		{name: "cancel with a body too large", method: "POST", path: "/api/bookings/" + confirmedID + "/cancel", route: "/api/bookings/{id}/cancel", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "cancel with a bad Idempotency-Key", method: "POST", path: "/api/bookings/" + confirmedID + "/cancel", route: "/api/bookings/{id}/cancel",
			header: with(forwarder, "Idempotency-Key", "a b"), status: 400},

		{name: "stock of a forwarder", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock", header: forwarder, status: 200},
		{name: "stock of another forwarder", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock", header: otherForwarder, status: 200},
		{name: "stock of an airline's prefix", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock", header: airline, status: 200},
		{name: "all stock", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock", header: admin, status: 200},
		{name: "stock of nobody", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock",
			header: bearer(domain.Principal{Subject: "client:x", OrganizationID: "x", Role: domain.RoleForwarder}), status: 200},
		{name: "stock without credential", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock", status: 401},
		{name: "stock with a bad Cargo-Sequence", method: "GET", path: "/api/awb-stock", route: "/api/awb-stock", header: with(forwarder, "Cargo-Sequence", "x"), status: 400},
		{name: "stock request without credential", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "stock request of an airline", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: airline,
			contentType: "application/json", body: `{"airlinePrefix":"020","requestedStock":10,"validityPeriod":6}`, status: 403},
		{name: "stock request for another organisation", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: forwarder,
			contentType: "application/json", body: `{"organizationId":"globex","airlinePrefix":"020","requestedStock":10,"validityPeriod":6}`, status: 403},
		{name: "stock request as text", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: forwarder,
			contentType: "text/plain", body: `{}`, status: 415},
		{name: "stock request malformed", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: forwarder,
			contentType: "application/json", body: `{"airlinePrefix":`, status: 400},
		{name: "stock request mistyped", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: forwarder,
			contentType: "application/json", body: `{"requestedStock":"lots"}`, status: 400},
		{name: "stock request too large", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "stock request with a bad Idempotency-Key", method: "POST", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests",
			header: with(forwarder, "Idempotency-Key", "a b"), contentType: "application/json", body: `{}`, status: 400},
		{name: "stock requests", method: "GET", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: forwarder, status: 200},
		{name: "stock requests filtered", method: "GET", path: "/api/awb-stock/requests?status=approved&airlinePrefix=020&page=1&limit=10",
			route: "/api/awb-stock/requests", header: forwarder, status: 200},
		{name: "stock requests of an airline", method: "GET", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: otherAirline, status: 200},
		{name: "all stock requests", method: "GET", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", header: admin, status: 200},
		{name: "stock requests matching nothing", method: "GET", path: "/api/awb-stock/requests?status=pending&airlinePrefix=999",
			route: "/api/awb-stock/requests", header: forwarder, status: 200},
		{name: "stock requests of a prefix of two digits", method: "GET", path: "/api/awb-stock/requests?airlinePrefix=02", route: "/api/awb-stock/requests",
			header: forwarder, status: 400},
		{name: "stock requests in an unknown status", method: "GET", path: "/api/awb-stock/requests?status=processing", route: "/api/awb-stock/requests",
			header: forwarder, status: 400},
		{name: "stock requests with a bad page", method: "GET", path: "/api/awb-stock/requests?page=0&limit=101", route: "/api/awb-stock/requests",
			header: forwarder, status: 400},
		{name: "stock requests without credential", method: "GET", path: "/api/awb-stock/requests", route: "/api/awb-stock/requests", status: 401},
		{name: "pending stock request", method: "GET", path: "/api/awb-stock/requests/" + pendingStockID, route: "/api/awb-stock/requests/{id}",
			header: forwarder, status: 200},
		{name: "approved stock request", method: "GET", path: "/api/awb-stock/requests/" + approvedStockID, route: "/api/awb-stock/requests/{id}",
			header: airline, status: 200},
		{name: "rejected stock request", method: "GET", path: "/api/awb-stock/requests/" + rejectedStockID, route: "/api/awb-stock/requests/{id}",
			header: admin, status: 200},
		{name: "partially approved stock request", method: "GET", path: "/api/awb-stock/requests/" + partialStockID, route: "/api/awb-stock/requests/{id}",
			header: otherForwarder, status: 200},
		{name: "stock request of another forwarder", method: "GET", path: "/api/awb-stock/requests/" + partialStockID, route: "/api/awb-stock/requests/{id}",
			header: forwarder, status: 404},
		{name: "stock request of another airline's prefix", method: "GET", path: "/api/awb-stock/requests/" + approvedStockID, route: "/api/awb-stock/requests/{id}",
			header: otherAirline, status: 404},
		{name: "unknown stock request", method: "GET", path: "/api/awb-stock/requests/nope", route: "/api/awb-stock/requests/{id}", header: admin, status: 404},
		{name: "stock request without credential", method: "GET", path: "/api/awb-stock/requests/" + pendingStockID, route: "/api/awb-stock/requests/{id}", status: 401},
		{name: "reply without credential", method: "PUT", path: "/api/awb-stock/reply/" + pendingStockID, route: "/api/awb-stock/reply/{requestId}",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "reply as text", method: "PUT", path: "/api/awb-stock/reply/" + pendingStockID, route: "/api/awb-stock/reply/{requestId}", header: airline,
			contentType: "text/plain", body: `approved`, status: 415},
		{name: "reply malformed", method: "PUT", path: "/api/awb-stock/reply/" + pendingStockID, route: "/api/awb-stock/reply/{requestId}", header: airline,
			contentType: "application/json", body: `["approved"]`, status: 400},
		{name: "reply mistyped", method: "PUT", path: "/api/awb-stock/reply/" + pendingStockID, route: "/api/awb-stock/reply/{requestId}", header: airline,
			contentType: "application/json", body: `{"status":"approved","allocatedStock":"all"}`, status: 400},
		{name: "reply too large", method: "PUT", path: "/api/awb-stock/reply/" + pendingStockID, route: "/api/awb-stock/reply/{requestId}", header: airline,
			contentType: "application/json", body: big, status: 413},
		{name: "reply to an impossible id", method: "PUT", path: "/api/awb-stock/reply/-x-", route: "/api/awb-stock/reply/{requestId}", header: airline,
			contentType: "application/json", body: `{"status":"approved","allocatedStock":1,"validFrom":"2026-07-01","validTo":"2026-12-31"}`, status: 404},

		{name: "airports", method: "GET", path: "/api/airports", route: "/api/airports", header: forwarder, status: 200},
		{name: "airports, first hundred", method: "GET", path: "/api/airports?limit=100", route: "/api/airports", header: airline, status: 200},
		{name: "airports, second hundred", method: "GET", path: "/api/airports?page=2&limit=100", route: "/api/airports", header: airline, status: 200},
		{name: "airports, third hundred", method: "GET", path: "/api/airports?page=3&limit=100", route: "/api/airports", header: airline, status: 200},
		{name: "airports filtered", method: "GET", path: "/api/airports?iataCode=fra&icaoCode=eddf&name=FRANK&city=frankfurt&country=de&page=1&limit=5",
			route: "/api/airports", header: with(forwarder, "Cargo-Sequence", "0"), status: 200},
		{name: "airports of a country", method: "GET", path: "/api/airports?country=US&limit=100", route: "/api/airports", header: admin, status: 200},
		{name: "airports of a city", method: "GET", path: "/api/airports?city=new%20york", route: "/api/airports", header: forwarder, status: 200},
		{name: "airports matching nothing", method: "GET", path: "/api/airports?icaoCode=XXXX", route: "/api/airports", header: forwarder, status: 200},
		{name: "airports past the last page", method: "GET", path: "/api/airports?page=99", route: "/api/airports", header: forwarder, status: 200},
		{name: "airports with a bad limit", method: "GET", path: "/api/airports?limit=101", route: "/api/airports", header: forwarder, status: 400},
		// A code filter of a shape no code has, and a name longer than
		// any, are refused rather than matching nothing.
		{name: "airports by a code of four letters", method: "GET", path: "/api/airports?iataCode=FRAN", route: "/api/airports", header: forwarder, status: 400},
		{name: "airports by an ICAO code of three letters", method: "GET", path: "/api/airports?icaoCode=EDD", route: "/api/airports", header: forwarder, status: 400},
		{name: "airports of a country named in full", method: "GET", path: "/api/airports?country=Germany", route: "/api/airports", header: forwarder, status: 400},
		{name: "airports by a name longer than any", method: "GET", path: "/api/airports?name=" + strings.Repeat("n", 201), route: "/api/airports", header: forwarder, status: 400},
		{name: "airports with a bad Cargo-Sequence", method: "GET", path: "/api/airports", route: "/api/airports", header: with(forwarder, "Cargo-Sequence", "x"), status: 400},
		{name: "airports without credential", method: "GET", path: "/api/airports", route: "/api/airports", status: 401},
		{name: "airlines", method: "GET", path: "/api/airlines", route: "/api/airlines", header: forwarder, status: 200},
		{name: "airlines, first hundred", method: "GET", path: "/api/airlines?limit=100", route: "/api/airlines", header: otherAirline, status: 200},
		{name: "airlines, second hundred", method: "GET", path: "/api/airlines?page=2&limit=100", route: "/api/airlines", header: otherAirline, status: 200},
		{name: "airlines filtered", method: "GET", path: "/api/airlines?iataCode=lh&icaoCode=gec&name=cargo&country=de&alliance=star%20alliance",
			route: "/api/airlines", header: forwarder, status: 200},
		{name: "airlines of an alliance", method: "GET", path: "/api/airlines?alliance=SkyTeam&limit=100", route: "/api/airlines", header: admin, status: 200},
		{name: "airlines of no alliance", method: "GET", path: "/api/airlines?alliance=none", route: "/api/airlines", header: forwarder, status: 200},
		{name: "airlines with a bad page", method: "GET", path: "/api/airlines?page=0", route: "/api/airlines", header: forwarder, status: 400},
		{name: "airlines by an ICAO code as IATA code", method: "GET", path: "/api/airlines?iataCode=DLH", route: "/api/airlines", header: forwarder, status: 400},
		{name: "airlines by an IATA code as ICAO code", method: "GET", path: "/api/airlines?icaoCode=LH", route: "/api/airlines", header: forwarder, status: 400},
		{name: "airlines without credential", method: "GET", path: "/api/airlines", route: "/api/airlines", status: 401},
		{name: "commodities", method: "GET", path: "/api/commodities", route: "/api/commodities", header: forwarder, status: 200},
		{name: "commodities, first hundred", method: "GET", path: "/api/commodities?limit=100", route: "/api/commodities", header: airline, status: 200},
		{name: "dangerous goods under an HS chapter", method: "GET", path: "/api/commodities?dangerousGoods=true&hsCode=85",
			route: "/api/commodities", header: forwarder, status: 200},
		{name: "other goods", method: "GET", path: "/api/commodities?dangerousGoods=false&limit=100", route: "/api/commodities", header: forwarder, status: 200},
		{name: "commodity by code", method: "GET", path: "/api/commodities?code=rli&name=BATTER", route: "/api/commodities", header: admin, status: 200},
		{name: "commodities with a bad flag", method: "GET", path: "/api/commodities?dangerousGoods=maybe", route: "/api/commodities", header: forwarder, status: 400},
		{name: "commodities under an HS code of letters", method: "GET", path: "/api/commodities?hsCode=85a", route: "/api/commodities", header: forwarder, status: 400},
		{name: "commodities by a code of words", method: "GET", path: "/api/commodities?code=lithium%20batteries", route: "/api/commodities", header: forwarder, status: 400},
		{name: "commodities without credential", method: "GET", path: "/api/commodities", route: "/api/commodities", status: 401},
		{name: "import without credential", method: "POST", path: "/api/admin/reference/airports", route: "/api/admin/reference/{kind}",
			contentType: "text/csv", body: "icao,iata,name,city,country,tz\n", status: 401},
		{name: "import by a forwarder", method: "POST", path: "/api/admin/reference/airports", route: "/api/admin/reference/{kind}", header: forwarder,
			contentType: "text/csv", body: "icao,iata,name,city,country,tz\n", status: 403},
		{name: "import by an airline", method: "POST", path: "/api/admin/reference/airlines", route: "/api/admin/reference/{kind}", header: airline,
			contentType: "text/csv", body: "iataCode,name\nLH,Lufthansa Cargo\n", status: 403},
		{name: "import of an unknown kind", method: "POST", path: "/api/admin/reference/aircraft", route: "/api/admin/reference/{kind}", header: admin,
			contentType: "text/csv", body: "code,name\n", status: 400},
		{name: "import from line 0", method: "POST", path: "/api/admin/reference/airports?firstLine=0", route: "/api/admin/reference/{kind}", header: admin,
			contentType: "text/csv", body: "icao,iata,name,city,country,tz\n", status: 400},
		{name: "import in a format of another kind", method: "POST", path: "/api/admin/reference/airports?format=optd", route: "/api/admin/reference/{kind}",
			header: admin, contentType: "text/plain", body: "icao,iata,name,city,country,tz\n", status: 400},
		{name: "import in an unknown format", method: "POST", path: "/api/admin/reference/commodities?format=xlsx", route: "/api/admin/reference/{kind}",
			header: admin, contentType: "application/octet-stream", body: "code,name,hsCode,dangerousGoods,unNumber\n", status: 400},
		{name: "import of an unrecognised file", method: "POST", path: "/api/admin/reference/airlines", route: "/api/admin/reference/{kind}", header: admin,
			contentType: "text/csv", body: "carrier;designator\n", status: 400},
		{name: "import with a bad header", method: "POST", path: "/api/admin/reference/airports?format=airportsdata&source=airports.csv",
			route: "/api/admin/reference/{kind}", header: admin, contentType: "text/csv", body: "icao,iata,name\nEDDF,FRA,Frankfurt\n", status: 400},
		{name: "import of an empty chunk", method: "POST", path: "/api/admin/reference/commodities?format=hs-codes&firstLine=5001",
			route: "/api/admin/reference/{kind}", header: admin, contentType: "text/csv", status: 400},
		{name: "import too large", method: "POST", path: "/api/admin/reference/airports", route: "/api/admin/reference/{kind}", header: admin,
			contentType: "text/csv", body: "icao,iata,name,city,country,tz\n" + strings.Repeat("EDDF,FRA,Frankfurt Airport,Frankfurt,DE,Europe/Berlin\n", 30), status: 413},

		{name: "shipment before its first status event", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: forwarder, status: 200},
		{name: "timeline before the first status event: the setup's document", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: forwarder, status: 200},
		{name: "status event", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: with(airline, "Idempotency-Key", "status-1"),
			contentType: "application/json", body: statusEvent(`,"eventType":"rcs","pieces":4,"weight":1250.5,"notes":"4 crates"`), status: 201},
		{name: "status event again", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: with(airline, "Idempotency-Key", "status-1"),
			contentType: "application/json", body: statusEvent(`,"eventType":"rcs","pieces":4,"weight":1250.5,"notes":"4 crates"`), status: 201},
		{name: "status event with the key of another request", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events",
			header: with(airline, "Idempotency-Key", "status-1"), contentType: "application/json", body: statusEvent(`,"eventType":"MAN"`), status: 422},
		{name: "offload", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{"eventType":"DIS/OFLD","eventDate":"` + hoursAgo(2) + `","location":"fra","pieces":1,"notes":"one crate short"}`, status: 201},
		{name: "discrepancy with its own field", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: statusEvent(`,"eventType":"dis","discrepancyCode":"msca","weight":0`), status: 201},
		{name: "status event without a dash in the AWB", method: "POST", path: "/api/shipments/02012345675/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{"eventType":"DEP","eventDate":"` + time.Now().UTC().Add(10*time.Minute).Format(time.RFC3339) + `","location":"FRA"}`, status: 201},
		{name: "status event of an AWB without a booking", method: "POST", path: unbookedPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: statusEvent(`,"eventType":"FOH","pieces":2`), status: 201},
		{name: "status event with everything wrong", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{"eventType":"XYZ","eventDate":"yesterday","location":"FRANKFURT","pieces":-1,"weight":1e9}`, status: 400},
		{name: "status event without a discrepancy code", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: statusEvent(`,"eventType":"DIS"`), status: 400},
		{name: "status event with a discrepancy code", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: statusEvent(`,"eventType":"DEP","discrepancyCode":"OFLD"`), status: 400},
		{name: "status event in the future", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{"eventType":"ARR","eventDate":"` + time.Now().UTC().Add(time.Hour).Format(time.RFC3339) + `","location":"JFK"}`, status: 400},
		{name: "status event at an unknown airport", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{"eventType":"ARR","eventDate":"` + hoursAgo(1) + `","location":"QQQ"}`, status: 400},
		{name: "status event with nothing", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{}`, status: 400},
		{name: "status event of a bad check digit", method: "POST", path: "/api/shipments/020-12345670/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: statusEvent(`,"eventType":"RCS"`), status: 400},
		{name: "status event by a forwarder", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: forwarder,
			contentType: "application/json", body: statusEvent(`,"eventType":"RCS"`), status: 403},
		{name: "status event by another airline", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: otherAirline,
			contentType: "application/json", body: statusEvent(`,"eventType":"RCS"`), status: 403},
		{name: "status event by an admin", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: admin,
			contentType: "application/json", body: statusEvent(`,"eventType":"RCS"`), status: 403},
		{name: "status event as text", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "text/plain", body: `RCS`, status: 415},
		{name: "status event malformed", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: `{"eventType":`, status: 400},
		{name: "status event mistyped", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: statusEvent(`,"eventType":"RCS","pieces":"four"`), status: 400},
		{name: "status event too large", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: airline,
			contentType: "application/json", body: big, status: 413},
		{name: "status event with a bad Idempotency-Key", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events",
			header: with(airline, "Idempotency-Key", "a b"), contentType: "application/json", body: `{}`, status: 400},
		{name: "status event without credential", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "status events", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: forwarder, status: 200},
		{name: "status events of the airline", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events",
			header: with(airline, "Cargo-Sequence", "0"), status: 200},
		{name: "status events for an admin", method: "GET", path: "/api/shipments/02012345675/events", route: "/api/shipments/{awb}/events", header: admin, status: 200},
		{name: "offloads", method: "GET", path: shipmentPath + "/events?eventType=dis/ofld&from=2026-01-01&to=2999-01-01T00:00:00Z", route: "/api/shipments/{awb}/events",
			header: forwarder, status: 200},
		{name: "status events matching nothing", method: "GET", path: shipmentPath + "/events?eventType=DLV", route: "/api/shipments/{awb}/events", header: forwarder, status: 200},
		{name: "status events with a bad from", method: "GET", path: shipmentPath + "/events?from=yesterday&to=later", route: "/api/shipments/{awb}/events",
			header: forwarder, status: 400},
		{name: "status events of a bad AWB", method: "GET", path: "/api/shipments/20-1234/events", route: "/api/shipments/{awb}/events", header: forwarder, status: 400},
		{name: "status events of an AWB without a booking", method: "GET", path: unbookedPath + "/events", route: "/api/shipments/{awb}/events", header: airline, status: 200},
		{name: "status events of another forwarder's shipment", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: otherForwarder, status: 404},
		{name: "status events of another airline's shipment", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: otherAirline, status: 404},
		{name: "status events of an unknown AWB", method: "GET", path: "/api/shipments/" + unknownAWB + "/events", route: "/api/shipments/{awb}/events", header: admin, status: 404},
		{name: "status events with a bad Cargo-Sequence", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events",
			header: with(forwarder, "Cargo-Sequence", "x"), status: 400},
		{name: "status events without credential", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", status: 401},
		{name: "shipment", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: forwarder, status: 200},
		{name: "shipment of the airline", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: with(airline, "Cargo-Sequence", "0"), status: 200},
		{name: "shipment without a booking", method: "GET", path: unbookedPath, route: "/api/shipments/{awb}", header: admin, status: 200},
		{name: "shipment without a booking, for the forwarder holding the number", method: "GET", path: unbookedPath, route: "/api/shipments/{awb}", header: forwarder, status: 200},
		{name: "shipment without a booking, for another forwarder", method: "GET", path: unbookedPath, route: "/api/shipments/{awb}", header: otherForwarder, status: 404},
		{name: "shipment of another forwarder", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: otherForwarder, status: 404},
		{name: "shipment of another airline", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: otherAirline, status: 404},
		{name: "unknown shipment", method: "GET", path: "/api/shipments/" + unknownAWB, route: "/api/shipments/{awb}", header: admin, status: 404},
		{name: "shipment of a bad AWB", method: "GET", path: "/api/shipments/020-1234567X", route: "/api/shipments/{awb}", header: forwarder, status: 400},
		{name: "shipment without credential", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", status: 401},
		{name: "history of a shipment", method: "GET", path: shipmentPath + "/history", route: "/api/shipments/{awb}/history", header: forwarder, status: 200},
		{name: "history of a shipment, second page", method: "GET", path: shipmentPath + "/history?page=2&limit=1", route: "/api/shipments/{awb}/history", header: admin, status: 200},
		{name: "history of another forwarder's shipment", method: "GET", path: shipmentPath + "/history", route: "/api/shipments/{awb}/history", header: otherForwarder, status: 404},
		{name: "history of a bad AWB", method: "GET", path: "/api/shipments/020-1234567X/history", route: "/api/shipments/{awb}/history", header: forwarder, status: 400},
		{name: "history with a bad limit", method: "GET", path: shipmentPath + "/history?limit=0", route: "/api/shipments/{awb}/history", header: forwarder, status: 400},
		{name: "history of an unknown shipment", method: "GET", path: "/api/shipments/" + unknownAWB + "/history", route: "/api/shipments/{awb}/history", header: admin, status: 404},
		{name: "history of a shipment without credential", method: "GET", path: shipmentPath + "/history", route: "/api/shipments/{awb}/history", status: 401},
		{name: "history of a stock request", method: "GET", path: "/api/awb-stock/requests/" + filed.State.ID + "/history", route: "/api/awb-stock/requests/{id}/history", header: forwarder, status: 200},
		{name: "history of another forwarder's stock request", method: "GET", path: "/api/awb-stock/requests/" + filed.State.ID + "/history", route: "/api/awb-stock/requests/{id}/history", header: otherForwarder, status: 404},
		{name: "history of a booking", method: "GET", path: "/api/bookings/" + confirmedID + "/history", route: "/api/bookings/{id}/history", header: forwarder, status: 200},
		{name: "history of a booking of another airline's flight", method: "GET", path: "/api/bookings/" + confirmedID + "/history", route: "/api/bookings/{id}/history", header: otherAirline, status: 404},
		{name: "history of a flight", method: "GET", path: "/api/flights/" + manifestFlight + "/history", route: "/api/flights/{id}/history", header: airline, status: 200},
		{name: "history of an unknown flight", method: "GET", path: "/api/flights/LH1-2026-01-01/history", route: "/api/flights/{id}/history", header: airline, status: 404},
		{name: "history of an unknown quote", method: "GET", path: "/api/quotes/nope/history", route: "/api/quotes/{id}/history", header: admin, status: 404},
		{name: "history of a quote without credential", method: "GET", path: "/api/quotes/nope/history", route: "/api/quotes/{id}/history", status: 401},

		{name: "MAWB of a booked AWB", method: "POST", path: "/api/mawb", route: "/api/mawb", header: with(forwarder, "Idempotency-Key", "mawb-1"),
			contentType: "application/json", body: mawbBody(bookedAWB), status: 201},
		{name: "MAWB again", method: "POST", path: "/api/mawb", route: "/api/mawb", header: with(forwarder, "Idempotency-Key", "mawb-1"),
			contentType: "application/json", body: mawbBody(bookedAWB), status: 201},
		{name: "MAWB with the key of another request", method: "POST", path: "/api/mawb", route: "/api/mawb", header: with(forwarder, "Idempotency-Key", "mawb-1"),
			contentType: "application/json", body: mawbBody(unknownAWB), status: 422},
		{name: "MAWB that exists", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder,
			contentType: "application/json", body: mawbBody(bookedAWB), status: 409},
		{name: "MAWB outside the stock", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder,
			contentType: "application/json", body: mawbBody(unbookedAWB), status: 400},
		{name: "MAWB of another forwarder's booking", method: "POST", path: "/api/mawb", route: "/api/mawb", header: otherForwarder,
			contentType: "application/json", body: mawbBody(bookedAWB), status: 400},
		{name: "MAWB with a bad check digit", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder,
			contentType: "application/json", body: `{"awbNumber":"020-12345670"}`, status: 400},
		{name: "MAWB with everything wrong", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":"020-99999992","origin":"QQQ","destination":"FRANKFURT","pieces":0,"weight":-1,"volume":2000,"commodity":"` + strings.Repeat("X", 21) +
				`","shipper":{"name":" "},"consignee":{"contact":"` + strings.Repeat("c", 201) + `"}}`, status: 400},
		{name: "MAWB with nothing", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder, contentType: "application/json", body: `{}`, status: 400},
		{name: "MAWB by an airline", method: "POST", path: "/api/mawb", route: "/api/mawb", header: airline,
			contentType: "application/json", body: mawbBody(bookedAWB), status: 403},
		{name: "MAWB by an admin", method: "POST", path: "/api/mawb", route: "/api/mawb", header: admin,
			contentType: "application/json", body: mawbBody(bookedAWB), status: 403},
		{name: "MAWB as text", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder, contentType: "text/plain", body: `MAWB`, status: 415},
		{name: "MAWB malformed", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder, contentType: "application/json", body: `{"awbNumber":`, status: 400},
		{name: "MAWB mistyped", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder,
			contentType: "application/json", body: `{"awbNumber":"020-12345675","pieces":"ten"}`, status: 400},
		{name: "MAWB too large", method: "POST", path: "/api/mawb", route: "/api/mawb", header: forwarder, contentType: "application/json", body: big, status: 413},
		{name: "MAWB with a bad Idempotency-Key", method: "POST", path: "/api/mawb", route: "/api/mawb", header: with(forwarder, "Idempotency-Key", "a b"),
			contentType: "application/json", body: `{}`, status: 400},
		{name: "MAWB without credential", method: "POST", path: "/api/mawb", route: "/api/mawb", contentType: "application/json", body: `{}`, status: 401},
		{name: "HAWB", method: "POST", path: "/api/hawb", route: "/api/hawb", header: with(forwarder, "Idempotency-Key", "hawb-1"),
			contentType: "application/json", body: hawbBody("acme0001", bookedAWB, 2, 600), status: 201},
		{name: "HAWB again", method: "POST", path: "/api/hawb", route: "/api/hawb", header: with(forwarder, "Idempotency-Key", "hawb-1"),
			contentType: "application/json", body: hawbBody("acme0001", bookedAWB, 2, 600), status: 201},
		{name: "HAWB with the key of another request", method: "POST", path: "/api/hawb", route: "/api/hawb", header: with(forwarder, "Idempotency-Key", "hawb-1"),
			contentType: "application/json", body: hawbBody("ACME0002", bookedAWB, 2, 600), status: 422},
		{name: "second HAWB, with the master's number without a dash", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder,
			contentType: "application/json", body: hawbBody("ACME0002", "02012345675", 2, 650.5), status: 201},
		{name: "HAWB repeated", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder,
			contentType: "application/json", body: hawbBody("ACME0001", bookedAWB, 1, 1), status: 409},
		{name: "HAWBs beyond the master", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder,
			contentType: "application/json", body: hawbBody("ACME0003", bookedAWB, 1, 1), status: 400},
		{name: "HAWB under another forwarder's master", method: "POST", path: "/api/hawb", route: "/api/hawb", header: otherForwarder,
			contentType: "application/json", body: hawbBody("G1", bookedAWB, 1, 1), status: 400},
		{name: "HAWB under no master", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder,
			contentType: "application/json", body: hawbBody("X1", unknownAWB, 1, 1), status: 400},
		{name: "HAWB of a bad master number", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder,
			contentType: "application/json", body: hawbBody("X1", "020-1234567", 1, 1), status: 400},
		{name: "HAWB with everything wrong", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder, contentType: "application/json",
			body: `{"hawbNumber":"not a number!","mawbNumber":"020-12345675","pieces":100000,"shipper":{"name":""},"consignee":{"address":"` + strings.Repeat("a", 501) + `"}}`, status: 400},
		{name: "HAWB by an airline", method: "POST", path: "/api/hawb", route: "/api/hawb", header: airline,
			contentType: "application/json", body: hawbBody("X1", bookedAWB, 1, 1), status: 403},
		{name: "HAWB as text", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder, contentType: "text/plain", body: `HAWB`, status: 415},
		{name: "HAWB malformed", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder, contentType: "application/json", body: `[`, status: 400},
		{name: "HAWB too large", method: "POST", path: "/api/hawb", route: "/api/hawb", header: forwarder, contentType: "application/json", body: big, status: 413},
		{name: "HAWB with a bad Idempotency-Key", method: "POST", path: "/api/hawb", route: "/api/hawb", header: with(forwarder, "Idempotency-Key", "a b"),
			contentType: "application/json", body: `{}`, status: 400},
		{name: "HAWB without credential", method: "POST", path: "/api/hawb", route: "/api/hawb", contentType: "application/json", body: `{}`, status: 401},
		{name: "PLACI", method: "POST", path: "/api/placi", route: "/api/placi", header: with(forwarder, "Idempotency-Key", "placi-1"),
			contentType: "application/json", body: placiBody, status: 201},
		{name: "PLACI again", method: "POST", path: "/api/placi", route: "/api/placi", header: with(forwarder, "Idempotency-Key", "placi-1"),
			contentType: "application/json", body: placiBody, status: 201},
		{name: "PLACI with the key of another request", method: "POST", path: "/api/placi", route: "/api/placi", header: with(forwarder, "Idempotency-Key", "placi-1"),
			contentType: "application/json", body: `{"awbNumber":"` + unknownAWB + `"}`, status: 422},
		{name: "PLACI with everything wrong", method: "POST", path: "/api/placi", route: "/api/placi", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":"020-12345670","origin":"XX","destination":"QQQ","departureDate":"1 July","cargoDescription":"consolidation","shipperName":"","pieces":0,"weight":-1,"shipperAddress":"` + strings.Repeat("a", 501) + `"}`, status: 400},
		{name: "PLACI with nothing", method: "POST", path: "/api/placi", route: "/api/placi", header: forwarder, contentType: "application/json", body: `{}`, status: 400},
		{name: "PLACI by an airline", method: "POST", path: "/api/placi", route: "/api/placi", header: airline, contentType: "application/json", body: placiBody, status: 403},
		{name: "PLACI as text", method: "POST", path: "/api/placi", route: "/api/placi", header: forwarder, contentType: "text/plain", body: `PLACI`, status: 415},
		{name: "PLACI too large", method: "POST", path: "/api/placi", route: "/api/placi", header: forwarder, contentType: "application/json", body: big, status: 413},
		{name: "PLACI without credential", method: "POST", path: "/api/placi", route: "/api/placi", contentType: "application/json", body: `{}`, status: 401},
		{name: "e-CSD", method: "POST", path: "/api/csd", route: "/api/csd", header: with(forwarder, "Idempotency-Key", "csd-1"),
			contentType: "application/json", body: csdBody, status: 201},
		{name: "e-CSD again", method: "POST", path: "/api/csd", route: "/api/csd", header: with(forwarder, "Idempotency-Key", "csd-1"),
			contentType: "application/json", body: csdBody, status: 201},
		{name: "e-CSD with the key of another request", method: "POST", path: "/api/csd", route: "/api/csd", header: with(forwarder, "Idempotency-Key", "csd-1"),
			contentType: "application/json", body: `{"awbNumber":"` + unknownAWB + `","exemption":"MAIL"}`, status: 422},
		{name: "e-CSD exempt, by the airline", method: "POST", path: "/api/csd", route: "/api/csd", header: airline,
			contentType: "application/json", body: `{"awbNumber":"` + bookedAWB + `","securityStatus":"SPX","exemption":"mail"}`, status: 201},
		{name: "e-CSD with everything wrong", method: "POST", path: "/api/csd", route: "/api/csd", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","screeningMethod":"XXX","screeningResult":"maybe","securityStatus":"ABC","exemption":"NONE","screeningDate":"yesterday"}`, status: 400},
		{name: "e-CSD with a bad check digit", method: "POST", path: "/api/csd", route: "/api/csd", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":"020-12345670"}`, status: 400},
		{name: "e-CSD by an admin", method: "POST", path: "/api/csd", route: "/api/csd", header: admin, contentType: "application/json", body: csdBody, status: 403},
		{name: "e-CSD as text", method: "POST", path: "/api/csd", route: "/api/csd", header: forwarder, contentType: "text/plain", body: `CSD`, status: 415},
		{name: "e-CSD too large", method: "POST", path: "/api/csd", route: "/api/csd", header: forwarder, contentType: "application/json", body: big, status: 413},
		{name: "e-CSD without credential", method: "POST", path: "/api/csd", route: "/api/csd", contentType: "application/json", body: `{}`, status: 401},
		{name: "PLACI for another forwarder's shipment", method: "POST", path: "/api/placi", route: "/api/placi", header: otherForwarder,
			contentType: "application/json", body: placiBody, status: 403},
		{name: "e-CSD for another forwarder's shipment", method: "POST", path: "/api/csd", route: "/api/csd", header: otherForwarder,
			contentType: "application/json", body: csdBody, status: 403},

		{name: "e-DGD", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: with(forwarder, "Idempotency-Key", "dgd-1"),
			contentType: "application/json", body: lithium, status: 201},
		{name: "e-DGD again", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: with(forwarder, "Idempotency-Key", "dgd-1"),
			contentType: "application/json", body: lithium, status: 201},
		{name: "e-DGD with the key of another request", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods",
			header: with(forwarder, "Idempotency-Key", "dgd-1"), contentType: "application/json", body: `{"awbNumber":"` + unknownAWB + `"}`, status: 422},
		{name: "e-DGD of a limited quantity", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json",
			body: dgdBody(`"unNumber":"UN1263","properShippingName":"Paint","class":"3","packingGroup":"ii","quantity":5,"netWeight":4.5,"packingInstructions":"y341","limitedQuantity":true`), status: 201},
		{name: "e-DGD with a name of its own", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json",
			body: dgdBody(`"unNumber":"UN1845","properShippingName":"Dry ice","class":"9","quantity":200,"netWeight":200,"packingInstructions":"954"`), status: 201},
		{name: "e-DGD of an excepted quantity", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json",
			body: dgdBody(`"unNumber":"UN1170","properShippingName":"Ethanol solutions","class":"3","packingGroup":"II","quantity":0.03,"netWeight":0.03,"exceptedQuantity":true`), status: 201},
		{name: "e-DGD of an explosive of a compatibility group", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder,
			contentType: "application/json", body: dgdBody(`"unNumber":"UN0012","properShippingName":"Cartridges, small arms","class":"1.4s","quantity":12,"netWeight":12,"grossWeight":15,"packingInstructions":"130"`), status: 201},
		{name: "e-DGD of goods the reference data does not know", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder,
			contentType: "application/json", body: dgdBody(`"unNumber":"UN1230","properShippingName":"Methanol","class":"3","packingGroup":"II","quantity":1,"netWeight":0.8,"packingInstructions":"364"`), status: 201},
		{name: "e-DGD with everything wrong", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","unNumber":"1845","class":"10","packingGroup":"IV","properShippingName":"","quantity":0,"netWeight":-1,"grossWeight":-2,` +
				`"packingInstructions":"95","limitedQuantity":true,"exceptedQuantity":true,"shipperDeclaration":" "}`, status: 400},
		{name: "e-DGD of another class than the reference data's", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder,
			contentType: "application/json", body: dgdBody(`"unNumber":"UN1845","properShippingName":"Dry ice","class":"3","packingGroup":"II","quantity":200,"netWeight":200,"packingInstructions":"954"`), status: 400},
		{name: "e-DGD of a gas with a packing group", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder,
			contentType: "application/json", body: dgdBody(`"unNumber":"UN1950","properShippingName":"Aerosols, flammable","class":"2.1","packingGroup":"II","quantity":10,"netWeight":10,"packingInstructions":"203"`), status: 400},
		{name: "e-DGD with a Y instruction, not a limited quantity", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder,
			contentType: "application/json", body: dgdBody(`"unNumber":"UN1263","properShippingName":"Paint","class":"3","quantity":5,"netWeight":5,"grossWeight":4,"packingInstructions":"Y341"`), status: 400},
		{name: "e-DGD of radioactive material as a limited quantity", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder,
			contentType: "application/json", body: dgdBody(`"unNumber":"UN2910","properShippingName":"Radioactive material, excepted package","class":"7","quantity":1,"netWeight":1,"packingInstructions":"Y123","limitedQuantity":true`), status: 400},
		{name: "e-DGD with nothing", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json", body: `{}`, status: 400},
		{name: "e-DGD mistyped", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","quantity":"lots"}`, status: 400},
		{name: "e-DGD malformed", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json",
			body: `{"awbNumber":`, status: 400},
		{name: "e-DGD for another forwarder's shipment", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: otherForwarder,
			contentType: "application/json", body: lithium, status: 403},
		{name: "e-DGD by an airline", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: airline,
			contentType: "application/json", body: lithium, status: 403},
		{name: "e-DGD as text", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "text/plain", body: `DGD`, status: 415},
		{name: "e-DGD too large", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: forwarder, contentType: "application/json", body: big, status: 413},
		{name: "e-DGD with a bad Idempotency-Key", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: with(forwarder, "Idempotency-Key", "a b"),
			contentType: "application/json", body: lithium, status: 400},
		{name: "e-DGD without credential", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", contentType: "application/json", body: `{}`, status: 401},

		{name: "manifest without totals", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":["02012345675"]}`, status: 201},
		{name: "manifest", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: with(airline, "Idempotency-Key", "manifest-1"),
			contentType: "application/json", body: manifestBody, status: 201},
		{name: "manifest again", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: with(airline, "Idempotency-Key", "manifest-1"),
			contentType: "application/json", body: manifestBody, status: 201},
		{name: "manifest with the key of another request", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests",
			header: with(airline, "Idempotency-Key", "manifest-1"), contentType: "application/json", body: `{"awbNumbers":["` + bookedAWB + `"]}`, status: 422},
		{name: "manifest with everything wrong", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline, contentType: "application/json",
			body: `{"flightId":"LH8400-2026-07-01","awbNumbers":["020-12345675","02012345675","` + unknownAWB + `","176-12345675"],"totalPieces":-1,"totalWeight":-5,"totalVolume":1e9}`, status: 400},
		{name: "manifest with bad AWB numbers", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":["020-12345670","` + bookedAWB + `","x"]}`, status: 400},
		{name: "manifest of nothing", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":[]}`, status: 400},
		{name: "manifest mistyped", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":"` + bookedAWB + `"}`, status: 400},
		{name: "manifest malformed", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":[`, status: 400},
		{name: "manifest of an unknown flight", method: "POST", path: "/api/flights/LH1-2020-01-01/manifests", route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":["` + bookedAWB + `"]}`, status: 404},
		{name: "manifest of an impossible flight id", method: "POST", path: "/api/flights/-x-/manifests", route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":["` + bookedAWB + `"]}`, status: 404},
		{name: "manifest of a cancelled flight", method: "POST", path: cancelledManifestPath, route: "/api/flights/{id}/manifests", header: airline,
			contentType: "application/json", body: `{"awbNumbers":["` + bookedAWB + `"]}`, status: 409},
		{name: "manifest of another airline's flight", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: otherAirline,
			contentType: "application/json", body: manifestBody, status: 403},
		{name: "manifest by a forwarder", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: forwarder,
			contentType: "application/json", body: manifestBody, status: 403},
		{name: "manifest as text", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline, contentType: "text/plain", body: `MAN`, status: 415},
		{name: "manifest too large", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: airline, contentType: "application/json", body: big, status: 413},
		{name: "manifest with a bad Idempotency-Key", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: with(airline, "Idempotency-Key", "a b"),
			contentType: "application/json", body: manifestBody, status: 400},
		{name: "manifest without credential", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", contentType: "application/json", body: `{}`, status: 401},

		{name: "offload", method: "POST", path: "/api/offloads", route: "/api/offloads", header: with(airline, "Idempotency-Key", "offload-1"),
			contentType: "application/json", body: offloadBody(manifestFlight), status: 201},
		{name: "offload again", method: "POST", path: "/api/offloads", route: "/api/offloads", header: with(airline, "Idempotency-Key", "offload-1"),
			contentType: "application/json", body: offloadBody(manifestFlight), status: 201},
		{name: "offload with the key of another request", method: "POST", path: "/api/offloads", route: "/api/offloads", header: with(airline, "Idempotency-Key", "offload-1"),
			contentType: "application/json", body: offloadBody(cancelledFlight), status: 422},
		{name: "offload without notes", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"02012345675","flightId":"` + manifestFlight + `","reason":"damaged","pieces":1,"weight":100}`, status: 201},
		{name: "offload of more than is loaded", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","flightId":"` + manifestFlight + `","reason":"damaged","pieces":3,"weight":1000}`, status: 400},
		{name: "offload with everything wrong", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"` + unknownAWB + `","flightId":"` + manifestFlight + `","reason":" ","pieces":0,"weight":-1}`, status: 400},
		{name: "offload with a reason too long", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","flightId":"` + manifestFlight + `","reason":"` + strings.Repeat("r", 201) + `","pieces":1,"weight":1}`, status: 400},
		{name: "offload without a flight", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","reason":"damaged","pieces":1,"weight":1}`, status: 400},
		{name: "offload with a bad AWB number", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"020-12345670","flightId":"` + manifestFlight + `"}`, status: 400},
		{name: "offload mistyped", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: `{"awbNumber":"` + bookedAWB + `","pieces":"one"}`, status: 400},
		{name: "offload malformed", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json", body: `{"awbNumber":`, status: 400},
		{name: "offload from an unknown flight", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: offloadBody("LH1-2020-01-01"), status: 404},
		{name: "offload from a cancelled flight", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json",
			body: offloadBody(cancelledFlight), status: 409},
		{name: "offload from another airline's flight", method: "POST", path: "/api/offloads", route: "/api/offloads", header: otherAirline, contentType: "application/json",
			body: offloadBody(manifestFlight), status: 403},
		{name: "offload by a forwarder", method: "POST", path: "/api/offloads", route: "/api/offloads", header: forwarder, contentType: "application/json",
			body: offloadBody(manifestFlight), status: 403},
		{name: "offload as text", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "text/plain", body: `OFLD`, status: 415},
		{name: "offload too large", method: "POST", path: "/api/offloads", route: "/api/offloads", header: airline, contentType: "application/json", body: big, status: 413},
		{name: "offload with a bad Idempotency-Key", method: "POST", path: "/api/offloads", route: "/api/offloads", header: with(airline, "Idempotency-Key", "a b"),
			contentType: "application/json", body: offloadBody(manifestFlight), status: 400},
		{name: "offload without credential", method: "POST", path: "/api/offloads", route: "/api/offloads", contentType: "application/json", body: `{}`, status: 401},
		{name: "capacity of a manifested flight", method: "GET", path: "/api/capacity?flightNumber=LH400", route: "/api/capacity", header: airline, status: 200},
		{name: "timeline with manifests, offloads and filings", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: forwarder, status: 200},
		{name: "timeline of manifests", method: "GET", path: shipmentPath + "/events?eventType=man", route: "/api/shipments/{awb}/events", header: airline, status: 200},
		{name: "timeline of e-DGDs", method: "GET", path: shipmentPath + "/events?eventType=DGD", route: "/api/shipments/{awb}/events", header: forwarder, status: 200},
		{name: "document", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType, body: document, status: 201},
		{name: "document, file first, by the airline", method: "POST", path: "/api/documents", route: "/api/documents", header: airline, contentType: uploadType,
			body: upload("file", pdf, "documentType", "MSDS", "awbNumber", "02012345675"), status: 201},
		{name: "document with everything wrong", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType,
			body: upload("awbNumber", "020-12345670", "documentType", "selfie", "file", pdf), status: 400},
		{name: "document without a file", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType,
			body: upload("awbNumber", bookedAWB, "documentType", "coo"), status: 400},
		{name: "document without a boundary", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder,
			contentType: "multipart/form-data", body: document, status: 400},
		{name: "document broken off", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType,
			body: document[:len(document)-100], status: 400},
		{name: "document of another airline's AWB number", method: "POST", path: "/api/documents", route: "/api/documents", header: otherAirline,
			contentType: uploadType, body: document, status: 403},
		{name: "document by an admin", method: "POST", path: "/api/documents", route: "/api/documents", header: admin, contentType: uploadType, body: document, status: 403},
		{name: "document that is a program", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType,
			body: upload("awbNumber", bookedAWB, "documentType", "other", "file", "MZ\x90\x00\x03\x00\x00\x00\x04\x00"), status: 415},
		{name: "document as JSON", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: "application/json", body: `{}`, status: 415},
		{name: "document too large to read", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType,
			body: upload("awbNumber", bookedAWB, "documentType", "coo", "file", pdf+strings.Repeat("x", maxUpload+uploadAllowance)), status: 413},
		{name: "document growing too large", method: "POST", path: "/api/documents", route: "/api/documents", header: forwarder, contentType: uploadType,
			body: upload("awbNumber", bookedAWB, "documentType", "coo", "file", pdf+strings.Repeat("x", maxUpload)), status: 413},
		{name: "document without credential", method: "POST", path: "/api/documents", route: "/api/documents", contentType: uploadType, body: document, status: 401},
		{name: "download", method: "GET", path: documentPath, route: "/api/documents/{id}", header: forwarder, status: 200},
		{name: "download by the airline", method: "GET", path: documentPath, route: "/api/documents/{id}", header: with(airline, "Cargo-Sequence", "0"), status: 200},
		{name: "download by another forwarder", method: "GET", path: documentPath, route: "/api/documents/{id}", header: otherForwarder, status: 404},
		{name: "download of an unknown document", method: "GET", path: "/api/documents/nope", route: "/api/documents/{id}", header: admin, status: 404},
		{name: "download with a bad Cargo-Sequence", method: "GET", path: documentPath, route: "/api/documents/{id}", header: with(forwarder, "Cargo-Sequence", "x"), status: 400},
		{name: "download without credential", method: "GET", path: documentPath, route: "/api/documents/{id}", status: 401},
		{name: "shipment with its waybills", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: forwarder, status: 200},
		{name: "shipment with its waybills, for the airline", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: airline, status: 200},
		{name: "shipment with its waybills, for another forwarder", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: otherForwarder, status: 404},

		{name: "register a webhook", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":"https://192.0.2.1/hooks","events":["booking.*","stock.low"]}`, status: 201},
		{name: "register a webhook with a chosen secret", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: airline,
			contentType: "application/json", body: `{"url":"http://192.0.2.10:8080/cargo","events":["*"],"secret":"a plain shared secret"}`, status: 201},
		{name: "register a webhook with a whsec_ secret", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: with(admin, "Idempotency-Key", "hook-1"),
			contentType: "application/json", body: `{"url":"https://[2001:db8::1]/hooks","events":["quote.priced"],"secret":"` + webhooks.NewSecret() + `"}`, status: 201},
		{name: "register a webhook with an Idempotency-Key", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: with(forwarder, "Idempotency-Key", "hook-2"),
			contentType: "application/json", body: `{"url":"https://192.0.2.2/","events":["booking.confirmed"]}`, status: 201},
		{name: "register a webhook again", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: with(forwarder, "Idempotency-Key", "hook-2"),
			contentType: "application/json", body: `{"url":"https://192.0.2.2/","events":["booking.confirmed"]}`, status: 201},
		{name: "register another webhook with the key", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: with(forwarder, "Idempotency-Key", "hook-2"),
			contentType: "application/json", body: `{"url":"https://192.0.2.3/","events":["booking.confirmed"]}`, status: 422},
		{name: "register a webhook on loopback", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":"http://127.0.0.1:8080/","events":["*"]}`, status: 400},
		{name: "register a webhook on the metadata address", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":"http://169.254.169.254/latest/meta-data/","events":["*"]}`, status: 400},
		{name: "register a webhook with everything wrong", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":"ftp://192.0.2.1/","events":["quote.exploded","booking.*"],"secret":"short"}`, status: 400},
		{name: "register a webhook without events", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":"https://192.0.2.1/"}`, status: 400},
		{name: "register a webhook mistyped", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":"https://192.0.2.1/","events":"quote.*"}`, status: 400},
		{name: "register a webhook malformed", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: `{"url":`, status: 400},
		{name: "register a webhook as text", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "text/plain", body: `{}`, status: 415},
		{name: "register a webhook too large", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "register a webhook with a bad Idempotency-Key", method: "POST", path: "/api/webhooks", route: "/api/webhooks",
			header: with(forwarder, "Idempotency-Key", "a b"), contentType: "application/json", body: `{}`, status: 400},
		{name: "register a webhook without credential", method: "POST", path: "/api/webhooks", route: "/api/webhooks",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "webhooks", method: "GET", path: "/api/webhooks", route: "/api/webhooks", header: forwarder, status: 200},
		{name: "webhooks of every organisation", method: "GET", path: "/api/webhooks", route: "/api/webhooks", header: with(admin, "Cargo-Sequence", "0"), status: 200},
		{name: "no webhooks", method: "GET", path: "/api/webhooks", route: "/api/webhooks", header: otherForwarder, status: 200},
		{name: "webhooks with a bad Cargo-Sequence", method: "GET", path: "/api/webhooks", route: "/api/webhooks", header: with(forwarder, "Cargo-Sequence", "x"), status: 400},
		{name: "webhooks without credential", method: "GET", path: "/api/webhooks", route: "/api/webhooks", status: 401},
		{name: "webhook", method: "GET", path: hookPath, route: "/api/webhooks/{id}", header: forwarder, status: 200},
		{name: "webhook disabled", method: "GET", path: "/api/webhooks/" + goneHook, route: "/api/webhooks/{id}", header: admin, status: 200},
		{name: "webhook of another organisation", method: "GET", path: hookPath, route: "/api/webhooks/{id}", header: otherForwarder, status: 404},
		{name: "unknown webhook", method: "GET", path: "/api/webhooks/nope", route: "/api/webhooks/{id}", header: forwarder, status: 404},
		{name: "webhook without credential", method: "GET", path: hookPath, route: "/api/webhooks/{id}", status: 401},
		{name: "deliveries", method: "GET", path: hookPath + "/deliveries", route: "/api/webhooks/{id}/deliveries", header: forwarder, status: 200},
		{name: "deliveries, second page", method: "GET", path: hookPath + "/deliveries?page=2&limit=3", route: "/api/webhooks/{id}/deliveries",
			header: with(admin, "Cargo-Sequence", "0"), status: 200},
		{name: "no deliveries", method: "GET", path: "/api/webhooks/" + goneHook + "/deliveries", route: "/api/webhooks/{id}/deliveries", header: forwarder, status: 200},
		{name: "deliveries with a bad limit", method: "GET", path: hookPath + "/deliveries?limit=101", route: "/api/webhooks/{id}/deliveries", header: forwarder, status: 400},
		{name: "deliveries of two events", method: "GET", path: hookPath + "/deliveries?eventId=e1&eventId=e2", route: "/api/webhooks/{id}/deliveries", header: forwarder, status: 200},
		{name: "deliveries of an event id that is none", method: "GET", path: hookPath + "/deliveries?eventId=e1&eventId=e%2F2", route: "/api/webhooks/{id}/deliveries", header: forwarder, status: 400},
		{name: "deliveries of too many events", method: "GET", path: hookPath + "/deliveries?" + strings.Repeat("eventId=e1&", 101), route: "/api/webhooks/{id}/deliveries", header: forwarder, status: 400},
		{name: "deliveries of another organisation", method: "GET", path: hookPath + "/deliveries", route: "/api/webhooks/{id}/deliveries", header: airline, status: 404},
		{name: "deliveries without credential", method: "GET", path: hookPath + "/deliveries", route: "/api/webhooks/{id}/deliveries", status: 401},
		{name: "redeliver an event", method: "POST", path: hookPath + "/deliveries/" + deadDelivery + "/redeliver", route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver",
			header: forwarder, status: 202},
		{name: "redeliver a ping", method: "POST", path: hookPath + "/deliveries/" + pingDelivery + "/redeliver", route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver",
			header: with(forwarder, "Idempotency-Key", "again-1"), contentType: "application/json", body: `{}`, status: 202},
		{name: "redeliver a ping again", method: "POST", path: hookPath + "/deliveries/" + pingDelivery + "/redeliver", route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver",
			header: with(forwarder, "Idempotency-Key", "again-1"), contentType: "application/json", body: `{}`, status: 202},
		{name: "redeliver what nobody may see", method: "POST", path: hookPath + "/deliveries/" + hiddenDelivery + "/redeliver",
			route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", header: forwarder, status: 404},
		{name: "redeliver an unknown delivery", method: "POST", path: hookPath + "/deliveries/nope/redeliver", route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver",
			header: forwarder, status: 404},
		{name: "redeliver for another organisation", method: "POST", path: hookPath + "/deliveries/" + deadDelivery + "/redeliver",
			route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", header: otherForwarder, status: 404},
		{name: "redeliver with a bad Idempotency-Key", method: "POST", path: hookPath + "/deliveries/" + pingDelivery + "/redeliver",
			route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", header: with(forwarder, "Idempotency-Key", "a b"), status: 400},
		{name: "redeliver without credential", method: "POST", path: hookPath + "/deliveries/" + deadDelivery + "/redeliver",
			route: "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", status: 401},
		{name: "ping", method: "POST", path: hookPath + "/ping", route: "/api/webhooks/{id}/ping", header: forwarder, status: 202},
		{name: "ping by an admin", method: "POST", path: hookPath + "/ping", route: "/api/webhooks/{id}/ping", header: with(admin, "Idempotency-Key", "ping-1"), status: 202},
		{name: "ping with the key of another request", method: "POST", path: "/api/webhooks/" + goneHook + "/ping", route: "/api/webhooks/{id}/ping",
			header: with(admin, "Idempotency-Key", "ping-1"), status: 422},
		{name: "ping a webhook of another organisation", method: "POST", path: hookPath + "/ping", route: "/api/webhooks/{id}/ping", header: otherAirline, status: 404},
		{name: "ping with a bad Idempotency-Key", method: "POST", path: hookPath + "/ping", route: "/api/webhooks/{id}/ping", header: with(forwarder, "Idempotency-Key", "ä"), status: 400},
		{name: "ping without credential", method: "POST", path: hookPath + "/ping", route: "/api/webhooks/{id}/ping", status: 401},
		{name: "delete a webhook of another organisation", method: "DELETE", path: "/api/webhooks/" + doomedHook, route: "/api/webhooks/{id}", header: otherForwarder, status: 404},
		{name: "delete a webhook without credential", method: "DELETE", path: "/api/webhooks/" + doomedHook, route: "/api/webhooks/{id}", status: 401},
		{name: "delete a webhook with a body too large", method: "DELETE", path: "/api/webhooks/" + doomedHook, route: "/api/webhooks/{id}", header: forwarder,
			contentType: "application/json", body: big, status: 413},
		{name: "delete a webhook with a malformed query", method: "DELETE", path: "/api/webhooks/" + doomedHook + "?force=%zz", route: "/api/webhooks/{id}",
			header: forwarder, status: 400},
		{name: "delete a webhook", method: "DELETE", path: "/api/webhooks/" + doomedHook, route: "/api/webhooks/{id}", header: forwarder, status: 204},
		{name: "delete a webhook again", method: "DELETE", path: "/api/webhooks/" + doomedHook, route: "/api/webhooks/{id}", header: forwarder, status: 404},
		{name: "deleted webhook", method: "GET", path: "/api/webhooks/" + doomedHook, route: "/api/webhooks/{id}", header: forwarder, status: 404},
		{name: "ping a deleted webhook", method: "POST", path: "/api/webhooks/" + doomedHook + "/ping", route: "/api/webhooks/{id}/ping", header: forwarder, status: 404},

		{name: "audit log", method: "GET", path: "/api/audit-logs", route: "/api/audit-logs", header: admin, status: 200},
		{name: "audit log filtered", method: "GET", path: "/api/audit-logs?action=update&resource=org&userId=system:test&from=2026-01-01&to=2999-01-01T00:00:00Z&page=1&limit=5",
			route: "/api/audit-logs", header: with(admin, "Cargo-Sequence", "0"), status: 200},
		{name: "audit log of failures", method: "GET", path: "/api/audit-logs?resource=authorization&limit=100", route: "/api/audit-logs", header: admin, status: 200},
		{name: "audit log of an organisation", method: "GET", path: "/api/audit-logs", route: "/api/audit-logs", header: forwarder, status: 200},
		{name: "audit log matching nothing", method: "GET", path: "/api/audit-logs?action=login.failed&resource=webhookquota", route: "/api/audit-logs", header: airline, status: 200},
		{name: "audit log with an action no entry has", method: "GET", path: "/api/audit-logs?action=delete", route: "/api/audit-logs", header: airline, status: 400},
		{name: "audit log with a bad from", method: "GET", path: "/api/audit-logs?from=yesterday", route: "/api/audit-logs", header: admin, status: 400},
		{name: "audit log with a bad limit", method: "GET", path: "/api/audit-logs?limit=0", route: "/api/audit-logs", header: admin, status: 400},
		{name: "audit log without credential", method: "GET", path: "/api/audit-logs", route: "/api/audit-logs", status: 401},
		{name: "usage", method: "GET", path: "/api/usage", route: "/api/usage", header: forwarder, status: 200},
		{name: "usage by status", method: "GET", path: "/api/usage?period=week&groupBy=status", route: "/api/usage", header: forwarder, status: 200},
		{name: "usage by day", method: "GET", path: "/api/usage?period=month&groupBy=day", route: "/api/usage", header: airline, status: 200},
		{name: "usage of dates", method: "GET", path: "/api/usage?from=2026-01-01&to=2026-01-31&groupBy=endpoint", route: "/api/usage",
			header: with(forwarder, "Cargo-Sequence", "0"), status: 200},
		{name: "usage of an organisation", method: "GET", path: "/api/usage?organizationId=acme&groupBy=status", route: "/api/usage", header: admin, status: 200},
		{name: "usage of an unknown organisation", method: "GET", path: "/api/usage?organizationId=nobody", route: "/api/usage", header: admin, status: 404},
		{name: "usage of another organisation", method: "GET", path: "/api/usage?organizationId=acme", route: "/api/usage", header: otherForwarder, status: 403},
		{name: "usage of an unknown period", method: "GET", path: "/api/usage?period=year", route: "/api/usage", header: forwarder, status: 400},
		{name: "usage backwards", method: "GET", path: "/api/usage?from=2026-02-01&to=2026-01-01", route: "/api/usage", header: forwarder, status: 400},
		{name: "usage without credential", method: "GET", path: "/api/usage", route: "/api/usage", status: 401},
		{name: "usage within the limit", method: "GET", path: "/api/usage", route: "/api/usage", header: throttled, status: 200},
		{name: "usage over the limit", method: "GET", path: "/api/usage", route: "/api/usage", header: throttled, status: 429},
		{name: "audit log over the limit", method: "GET", path: "/api/audit-logs", route: "/api/audit-logs", header: throttled, status: 429},
		{name: "webhooks over the limit", method: "GET", path: "/api/webhooks", route: "/api/webhooks", header: throttled, status: 429},
		{name: "register a webhook over the limit", method: "POST", path: "/api/webhooks", route: "/api/webhooks", header: throttled,
			contentType: "application/json", body: `{"url":"https://192.0.2.1/","events":["*"]}`, status: 429},
		{name: "ping over the limit", method: "POST", path: "/api/webhooks/" + acmeHook + "/ping", route: "/api/webhooks/{id}/ping", header: throttled, status: 429},
		{name: "shipment over the limit", method: "GET", path: shipmentPath, route: "/api/shipments/{awb}", header: throttled, status: 429},
		{name: "status events over the limit", method: "GET", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: throttled, status: 429},
		{name: "status event over the limit", method: "POST", path: shipmentPath + "/events", route: "/api/shipments/{awb}/events", header: throttled,
			contentType: "application/json", body: statusEvent(`,"eventType":"RCS"`), status: 429},
		{name: "MAWB over the limit", method: "POST", path: "/api/mawb", route: "/api/mawb", header: throttled,
			contentType: "application/json", body: mawbBody(bookedAWB), status: 429},
		{name: "PLACI over the limit", method: "POST", path: "/api/placi", route: "/api/placi", header: throttled,
			contentType: "application/json", body: placiBody, status: 429},
		{name: "e-CSD over the limit", method: "POST", path: "/api/csd", route: "/api/csd", header: throttled,
			contentType: "application/json", body: csdBody, status: 429},
		{name: "HAWB over the limit", method: "POST", path: "/api/hawb", route: "/api/hawb", header: throttled,
			contentType: "application/json", body: hawbBody("H9", bookedAWB, 1, 1), status: 429},
		{name: "e-DGD over the limit", method: "POST", path: "/api/dangerous-goods", route: "/api/dangerous-goods", header: throttled,
			contentType: "application/json", body: lithium, status: 429},
		{name: "manifest over the limit", method: "POST", path: manifestPath, route: "/api/flights/{id}/manifests", header: throttled,
			contentType: "application/json", body: manifestBody, status: 429},
		{name: "offload over the limit", method: "POST", path: "/api/offloads", route: "/api/offloads", header: throttled,
			contentType: "application/json", body: offloadBody(manifestFlight), status: 429},
		{name: "document over the limit", method: "POST", path: "/api/documents", route: "/api/documents", header: throttled,
			contentType: uploadType, body: document, status: 429},
		{name: "download over the limit", method: "GET", path: documentPath, route: "/api/documents/{id}", header: throttled, status: 429},
		{name: "rate limits without credential", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			contentType: "application/json", body: `{}`, status: 401},
		{name: "rate limits by a forwarder", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: forwarder, contentType: "application/json", body: `{"requestsPerMinute":100000}`, status: 403},
		{name: "rate limits as text", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "text/plain", body: `{}`, status: 415},
		{name: "rate limits malformed", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "application/json", body: `{"requestsPerMinute":`, status: 400},
		{name: "rate limits mistyped", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "application/json", body: `{"requestsPerMinute":1.5}`, status: 400},
		{name: "rate limits negative", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "application/json", body: `{"requestsPerHour":-1}`, status: 400},
		{name: "rate limits too large", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "application/json", body: big, status: 413},
		{name: "rate limits of an unknown organisation", method: "PUT", path: "/api/admin/organizations/nobody/rate-limits",
			route: "/api/admin/organizations/{id}/rate-limits", header: admin, contentType: "application/json", body: `{}`, status: 404},
		{name: "rate limits", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "application/json", body: `{"requestsPerMinute":1000,"requestsPerHour":0}`, status: 200},
		{name: "rate limits back to the defaults", method: "PUT", path: "/api/admin/organizations/acme/rate-limits", route: "/api/admin/organizations/{id}/rate-limits",
			header: admin, contentType: "application/json", body: `{}`, status: 200},

		// The life cycle of credentials, on organisations and credentials
		// made for it: the cases before change nothing of theirs.
		{name: "disable an organisation by a forwarder", method: "POST", path: "/api/admin/organizations/retired/disable", route: "/api/admin/organizations/{id}/disable",
			header: forwarder, status: 403},
		{name: "disable an unknown organisation", method: "POST", path: "/api/admin/organizations/nobody/disable", route: "/api/admin/organizations/{id}/disable",
			header: admin, status: 404},
		{name: "disable an organisation", method: "POST", path: "/api/admin/organizations/retired/disable", route: "/api/admin/organizations/{id}/disable",
			header: admin, status: 200},
		{name: "enable an organisation", method: "POST", path: "/api/admin/organizations/retired/enable", route: "/api/admin/organizations/{id}/enable",
			header: admin, status: 200},
		{name: "delete an organisation", method: "DELETE", path: "/api/admin/organizations/retired", route: "/api/admin/organizations/{id}",
			header: admin, status: 204},
		{name: "enable a deleted organisation", method: "POST", path: "/api/admin/organizations/retired/enable", route: "/api/admin/organizations/{id}/enable",
			header: admin, status: 409},
		{name: "delete an unknown organisation", method: "DELETE", path: "/api/admin/organizations/nobody", route: "/api/admin/organizations/{id}",
			header: admin, status: 404},
		{name: "disable a client", method: "POST", path: "/api/admin/clients/retired-tms/disable", route: "/api/admin/clients/{id}/disable",
			header: admin, status: 200},
		{name: "disable an unknown client", method: "POST", path: "/api/admin/clients/nobody/disable", route: "/api/admin/clients/{id}/disable",
			header: admin, status: 404},
		{name: "enable a client", method: "POST", path: "/api/admin/clients/retired-tms/enable", route: "/api/admin/clients/{id}/enable",
			header: admin, status: 200},
		{name: "rotate a client's secret, generated", method: "POST", path: "/api/admin/clients/retired-tms/secret", route: "/api/admin/clients/{id}/secret",
			header: admin, status: 200},
		{name: "rotate a client's secret, chosen", method: "POST", path: "/api/admin/clients/retired-tms/secret", route: "/api/admin/clients/{id}/secret",
			header: admin, contentType: "application/json", body: `{"clientSecret":"a new secret of length"}`, status: 200},
		{name: "rotate a client's secret, too short", method: "POST", path: "/api/admin/clients/retired-tms/secret", route: "/api/admin/clients/{id}/secret",
			header: admin, contentType: "application/json", body: `{"clientSecret":"short"}`, status: 400},
		{name: "rotate a client's secret, as text", method: "POST", path: "/api/admin/clients/retired-tms/secret", route: "/api/admin/clients/{id}/secret",
			header: admin, contentType: "text/plain", body: `{}`, status: 415},
		{name: "rotate an unknown client's secret", method: "POST", path: "/api/admin/clients/nobody/secret", route: "/api/admin/clients/{id}/secret",
			header: admin, status: 404},
		{name: "delete a client", method: "DELETE", path: "/api/admin/clients/retired-tms", route: "/api/admin/clients/{id}",
			header: admin, status: 204},
		{name: "rotate a deleted client's secret", method: "POST", path: "/api/admin/clients/retired-tms/secret", route: "/api/admin/clients/{id}/secret",
			header: admin, status: 409},
		{name: "disable a user", method: "POST", path: "/api/admin/users/Ana@Retired/disable", route: "/api/admin/users/{username}/disable",
			header: admin, status: 200},
		{name: "enable an unknown user", method: "POST", path: "/api/admin/users/nobody/enable", route: "/api/admin/users/{username}/enable",
			header: admin, status: 404},
		{name: "enable a user", method: "POST", path: "/api/admin/users/ana@retired/enable", route: "/api/admin/users/{username}/enable",
			header: admin, status: 200},
		{name: "set a password", method: "PUT", path: "/api/admin/users/ana@retired/password", route: "/api/admin/users/{username}/password",
			header: admin, contentType: "application/json", body: `{"password":"a new password of length"}`, status: 204},
		{name: "set a password, missing", method: "PUT", path: "/api/admin/users/ana@retired/password", route: "/api/admin/users/{username}/password",
			header: admin, contentType: "application/json", body: `{}`, status: 400},
		{name: "set an unknown user's password", method: "PUT", path: "/api/admin/users/nobody/password", route: "/api/admin/users/{username}/password",
			header: admin, contentType: "application/json", body: `{"password":"a new password of length"}`, status: 404},
		{name: "delete a user", method: "DELETE", path: "/api/admin/users/ana@retired", route: "/api/admin/users/{username}",
			header: admin, status: 204},
		{name: "set a deleted user's password", method: "PUT", path: "/api/admin/users/ana@retired/password", route: "/api/admin/users/{username}/password",
			header: admin, contentType: "application/json", body: `{"password":"a new password of length"}`, status: 409},
		{name: "revoke a token", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: `{"jti":"01a229af-ccdb-7e6d-934f-9137b3a9b1d4"}`, status: 204},
		{name: "revoke a token named in upper case", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: `{"jti":"01A229AF-CCDB-7E6D-934F-9137B3A9B1D4"}`, status: 400},
		{name: "revoke a client's tokens", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: `{"subject":"client:retired-tms"}`, status: 204},
		{name: "revoke an organisation's tokens", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: `{"organizationId":"retired"}`, status: 204},
		{name: "revoke two kinds of tokens", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: `{"organizationId":"acme","jti":"x"}`, status: 400},
		{name: "revoke an unknown user's tokens", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: `{"subject":"user:nobody"}`, status: 400},
		{name: "revoke tokens by a forwarder", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: forwarder, contentType: "application/json", body: `{"organizationId":"acme"}`, status: 403},
		{name: "revoke tokens too large", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "application/json", body: big, status: 413},
		{name: "revoke tokens as text", method: "POST", path: "/api/admin/token-revocations", route: "/api/admin/token-revocations",
			header: admin, contentType: "text/plain", body: `{}`, status: 415},
	}
	// The lists of clients and users, of an organisation or all, as the
	// list of API keys.
	for _, list := range []string{"clients", "users"} {
		route := "/api/admin/" + list
		tests = append(tests, []liveTest{
			{name: list, method: "GET", path: route, route: route, header: admin, status: 200},
			{name: list + " of an organisation", method: "GET", path: route + "?organizationId=retired", route: route, header: admin, status: 200},
			{name: list + " of an unknown organisation", method: "GET", path: route + "?organizationId=nobody", route: route, header: admin, status: 404},
			{name: list + " of an organisation id that is none", method: "GET", path: route + "?organizationId=acme%2Fx", route: route, header: admin, status: 400},
			{name: list + " of two organisations", method: "GET", path: route + "?organizationId=acme&organizationId=retired", route: route, header: admin, status: 400},
			{name: list + " by a forwarder", method: "GET", path: route, route: route, header: forwarder, status: 403},
			{name: list + " by an airline", method: "GET", path: route, route: route, header: airline, status: 403},
			{name: list + " without credential", method: "GET", path: route, route: route, status: 401},
		}...)
	}
	// Guessing a client secret: the token endpoint answers tokenTriesPerSubject
	// tries a minute for one client id, then 429, in either body.
	for i := range tokenTriesPerSubject {
		tests = append(tests, liveTest{name: "token guess " + strconv.Itoa(i+1), method: "POST", path: "/api/auth/token", route: "/api/auth/token",
			contentType: "application/json", body: `{"grantType":"client_credentials","clientId":"guess","clientSecret":"wrong"}`, status: 401})
	}
	tests = append(tests, liveTest{name: "token guess over the limit", method: "POST", path: "/api/auth/token", route: "/api/auth/token",
		contentType: "application/x-www-form-urlencoded", body: `grant_type=client_credentials&client_id=guess&client_secret=wrong`, status: 429})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			connected = tt.connected
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req := httptest.NewRequest(tt.method, tt.path, body)
			maps.Copy(req.Header, tt.header)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d\n%s", res.StatusCode, tt.status, rec.Body.Bytes())
			}
			method := strings.ToLower(tt.method)
			mt, _, _ := strings.Cut(res.Header.Get("Content-Type"), ";")
			if tt.status == http.StatusNoContent || tt.status == http.StatusNotModified { // answers without a body
				if _, ok := lookup(doc, pointer("paths", tt.route, method, "responses", strconv.Itoa(tt.status))); !ok || rec.Body.Len() > 0 {
					t.Errorf("%d documented %v, body %q", tt.status, ok, rec.Body.Bytes())
				}
			} else {
				responseSchema(t, c, doc, tt.route, method, tt.status, mt) // the status and media type are documented
			}
			if mt == "application/json" {
				validateJSON(t, responseSchema(t, c, doc, tt.route, method, tt.status, mt), rec.Body.Bytes())
			}
			v, _ := lookup(doc, pointer("paths", tt.route, method, "responses", strconv.Itoa(tt.status), "headers"))
			headers, _ := v.(map[string]any)
			for _, h := range []string{"X-Request-Id", "WWW-Authenticate", "Retry-After", "RateLimit", "RateLimit-Policy", "Location"} {
				_, documented := headers[h]
				// The token endpoint refuses a malformed body before
				// its limiter counts the request.
				mayOmit := strings.HasPrefix(h, "RateLimit") && tt.route == "/api/auth/token" && tt.status < 500
				if documented && res.Header.Get(h) == "" && !mayOmit {
					t.Errorf("documented header %s is missing", h)
				}
			}
			for _, h := range []string{"RateLimit", "RateLimit-Policy", "Preference-Applied"} {
				if _, documented := headers[h]; !documented && res.Header.Get(h) != "" {
					t.Errorf("header %s is sent but not documented", h)
				}
			}
			for h, want := range tt.answer {
				if got := res.Header.Values(h); !slices.Equal(got, want) {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
		})
	}

	// The bodies of deliveries to acme, rendered by the server as the
	// dispatcher renders them (and a ping's), match the documented payloads.
	const quoteID = "3f2b8c1e-9a4d-5e7f-8b6a-1c2d3e4f5a6b"
	quoteRec := domain.Record{Aggregate: domain.Aggregate{Type: "quote", ID: quoteID}}
	s.quotes.Apply(quoteRec, domain.QuoteRequested{QuoteID: quoteID, OrganizationID: "acme", Origin: "FRA", Destination: "JFK", Pieces: 4,
		GrossWeightKg: 1250.5, VolumeM3: 2.16, Commodity: domain.Commodity{Code: "GEN", Description: "Machine parts"}, RequestedAt: created})
	// The status events as posted (the timeline holds manifests, offloads
	// and filings too, which are no status events).
	var status, offload domain.ShipmentStatusRecorded
	for _, e := range shipments.Timeline(bookedAWB) {
		switch {
		case e.Source != projections.SourceStatus:
		case e.Event.DiscrepancyCode == "OFLD":
			offload = e.Event
		case status.StatusEventID == "":
			status = e.Event
		}
	}
	if status.StatusEventID == "" || offload.StatusEventID == "" || len(shipments.Timeline(bookedAWB)) < 4 {
		t.Fatalf("timeline of %s: %+v", bookedAWB, shipments.Timeline(bookedAWB))
	}
	filedWaybills := shipments.Waybills(bookedAWB)
	if filedWaybills.MAWB == nil || len(filedWaybills.HAWBs) < 2 {
		t.Fatalf("waybills of %s: %+v", bookedAWB, filedWaybills)
	}
	filings := shipments.Compliance(bookedAWB)
	if filings.PLACI == nil || filings.CSD == nil || len(filings.DGDs) < 4 {
		t.Fatalf("filings of %s: %+v", bookedAWB, filings)
	}
	// The manifests and offloads of the flight, as recorded.
	flownRecs, err := store.Load(ctx, domain.Aggregate{Type: "flight", ID: manifestFlight})
	if err != nil {
		t.Fatal(err)
	}
	var manifests, offloads []domain.Event
	for _, r := range flownRecs {
		e, _ := domain.DecodeEvent(r.Type, r.Data)
		switch e.(type) {
		case domain.ManifestSubmitted:
			manifests = append(manifests, e)
		case domain.OffloadReported:
			offloads = append(offloads, e)
		}
	}
	if len(manifests) != 2 || len(offloads) != 2 {
		t.Fatalf("flight %s: %d manifests, %d offloads", manifestFlight, len(manifests), len(offloads))
	}
	// The airline's organisation, so that deliveries to it render.
	lh, err := cmds.CreateOrganization(ctx, system(), domain.CreateOrganization{OrganizationID: "lh", Name: "Lufthansa Cargo", Role: domain.RoleAirline,
		AWBPrefix: "020", AirlineCode: "LH"})
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.WaitFor(ctx, lh.Sequence); err != nil {
		t.Fatal(err)
	}
	flownRec := domain.Record{Aggregate: domain.Aggregate{Type: "flight", ID: manifestFlight}}
	// A delay of the flight acme has its booking confirmed on, with its estimate: acme hears of it, as the airline does.
	delayed := domain.FlightStatusChanged{FlightID: scheduled.FlightID, Status: domain.FlightStatusDelayed, Previous: domain.FlightStatusScheduled,
		EstimatedDepartsAt: scheduled.DepartsAt.Add(2 * time.Hour), EstimatedArrivesAt: scheduled.DepartsAt.Add(11 * time.Hour), ChangedAt: created}
	// Another aircraft on it: acme hears of that too.
	swapped := domain.FlightAircraftChanged{FlightID: scheduled.FlightID, AircraftType: "B744F", CapacityKg: 112000, CapacityM3: 700,
		PreviousAircraftType: scheduled.AircraftType, PreviousCapacityKg: scheduled.CapacityKg, PreviousCapacityM3: scheduled.CapacityM3, ChangedAt: created}
	complianceRec := domain.Record{Aggregate: domain.Aggregate{Type: "compliance", ID: bookedAWB}}
	waybillRec := domain.Record{Aggregate: domain.Aggregate{Type: "waybill", ID: bookedAWB}}
	shipmentRec := domain.Record{Aggregate: domain.Aggregate{Type: "shipment", ID: bookedAWB}}
	payloads := []struct {
		webhook, event string
		rec            domain.Record
		e              domain.Event
		data           any    // instead of rendering
		org            string // the subscriber, acme if empty
	}{
		{webhook: "quote", event: "quote.created", rec: quoteRec},
		{webhook: "booking", event: "booking.confirmed", rec: domain.Record{Aggregate: domain.Aggregate{Type: "booking", ID: confirmedID}}},
		{webhook: "booking", event: "booking.rejected", rec: domain.Record{Aggregate: domain.Aggregate{Type: "booking", ID: rejectedID}}},
		{webhook: "stock-request", event: "stock.requested", rec: domain.Record{Aggregate: domain.Aggregate{Type: "stockrequest", ID: filed.State.ID}}},
		{webhook: "stock-request", event: "stock.replied", rec: domain.Record{Aggregate: domain.Aggregate{Type: "stockrequest", ID: approvedStockID}}},
		{webhook: "stock-low", event: "stock.low", rec: domain.Record{Aggregate: domain.Aggregate{Type: "awbledger", ID: "acme-020"}},
			e: domain.StockLow{OrganizationID: "acme", Prefix: "020", Available: 49, Allocated: 500}},
		{webhook: "shipment-status", event: "shipment.status", rec: domain.Record{Aggregate: domain.Aggregate{Type: "shipment", ID: bookedAWB}},
			e: status},
		{webhook: "shipment-status", event: "shipment.offloaded", rec: domain.Record{Aggregate: domain.Aggregate{Type: "shipment", ID: bookedAWB}},
			e: offload},
		{webhook: "mawb", event: "mawb.created", rec: waybillRec, e: *filedWaybills.MAWB},
		{webhook: "hawb", event: "hawb.created", rec: waybillRec, e: filedWaybills.HAWBs[0]},
		{webhook: "hawb", event: "hawb.created", rec: waybillRec, e: filedWaybills.HAWBs[1]},
		{webhook: "placi", event: "placi.submitted", rec: complianceRec, e: *filings.PLACI},
		{webhook: "csd", event: "csd.submitted", rec: complianceRec, e: *filings.CSD},
		{webhook: "dgd", event: "dgd.submitted", rec: complianceRec, e: filings.DGDs[0]},
		{webhook: "dgd", event: "dgd.submitted", rec: complianceRec, e: filings.DGDs[len(filings.DGDs)-1], org: "lh"},
		{webhook: "manifest", event: "manifest.submitted", rec: flownRec, e: manifests[0], org: "lh"},
		{webhook: "manifest", event: "manifest.submitted", rec: flownRec, e: manifests[1], org: "lh"},
		{webhook: "flight-status", event: "flight.status", rec: flightRec, e: delayed},
		{webhook: "flight-status", event: "flight.status", rec: flightRec, e: delayed, org: "lh"},
		{webhook: "flight-aircraft", event: "flight.aircraft", rec: flightRec, e: swapped},
		{webhook: "flight-aircraft", event: "flight.aircraft", rec: flightRec, e: swapped, org: "lh"},
		{webhook: "offload", event: "shipment.offloaded", rec: shipmentRec, e: domain.OffloadedStatus(offloads[0].(domain.OffloadReported))},
		{webhook: "offload", event: "shipment.offloaded", rec: shipmentRec, e: domain.OffloadedStatus(offloads[1].(domain.OffloadReported)), org: "lh"},
		{webhook: "shipment-status", event: "shipment.status", rec: shipmentRec,
			e: domain.ManifestedStatus(manifests[0].(domain.ManifestSubmitted), domain.Load{AWBNumber: bookedAWB, Pieces: 4, WeightKg: 1250.5})},
		{webhook: "document", event: "document.uploaded", rec: domain.Record{Aggregate: domain.Aggregate{Type: "document", ID: uploaded.State.DocumentID}},
			e: uploaded.State},
		{webhook: "ping", event: "webhook.ping", data: map[string]string{"webhookId": acmeHook, "message": "ping from Cargostream"}},
	}
	for _, p := range payloads {
		t.Run("payload of "+p.event, func(t *testing.T) {
			data, org := p.data, cmp.Or(p.org, "acme")
			if data == nil {
				var ok bool
				if data, ok = renderer.Render(p.rec.Aggregate.Type, p.rec.Aggregate.ID, p.e, org); !ok {
					t.Fatal("not rendered for " + org)
				}
			}
			body, err := json.Marshal(struct {
				Type      string    `json:"type"`
				Timestamp time.Time `json:"timestamp"`
				Data      any       `json:"data"`
			}{p.event, created, data})
			if err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile(openAPIURL + "#" + pointer("webhooks", p.webhook, "post", "requestBody", "content", "application/json", "schema"))
			if err != nil {
				t.Fatal(err)
			}
			validateJSON(t, sch, body)
		})
	}
}

// TestOpenAPIResponsesOfValues checks the JSON of response values built
// the way the handlers build them, for the responses that need an event
// store to produce.
func TestOpenAPIResponsesOfValues(t *testing.T) {
	doc := openAPIDoc(t)
	c := openAPICompiler(t)
	created := time.Date(2026, 6, 20, 9, 14, 3, 512000000, time.UTC)
	quote := domain.Quote{
		ID: "3f2b8c1e-9a4d-5e7f-8b6a-1c2d3e4f5a6b", OrganizationID: "acme", Status: domain.QuoteStatusPending,
		Origin: "FRA", Destination: "SYD", Pieces: 4, WeightKg: 1250.5, VolumeM3: 2.16,
		Commodity: domain.Commodity{Code: "GEN", Description: "Machine parts"}, SHC: []string{"HEA"}, CreatedAt: created,
	}
	bare := domain.Quote{ID: "0b7c3f55-2f0e-4d8a-8d5e-3f1b2a9c6e21", Status: domain.QuoteStatusPending, Origin: "AMS",
		Destination: "JFK", Pieces: 1, WeightKg: 10, CreatedAt: created}
	airline := domain.Organization{ID: "lh", Name: "Lufthansa Cargo", Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH", CreatedAt: created}
	forwarder := domain.Organization{ID: "acme", Name: "Acme Forwarding", Role: domain.RoleForwarder, CreatedAt: created}
	keyCreated := views.ToAPIKeyJSON(domain.APIKey{KeyID: "k1", OrganizationID: "acme", Name: "scanner"})
	keyCreated.APIKey = "csk_abc"
	var problems domain.Problems
	problems.Add("routing.origin", domain.CodeInvalidFormat, "must be a three-letter IATA airport code")
	validation := errorBody{Error: string(domain.ValidationError), ErrorDescription: "routing.origin: bad",
		ErrorURI: "https://cargo.example.com/docs/errors#validation_error", ValidationErrors: problems}

	// Quotes after pricing, built from the events the pricing reactor records.
	priced := domain.EvolveQuote(quote, domain.QuotePriced{QuoteID: quote.ID, ChargeableWeightKg: 1250.5, PricedAt: created.Add(time.Second),
		Options: []domain.PriceOption{{FlightID: "LH8400-2026-07-01", Carrier: "LH", FlightNumber: "LH8400", DepartureDate: "2026-07-01",
			PricePerKg: 2.9, TotalAmount: 3626.45, Currency: "EUR", ValidityHours: domain.PriceValidityHours}}})
	rejectedQuote := domain.EvolveQuote(bare, domain.QuoteRejected{QuoteID: bare.ID, Reason: domain.ReasonNoRoute, RejectedAt: created})
	accepted := domain.EvolveQuote(priced, domain.QuoteAccepted{QuoteID: quote.ID, BookingID: "b", FlightID: "LH8400-2026-07-01", AcceptedAt: created})

	// Flights as published, one with the aircraft type's capacity, one
	// with its own, and one after a status change.
	capacityKg, capacityM3 := 15500.0, 98.5
	var published []domain.Flight
	var flights []views.FlightJSON
	for _, c := range []domain.ScheduleFlight{
		{FlightNumber: "lh 8400", Origin: "fra", Destination: "JFK", DepartureDate: "2026-07-01", DepartureTime: "10:35",
			ArrivalDate: "2026-07-01", ArrivalTime: "13:05", AircraftType: "b77f"},
		{FlightNumber: "LH400", Origin: "FRA", Destination: "JFK", DepartureDate: "2026-07-01", DepartureTime: "23:50",
			ArrivalDate: "2026-07-02", ArrivalTime: "02:20", AircraftType: "B744", CapacityKg: &capacityKg, CapacityM3: &capacityM3},
	} {
		c.Carrier, c.AWBPrefix, c.At = "LH", "020", created
		e, err := c.Normalise("", builtinReference())
		if err != nil {
			t.Fatal(err)
		}
		published = append(published, domain.EvolveFlight(domain.Flight{}, e))
		flights = append(flights, views.ToFlightJSON(published[len(published)-1]))
	}
	delayed := flights[0]
	delayed.Status = domain.FlightStatusDelayed
	flightList := struct {
		Flights    []views.FlightJSON   `json:"flights"`
		Pagination views.PaginationJSON `json:"pagination"`
	}{flights, views.ToPaginationJSON(1, 20, 2)}
	noFlights := flightList
	noFlights.Flights, noFlights.Pagination = []views.FlightJSON{}, views.ToPaginationJSON(1, 20, 0)
	batch := struct {
		Flights []views.FlightJSON `json:"flights"`
	}{flights}
	capacity := struct {
		Capacity   []views.CapacityJSON `json:"capacity"`
		Pagination views.PaginationJSON `json:"pagination"`
	}{[]views.CapacityJSON{
		{FlightID: "LH8400-2026-07-01", FlightNumber: "LH8400", DepartureDate: "2026-07-01", ProjectedWeight: new(1250.5), ActualWeight: new(0.0),
			ProjectedVolume: new(2.16), ActualVolume: new(0.0), AvailableWeight: 100749.5, AvailableVolume: 650.84},
		// As a forwarder sees it: what is left, in steps of 100 kg and 1 m³.
		{FlightID: "LH400-2026-07-01", FlightNumber: "LH400", DepartureDate: "2026-07-01", AvailableWeight: 42300, AvailableVolume: 118},
	}, views.ToPaginationJSON(1, 20, 2)}

	// Rate cards as the airline sets them: full, and minimal with a
	// wildcard destination.
	var cards []views.RateCardJSON
	for _, c := range []domain.SetRateCard{
		{Origin: "fra", Destination: "jfk", Currency: "eur", MinimumCharge: 85,
			WeightBreaks: map[string]float64{"N": 4.1, "45": 3.2, "100": 2.9, "300": 2.6, "500": 2.4, "1000": 2.1},
			Surcharges:   map[string]float64{"DGR": 0.5}, NotAccepted: []string{"rry"}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31"},
		{Origin: "FRA", Destination: "*", Currency: "USD", WeightBreaks: map[string]float64{"N": 5}, ValidFrom: "2026-06-20", ValidTo: "2026-06-20"},
	} {
		c.Carrier, c.At = "LH", created
		events, err := domain.DecideSetRateCard(c, builtinReference())
		if err != nil {
			t.Fatal(err)
		}
		cards = append(cards, views.ToRateCardJSON(events[0].(domain.RateCardSet).RateCard))
	}

	// A booking as filed, and each of its outcomes.
	pieces, gross, chargeable := 4, 1250.5, 1250.5
	filed, err := domain.DecideRequestBooking(domain.Booking{}, priced, published[0], domain.RequestBooking{
		BookingID: "9d3c5e2a-6b1f-5a4e-8c7d-2e1f0a9b8c7d", QuoteID: quote.ID, FlightID: "LH8400-2026-07-01", OrganizationID: "acme",
		Pieces: &pieces, GrossWeightKg: &gross, ChargeableWeightKg: &chargeable, AWBPrefix: "020", AWBSerial: "12345675",
		Shipper: domain.FullParty{Name: "ACME Machine Tools", Address: "Hafenstr. 1, Frankfurt"}, Consignee: domain.FullParty{Name: "Globex Pty", Contact: "ops@globex.example"},
		Routing: []domain.RoutingLeg{{From: "FRA", To: "JFK", Carrier: "LH", FlightNumber: "LH8400", Date: "2026-07-01"},
			{From: "JFK", To: "SYD", Carrier: "QF", FlightNumber: "QF12", Date: "2026-07-02"}},
		Dimensions: []domain.SentDimensionLine{{L: new(120.0), W: new(80.0), H: new(100.0), Pieces: new(4)}}, At: created})
	if err != nil {
		t.Fatal(err)
	}
	pending := domain.EvolveBooking(domain.Booking{}, filed[0])
	withoutAWB := pending
	withoutAWB.AWBNumber = ""
	confirmed := domain.EvolveBooking(pending, domain.BookingConfirmed{BookingID: pending.ID, FlightID: pending.FlightID, AWBNumber: pending.AWBNumber, ConfirmedAt: created})
	rejected := domain.EvolveBooking(pending, domain.BookingRejected{BookingID: pending.ID, Reason: domain.ReasonNoCapacity, RejectedAt: created})
	cancelled := domain.EvolveBooking(confirmed, domain.BookingCancelled{BookingID: pending.ID, CancelledAt: created})
	bookingList := struct {
		Bookings   []views.BookingJSON  `json:"bookings"`
		Pagination views.PaginationJSON `json:"pagination"`
	}{[]views.BookingJSON{views.ToBookingJSON(confirmed), views.ToBookingJSON(rejected), views.ToBookingJSON(withoutAWB)}, views.ToPaginationJSON(1, 20, 3)}

	// A stock request as filed, and the airline's replies to it: approved
	// with a range of its own, approved with the range the service
	// allocates, partially approved, and rejected with and without a
	// reason. The reply's response is built as handleReplyStock builds it.
	requested, validityPeriod := 500, 12
	filedStock, err := domain.DecideRequestStock(domain.StockRequest{}, domain.RequestStock{RequestID: "6f1d2c3b-4a5e-5f60-8172-93a4b5c6d7e8",
		OrganizationID: "acme", AirlinePrefix: "020", RequestedStock: &requested, ValidityPeriod: &validityPeriod, Notes: "peak season", At: created},
		func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	stockPending := domain.EvolveStockRequest(domain.StockRequest{}, filedStock[0])
	replied := func(c domain.ReplyStock, allocated domain.AWBRange) domain.StockRequest {
		t.Helper()
		c.At = created.Add(time.Hour)
		rng, err := c.Validate(stockPending)
		if err != nil {
			t.Fatal(err)
		}
		if rng.Count > 0 {
			allocated = rng
		}
		events, err := domain.DecideReplyStock(stockPending, c, allocated)
		if err != nil {
			t.Fatal(err)
		}
		return domain.EvolveStockRequest(stockPending, events[0])
	}
	replyOf := func(st domain.StockRequest) views.StockReplyJSON {
		out := views.StockReplyJSON{RequestID: st.ID, Status: st.Status, AllocatedStock: st.AllocatedStock, RepliedAt: st.ProcessedAt,
			ValidFrom: st.ValidFrom, ValidTo: st.ValidTo, Notes: st.ApprovalNotes}
		if st.Range.Count > 0 {
			out.StartNumber = domain.AWBNumber(st.AirlinePrefix, st.Range.First)
			out.EndNumber = domain.AWBNumber(st.AirlinePrefix, st.Range.Last())
		}
		return out
	}
	all, half, none := 500, 250, 0
	stockApproved := replied(domain.ReplyStock{Status: domain.StockStatusApproved, AllocatedStock: &all, ValidFrom: "2026-07-01", ValidTo: "2027-06-20",
		StartNumber: "020-10000012", EndNumber: "02010005004", Notes: "for the peak"}, domain.AWBRange{})
	stockAllocated := replied(domain.ReplyStock{Status: domain.StockStatusApproved, AllocatedStock: &all, ValidFrom: "2026-07-01", ValidTo: "2027-06-20"},
		domain.AWBRange{First: 1, Count: 500})
	stockPartial := replied(domain.ReplyStock{Status: domain.StockStatusPartiallyApproved, AllocatedStock: &half, ValidFrom: "2026-07-01",
		ValidTo: "2026-12-31"}, domain.AWBRange{First: 1000501, Count: 250})
	stockRejected := replied(domain.ReplyStock{Status: domain.StockStatusRejected, AllocatedStock: &none, ValidFrom: "2026-07-01", ValidTo: "2026-07-01",
		RejectionReason: "credit limit reached"}, domain.AWBRange{})
	stockRejectedBare := replied(domain.ReplyStock{Status: domain.StockStatusRejected, AllocatedStock: &none, ValidFrom: "2026-07-01", ValidTo: "2026-07-01"},
		domain.AWBRange{})
	stockList := struct {
		Requests   []views.StockRequestJSON `json:"requests"`
		Pagination views.PaginationJSON     `json:"pagination"`
	}{[]views.StockRequestJSON{views.ToStockRequestJSON(stockPending), views.ToStockRequestJSON(stockApproved), views.ToStockRequestJSON(stockPartial),
		views.ToStockRequestJSON(stockRejected), views.ToStockRequestJSON(stockRejectedBare)}, views.ToPaginationJSON(1, 20, 5)}
	noStockRequests := struct {
		Requests   []views.StockRequestJSON `json:"requests"`
		Pagination views.PaginationJSON     `json:"pagination"`
	}{[]views.StockRequestJSON{}, views.ToPaginationJSON(1, 20, 0)}
	var stockProblems domain.Problems
	stockProblems.Add("startNumber", domain.CodeRangeOverlap, "overlaps")
	stockValidation := errorBody{Error: string(domain.ValidationError), ErrorDescription: "startNumber: overlaps",
		ErrorURI: "https://cargo.example.com/docs/errors#validation_error", ValidationErrors: stockProblems}

	// The audit log of a created organisation, its limits changed, a
	// folded failed login and an import, as handleAuditLogs answers it,
	// its entries read from the events stored.
	auditLog, events, last := projections.NewAudit(), storetest.Open(t), map[domain.Aggregate]uint64{}
	for i, e := range []struct {
		agg   domain.Aggregate
		event domain.Event
	}{
		{domain.Aggregate{Type: "org", ID: "acme"}, domain.OrganizationCreated{OrganizationID: "acme", Name: "Acme Forwarding", Role: domain.RoleForwarder, CreatedAt: created}},
		{domain.Aggregate{Type: "org", ID: "acme"}, domain.OrganizationRateLimitsSet{OrganizationID: "acme", Limits: domain.RateLimits{PerMinute: 5}, SetAt: created}},
		{domain.Aggregate{Type: "org", ID: "acme"}, domain.OrganizationRateLimitsSet{OrganizationID: "acme", Limits: domain.RateLimits{PerDay: 900}, SetAt: created}},
		{domain.Aggregate{Type: "auth", ID: "a1"}, domain.AuthorizationRecorded{Action: domain.ActionLoginFailed, Subject: "client:acme-tms",
			Detail: "client_credentials: invalid client credentials", Repeats: 4, At: created}},
		{domain.Aggregate{Type: "reference", ID: "airports"}, domain.ReferenceChanged{Kind: domain.RefAirports, Source: "airports.csv", ChangedAt: created}},
	} {
		data, err := json.Marshal(e.event)
		if err != nil {
			t.Fatal(err)
		}
		seqs, err := events.Append(t.Context(), e.agg, last[e.agg], []domain.Envelope{{Type: e.event.EventType(), SchemaVersion: 1,
			EventID: "8c1d7e0a-5b2f-5c3d-9e4f-0a1b2c3d4e5" + strconv.Itoa(i), Actor: "client:ops", Tenant: "ops", ClientIP: "198.51.100.23",
			OccurredAt: created.Add(time.Duration(i) * time.Second), Data: data}})
		if err != nil {
			t.Fatal(err)
		}
		last[e.agg] = seqs[0]
		stored, err := events.RecordsAt(t.Context(), seqs)
		if err != nil {
			t.Fatal(err)
		}
		auditLog.Apply(stored[0], e.event)
	}
	type auditLogJSON struct {
		Logs       []views.AuditEntryJSON `json:"logs"`
		Pagination views.PaginationJSON   `json:"pagination"`
	}
	entries, total, err := auditLog.Entries(t.Context(), events, projections.AuditFilter{}, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	auditPage := auditLogJSON{Logs: []views.AuditEntryJSON{}, Pagination: views.ToPaginationJSON(1, 20, total)}
	for _, e := range entries {
		auditPage.Logs = append(auditPage.Logs, views.ToAuditEntryJSON(e))
	}
	if len(auditPage.Logs) < 5 {
		t.Fatalf("audit log: %+v", auditPage)
	}
	limits := views.RateLimitsJSON{RequestsPerMinute: 5, RequestsPerHour: 20000, RequestsPerDay: 200000}
	usageOf := func(period string, byStatus, byDay map[string]int64) views.UsageJSON {
		return views.UsageJSON{Period: period, TotalRequests: 1532, RequestsByEndpoint: map[string]int64{"/api/quotes": 1204, "/api/quotes/{id}": 311, "/api/bookings": 17},
			RequestsByStatus: byStatus, RequestsByDay: byDay, RateLimits: limits, OrganizationID: "acme"}
	}

	// Status events of the confirmed booking's AWB as DecideRecordStatus
	// records them, and the responses built of them as handleRecordStatus,
	// handleShipmentEvents and handleShipment build them.
	two, oneCrate, weighed := 2, 1, 625.25
	var timeline []projections.TimelineEntry
	for i, c := range []domain.RecordStatus{
		{EventType: "rcs", EventDate: "2026-06-30T16:05:00+02:00", Location: "fra", Pieces: &pieces, Weight: &gross, Notes: "4 crates"},
		{EventType: "DIS/OFLD", EventDate: "2026-07-01T09:50:00Z", Location: "FRA", Pieces: &oneCrate, Notes: "one crate short"},
		{EventType: "dis", DiscrepancyCode: "fdca", EventDate: "2026-07-01T10:10:00Z", Location: "FRA", Pieces: &two, Weight: &weighed},
		{EventType: "DEP", EventDate: "2026-07-01T10:35:00Z", Location: "FRA"},
	} {
		c.AWBNumber, c.StatusEventID, c.At = confirmed.AWBNumber, "5c0f2b7e-1d3a-5b49-8e6f-7a8b9c0d1e2"+strconv.Itoa(i), time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
		events, _, err := domain.DecideRecordStatus(domain.Shipment{}, c, builtinReference())
		if err != nil {
			t.Fatal(err)
		}
		timeline = append(timeline, projections.TimelineEntry{Event: events[0].(domain.ShipmentStatusRecorded), Source: projections.SourceStatus})
	}
	createdOf := func(e domain.ShipmentStatusRecorded) views.StatusEventCreatedJSON {
		code := e.StatusCode
		if e.DiscrepancyCode != "" {
			code += "/" + e.DiscrepancyCode
		}
		return views.StatusEventCreatedJSON{EventID: e.StatusEventID, AWBNumber: e.AWBNumber, EventType: code, RecordedAt: e.RecordedAt}
	}
	type eventListJSON struct {
		AWBNumber string                  `json:"awbNumber"`
		Events    []views.StatusEventJSON `json:"events"`
	}
	eventList := eventListJSON{AWBNumber: confirmed.AWBNumber, Events: []views.StatusEventJSON{}}
	for _, e := range timeline {
		eventList.Events = append(eventList.Events, views.ToStatusEventJSON(e))
	}
	// Waybills as handleCreateMAWB and handleCreateHAWB file them: a
	// master with every field and one with the least, and houses under the
	// first.
	mawbPieces, mawbWeight, mawbVolume := 4, 1250.5, 2.16
	fullMAWB, err := domain.DecideCreateMAWB(domain.Waybills{}, domain.CreateMAWB{AWBNumber: confirmed.AWBNumber, OrganizationID: "acme",
		Origin: "fra", Destination: "JFK", Pieces: &mawbPieces, WeightKg: &mawbWeight, VolumeM3: &mawbVolume, Commodity: "gen",
		Shipper:   domain.FullParty{Name: "ACME Consolidators GmbH", Address: "Cargo City Süd, 60549 Frankfurt", Contact: "+49 69 1234567"},
		Consignee: domain.FullParty{Name: "ACME USA Inc."}, At: created}, builtinReference())
	if err != nil {
		t.Fatal(err)
	}
	leastPieces, leastWeight := 1, 0.5
	leastMAWB, err := domain.DecideCreateMAWB(domain.Waybills{}, domain.CreateMAWB{AWBNumber: "020-10000023", OrganizationID: "acme",
		Origin: "AMS", Destination: "FRA", Pieces: &leastPieces, WeightKg: &leastWeight,
		Shipper: domain.FullParty{Name: "a"}, Consignee: domain.FullParty{Name: "b"}, At: created}, builtinReference())
	if err != nil {
		t.Fatal(err)
	}
	waybills := domain.EvolveWaybills(domain.Waybills{}, fullMAWB[0])
	for i, h := range []struct {
		number string
		pieces int
		weight float64
	}{{"acme0001", 2, 600}, {"H2", 2, 650.5}} {
		events, err := domain.DecideCreateHAWB(waybills, domain.CreateHAWB{HAWBNumber: h.number, MAWBNumber: confirmed.AWBNumber, OrganizationID: "acme",
			Pieces: &h.pieces, WeightKg: &h.weight, Shipper: domain.FullParty{Name: "Shipper " + strconv.Itoa(i)},
			Consignee: domain.FullParty{Name: "Consignee", Contact: "receiving@example.com"}, At: created})
		if err != nil {
			t.Fatal(err)
		}
		waybills = domain.EvolveWaybills(waybills, events[0])
	}
	mawbOf := func(e domain.Event) *views.MAWBJSON {
		m := views.ToMAWBJSON(e.(domain.MAWBCreated))
		return &m
	}
	houses := []views.HAWBJSON{}
	for _, h := range waybills.HAWBs {
		houses = append(houses, views.ToHAWBJSON(h))
	}
	var waybillProblems domain.Problems
	waybillProblems.Add("awbNumber", domain.CodeAWBNotInStock, "020-10000023 is not in your stock")
	waybillProblems.Add("pieces", domain.CodeExceedsMAWB, "the houses would hold 5 pieces, the master 4")
	waybillProblems.Add("mawbNumber", domain.CodeUnknownMAWB, "no MAWB 020-10000023 of yours")
	waybillValidation := errorBody{Error: string(domain.ValidationError), ErrorDescription: "awbNumber: not in stock",
		ErrorURI: "https://cargo.example.com/docs/errors#validation_error", ValidationErrors: waybillProblems}

	confirmedJSON, latest := views.ToBookingJSON(confirmed), views.ToStatusEventJSON(timeline[len(timeline)-1])
	shipment := views.ShipmentJSON{AWBNumber: confirmed.AWBNumber, Booking: &confirmedJSON, HAWBs: []views.HAWBJSON{}, DangerousGoods: []views.DGDJSON{}, Documents: []views.DocumentJSON{}, LatestEvent: &latest,
		Declared: views.CargoJSON{Pieces: &confirmed.Pieces, Weight: &confirmed.WeightKg}, Reported: views.CargoJSON{Pieces: &two, Weight: &weighed}, EventCount: len(timeline)}
	var statusProblems domain.Problems
	statusProblems.Add("discrepancyCode", domain.CodeInvalidEventType, "a DIS event needs a discrepancy code")
	statusValidation := errorBody{Error: string(domain.ValidationError), ErrorDescription: "discrepancyCode: a DIS event needs a discrepancy code",
		ErrorURI: "https://cargo.example.com/docs/errors#validation_error", ValidationErrors: statusProblems}

	// A refusal of the domain, as writeError answers it.
	refusal := func(err error) errorBody {
		t.Helper()
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.ValidationError || len(de.Fields) == 0 {
			t.Fatalf("not a validation error: %v", err)
		}
		return errorBody{Error: string(de.Code), ErrorDescription: de.Message, ErrorURI: "https://cargo.example.com/docs/errors#" + string(de.Code), ValidationErrors: de.Fields}
	}
	amount := func(v float64) *float64 { return &v }
	count := func(n int) *int { return &n }

	// e-DGDs as handleSubmitDGD files them, checked against the built-in
	// reference data: goods as the reference names them, with a name of
	// the shipper's own and of a UN number the reference does not list
	// (review notes), a limited and an excepted quantity, an explosive of a
	// compatibility group; and the refusals of each check.
	dgdOf := func(i int, c domain.SubmitDGD) (domain.DGDSubmitted, error) {
		c.DGDID, c.AWBNumber, c.OrganizationID, c.SubmittedAt = "8e3f1a2b-4c5d-5e6f-9a0b-1c2d3e4f5a6"+strconv.Itoa(i), confirmed.AWBNumber, "acme", created
		if c.ShipperDeclaration == "" {
			c.ShipperDeclaration = "I declare that the contents of this consignment are fully and accurately described. Signed: J. Miller"
		}
		events, err := domain.DecideDGD(c, builtinReference())
		if err != nil {
			return domain.DGDSubmitted{}, err
		}
		return events[0].(domain.DGDSubmitted), nil
	}
	var dgdEvents []domain.DGDSubmitted
	var dgds []views.DGDJSON
	for i, c := range []domain.SubmitDGD{
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "un3480", ProperShippingName: "Lithium ion batteries", Class: "9", GrossWeightKg: amount(42.5),
			PackingInstructions: "965"}, Quantity: amount(35), NetWeightKg: amount(35)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1845", ProperShippingName: "Frozen carbon dioxide", Class: "9", PackingInstructions: "954"},
			Quantity: amount(200), NetWeightKg: amount(200)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1230", ProperShippingName: "Methanol", Class: "3", PackingGroup: "ii", PackingInstructions: "364"},
			Quantity: amount(1), NetWeightKg: amount(0.8)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1263", ProperShippingName: "Paint", Class: "3", PackingGroup: "II", PackingInstructions: "y341",
			LimitedQuantity: true}, Quantity: amount(5), NetWeightKg: amount(4.5)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1170", ProperShippingName: "Ethanol solutions", Class: "3", PackingGroup: "II", ExceptedQuantity: true},
			Quantity: amount(0.03), NetWeightKg: amount(0.03)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN0012", ProperShippingName: "Cartridges, small arms", Class: "1.4s", GrossWeightKg: amount(15),
			PackingInstructions: "130"}, Quantity: amount(12), NetWeightKg: amount(12)},
	} {
		d, err := dgdOf(i, c)
		if err != nil {
			t.Fatal(err)
		}
		dgdEvents = append(dgdEvents, d)
		dgds = append(dgds, views.ToDGDJSON(d))
	}
	if dgds[0].ReviewNotes != "" || dgds[1].ReviewNotes == "" || dgds[2].ReviewNotes == "" {
		t.Fatalf("review notes: %q, %q, %q", dgds[0].ReviewNotes, dgds[1].ReviewNotes, dgds[2].ReviewNotes)
	}
	_, awbErr := awbField("awbNumber", "020-12345670")
	dgdRefusals := []errorBody{refusal(awbErr)}
	for i, c := range []domain.SubmitDGD{
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "1845", Class: "10", PackingGroup: "IV", PackingInstructions: "95", LimitedQuantity: true,
			ExceptedQuantity: true, GrossWeightKg: amount(-2), ShipperDeclaration: " "}, Quantity: amount(0), NetWeightKg: amount(-1)},
		{DGDSubmitted: domain.DGDSubmitted{ShipperDeclaration: " "}},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1845", ProperShippingName: "Dry ice", Class: "3", PackingGroup: "II", PackingInstructions: "954"},
			Quantity: amount(200), NetWeightKg: amount(200)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1950", ProperShippingName: "Aerosols, flammable", Class: "2.1", PackingGroup: "II", PackingInstructions: "203"},
			Quantity: amount(10), NetWeightKg: amount(10)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN1263", ProperShippingName: "Paint", Class: "3", PackingInstructions: "Y341", GrossWeightKg: amount(4)},
			Quantity: amount(5), NetWeightKg: amount(5)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN2910", ProperShippingName: "Radioactive material, excepted package", Class: "7", PackingInstructions: "Y123",
			LimitedQuantity: true}, Quantity: amount(1), NetWeightKg: amount(1)},
		{DGDSubmitted: domain.DGDSubmitted{UNNumber: "UN3480", ProperShippingName: strings.Repeat("L", 201), Class: "9", PackingInstructions: "Y965",
			ExceptedQuantity: true, ShipperDeclaration: strings.Repeat("s", 2001)}, Quantity: amount(1), NetWeightKg: amount(1)},
	} {
		_, err := dgdOf(len(dgds)+i, c)
		dgdRefusals = append(dgdRefusals, refusal(err))
	}

	// Manifests of a flight as handleSubmitManifest files them: without
	// totals, with totals from the airline's scales that differ from the
	// declarations; and refusals. Then offloads of the manifested cargo as
	// handleReportOffload reports them, and their refusals.
	lh400, err := domain.ScheduleFlight{Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH400", Origin: "FRA", Destination: "JFK", DepartureDate: "2026-07-01",
		DepartureTime: "23:50", ArrivalDate: "2026-07-02", ArrivalTime: "02:20", AircraftType: "B77F", At: created}.Normalise("", builtinReference())
	if err != nil {
		t.Fatal(err)
	}
	flight := domain.EvolveFlight(domain.Flight{}, lh400)
	onBoard := []domain.ManifestCandidate{
		{Load: domain.Load{AWBNumber: confirmed.AWBNumber, Pieces: 4, WeightKg: 1250.5, VolumeM3: 2.16}, Known: true},
		{Load: domain.Load{AWBNumber: "020-10000012", Pieces: 2, WeightKg: 600, VolumeM3: 1.25}, Known: true},
	}
	manifestAt := time.Date(2026, 7, 1, 20, 15, 31, 902000000, time.UTC)
	manifestOf := func(i int, c domain.SubmitManifest) (domain.ManifestSubmitted, error) {
		c.ManifestID, c.Carrier, c.At = "3c7a9e1b-2d4f-5a6b-8c0d-1e2f3a4b5c6"+strconv.Itoa(i), "LH", manifestAt
		events, err := domain.DecideSubmitManifest(flight, c)
		if err != nil {
			return domain.ManifestSubmitted{}, err
		}
		return events[0].(domain.ManifestSubmitted), nil
	}
	var manifests []domain.ManifestSubmitted
	for i, c := range []domain.SubmitManifest{
		{Shipments: onBoard},
		{FlightID: flight.ID, Shipments: onBoard, TotalPieces: count(6), TotalWeight: amount(1862), TotalVolume: amount(3.5)},
		{FlightID: flight.ID, Shipments: onBoard[:1], TotalPieces: count(6), TotalWeight: amount(1250), TotalVolume: amount(0)},
	} {
		m, err := manifestOf(i, c)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, m)
	}
	if len(manifests[0].Differences) != 0 || len(manifests[1].Differences) != 2 || len(manifests[2].Differences) != 3 {
		t.Fatalf("differences: %+v", manifests)
	}
	var badAWBs domain.Problems
	for i, n := range []string{"020-12345670", confirmed.AWBNumber, "x"} {
		if _, err := domain.ParseAWB(n); err != nil {
			badAWBs.Add("awbNumbers["+strconv.Itoa(i)+"]", domain.CodeInvalidAWBNumber, "%s", err.Error())
		}
	}
	tooMany := make([]domain.ManifestCandidate, 1001)
	for i := range tooMany {
		tooMany[i] = domain.ManifestCandidate{Load: domain.Load{AWBNumber: domain.AWBNumber("020", 2000000+i), Pieces: 1, WeightKg: 1}, Known: true}
	}
	manifestRefusals := []errorBody{refusal(badAWBs.Err())}
	for i, c := range []domain.SubmitManifest{
		{FlightID: "LH8400-2026-07-01", Shipments: []domain.ManifestCandidate{onBoard[0], onBoard[0], {Load: domain.Load{AWBNumber: "020-99999992"}}},
			TotalPieces: count(-1), TotalWeight: amount(-5), TotalVolume: amount(1e9)},
		{},
		{Shipments: tooMany},
	} {
		_, err := manifestOf(len(manifests)+i, c)
		manifestRefusals = append(manifestRefusals, refusal(err))
	}
	loaded := domain.EvolveFlight(flight, manifests[1])
	offloadOf := func(i int, c domain.ReportOffload) (domain.OffloadReported, error) {
		c.OffloadID, c.Carrier, c.At = "6d2b8f0a-4e1c-5b3d-9f7a-2c4e6a8b0d1"+strconv.Itoa(i), "LH", manifestAt.Add(time.Duration(i+1)*time.Hour)
		events, err := domain.DecideReportOffload(loaded, c)
		if err != nil {
			return domain.OffloadReported{}, err
		}
		return events[0].(domain.OffloadReported), nil
	}
	var offloads []domain.OffloadReported
	for i, c := range []domain.ReportOffload{
		{AWBNumber: confirmed.AWBNumber, Reason: " weight and balance ", Pieces: count(1), WeightKg: amount(312.5), Notes: "one crate left at FRA, rebooked on LH8400"},
		{AWBNumber: "020-10000012", Reason: "damaged", Pieces: count(2), WeightKg: amount(600)},
	} {
		o, err := offloadOf(i, c)
		if err != nil {
			t.Fatal(err)
		}
		offloads = append(offloads, o)
		loaded = domain.EvolveFlight(loaded, o)
	}
	var noFlight domain.Problems
	noFlight.Add("flightId", domain.CodeRequired, "is required")
	offloadRefusals := []errorBody{refusal(awbErr), refusal(noFlight.Err())}
	for i, c := range []domain.ReportOffload{
		{AWBNumber: confirmed.AWBNumber, Reason: "damaged", Pieces: count(4), WeightKg: amount(1000)},
		{AWBNumber: "020-10000012", Reason: " ", Pieces: count(0), Notes: strings.Repeat("n", 2001)},
		{AWBNumber: confirmed.AWBNumber, Reason: strings.Repeat("r", 201), Pieces: count(1), WeightKg: amount(-1)},
	} {
		_, err := offloadOf(len(offloads)+i, c)
		offloadRefusals = append(offloadRefusals, refusal(err))
	}
	// The capacity of the flight, as handleCapacity reports it.
	loadedCapacity := struct {
		Capacity   []views.CapacityJSON `json:"capacity"`
		Pagination views.PaginationJSON `json:"pagination"`
	}{[]views.CapacityJSON{views.ToCapacityJSON(loaded, domain.Principal{OrganizationID: airline.ID, Role: airline.Role, AirlineCode: airline.AirlineCode}, created)}, views.ToPaginationJSON(1, 20, 1)}
	if loaded.ActualKg != 1862-312.5-600 || loaded.ActualM3 <= 0 {
		t.Fatalf("actual load of %s: %v kg, %v m³", loaded.ID, loaded.ActualKg, loaded.ActualM3)
	}

	// The timeline of the shipment with an entry of every source, as the
	// shipments read model derives it, and the shipment consolidated of it
	// as handleShipment builds it.
	placiFiled, err := domain.DecidePLACI(domain.PLACISubmitted{PLACIID: "5b1e7c2a-3d4f-5a6b-8c9d-0e1f2a3b4c5d", AWBNumber: confirmed.AWBNumber, OrganizationID: "acme",
		Origin: "fra", Destination: "JFK", DepartureDate: "2026-07-01", CargoDescription: "Machine parts: gearboxes", ShipperName: "ACME Consolidators GmbH",
		ConsigneeName: "ACME USA Inc.", Pieces: &pieces, WeightKg: &gross, SubmittedAt: created}, domain.Journey{}, builtinReference())
	if err != nil {
		t.Fatal(err)
	}
	csdFiled, err := domain.DecideCSD(domain.SubmitCSD{CSDSubmitted: domain.CSDSubmitted{CSDID: "7c2d9e1f-4a5b-5c6d-9e8f-1a2b3c4d5e6f", AWBNumber: confirmed.AWBNumber,
		OrganizationID: "acme", Exemption: "mail", SubmittedAt: created}})
	if err != nil {
		t.Fatal(err)
	}
	derived := projections.NewShipments()
	for i, e := range []struct {
		agg   string
		event domain.Event
	}{
		{"waybill", fullMAWB[0]}, {"waybill", waybills.HAWBs[0]}, {"waybill", waybills.HAWBs[1]},
		{"compliance", placiFiled[0]}, {"compliance", csdFiled[0]}, {"compliance", dgdEvents[0]}, {"compliance", dgdEvents[3]},
		{"shipment", timeline[0].Event}, {"shipment", timeline[3].Event},
		{"shipment", domain.ManifestedStatus(manifests[1], manifests[1].Shipments[0])}, {"shipment", domain.OffloadedStatus(offloads[0])},
	} {
		id := confirmed.AWBNumber
		derived.Apply(domain.Record{Aggregate: domain.Aggregate{Type: e.agg, ID: id},
			Envelope: domain.Envelope{Type: e.event.EventType(), EventID: "1b3d5f7a-9c2e-5f4a-8b6d-0e2a4c6e8f" + strconv.Itoa(10+i)}}, e.event)
	}
	fullTimeline := derived.Timeline(confirmed.AWBNumber)
	fullList := eventListJSON{AWBNumber: confirmed.AWBNumber, Events: []views.StatusEventJSON{}}
	sources := map[string]bool{}
	for _, e := range fullTimeline {
		sources[e.Source] = true
		fullList.Events = append(fullList.Events, views.ToStatusEventJSON(e))
	}
	if len(sources) != 8 || len(fullTimeline) != 11 {
		t.Fatalf("timeline of %d entries of sources %v", len(fullTimeline), sources)
	}
	declarations := derived.Compliance(confirmed.AWBNumber)
	placiJ, csdJ := views.ToPLACIJSON(*declarations.PLACI), views.ToCSDJSON(*declarations.CSD)
	consolidated := views.ShipmentJSON{AWBNumber: confirmed.AWBNumber, Booking: &confirmedJSON, MAWB: mawbOf(fullMAWB[0]), HAWBs: houses, PLACI: &placiJ, CSD: &csdJ,
		DangerousGoods: []views.DGDJSON{}, Documents: []views.DocumentJSON{}, Declared: views.CargoJSON{Pieces: &mawbPieces, Weight: &mawbWeight}, EventCount: len(fullTimeline)}
	for _, d := range declarations.DGDs {
		consolidated.DangerousGoods = append(consolidated.DangerousGoods, views.ToDGDJSON(d))
	}
	for _, e := range fullTimeline {
		if e.IsStatus() {
			latest := views.ToStatusEventJSON(e)
			consolidated.LatestEvent = &latest
			if e.Event.StatusCode != "DIS" {
				consolidated.Reported.Pieces, consolidated.Reported.Weight = cmp.Or(e.Event.Pieces, consolidated.Reported.Pieces), cmp.Or(e.Event.Weight, consolidated.Reported.Weight)
			}
		}
	}
	if consolidated.LatestEvent == nil || consolidated.LatestEvent.Source != projections.SourceOffload || len(consolidated.DangerousGoods) != 2 {
		t.Fatalf("shipment: %+v", consolidated)
	}

	tests := []struct {
		name   string
		path   string
		method string
		status int
		value  any
	}{
		{"status event recorded", "/api/shipments/{awb}/events", "post", 201, createdOf(timeline[0].Event)},
		{"offload recorded", "/api/shipments/{awb}/events", "post", 201, createdOf(timeline[1].Event)},
		{"status event invalid", "/api/shipments/{awb}/events", "post", 400, statusValidation},
		{"status events", "/api/shipments/{awb}/events", "get", 200, eventList},
		{"no status events matching", "/api/shipments/{awb}/events", "get", 200, eventListJSON{AWBNumber: confirmed.AWBNumber, Events: []views.StatusEventJSON{}}},
		{"shipment", "/api/shipments/{awb}", "get", 200, shipment},
		{"shipment before its first status event", "/api/shipments/{awb}", "get", 200, views.ShipmentJSON{AWBNumber: confirmed.AWBNumber, Booking: &confirmedJSON,
			HAWBs: []views.HAWBJSON{}, DangerousGoods: []views.DGDJSON{}, Documents: []views.DocumentJSON{}, Declared: views.CargoJSON{Pieces: &confirmed.Pieces, Weight: &confirmed.WeightKg}}},
		{"shipment without a booking", "/api/shipments/{awb}", "get", 200, views.ShipmentJSON{AWBNumber: confirmed.AWBNumber, HAWBs: []views.HAWBJSON{}, DangerousGoods: []views.DGDJSON{}, Documents: []views.DocumentJSON{},
			LatestEvent: &latest, EventCount: len(timeline)}},
		{"shipment with its waybills", "/api/shipments/{awb}", "get", 200, views.ShipmentJSON{AWBNumber: confirmed.AWBNumber, Booking: &confirmedJSON,
			MAWB: mawbOf(fullMAWB[0]), HAWBs: houses, DangerousGoods: []views.DGDJSON{}, Documents: []views.DocumentJSON{}, LatestEvent: &latest, Declared: views.CargoJSON{Pieces: &mawbPieces, Weight: &mawbWeight},
			Reported: views.CargoJSON{Pieces: &two, Weight: &weighed}, EventCount: len(timeline)}},
		{"shipment of a MAWB only", "/api/shipments/{awb}", "get", 200, views.ShipmentJSON{AWBNumber: "020-10000023", MAWB: mawbOf(leastMAWB[0]), HAWBs: []views.HAWBJSON{},
			DangerousGoods: []views.DGDJSON{}, Documents: []views.DocumentJSON{}, Declared: views.CargoJSON{Pieces: &leastPieces, Weight: &leastWeight}}},
		{"shipment with its declarations, manifest and offload", "/api/shipments/{awb}", "get", 200, consolidated},
		{"timeline of every source", "/api/shipments/{awb}/events", "get", 200, fullList},
		{"capacity of a manifested flight", "/api/capacity", "get", 200, loadedCapacity},
		{"MAWB filed", "/api/mawb", "post", 201, views.MAWBCreatedJSON{AWBNumber: confirmed.AWBNumber, Status: "created", CreatedAt: fullMAWB[0].(domain.MAWBCreated).CreatedAt}},
		{"MAWB invalid", "/api/mawb", "post", 400, waybillValidation},
		{"HAWB filed", "/api/hawb", "post", 201, houses[0]},
		{"HAWB invalid", "/api/hawb", "post", 400, waybillValidation},
		{"RFQ", "/api/quotes", "post", 201, views.ToQuoteJSON(quote, domain.Principal{}, nil)},
		{"RFQ without SHC", "/api/quotes", "post", 201, views.ToQuoteJSON(bare, domain.Principal{}, nil)},
		{"RFQ invalid", "/api/quotes", "post", 400, validation},
		{"quote", "/api/quotes/{id}", "get", 200, views.ToQuoteJSON(quote, domain.Principal{}, nil)},
		{"quote list", "/api/quotes", "get", 200, views.QuoteListJSON{Quotes: []views.QuoteJSON{views.ToQuoteJSON(quote, domain.Principal{}, nil), views.ToQuoteJSON(bare, domain.Principal{}, nil)}, Pagination: views.ToPaginationJSON(1, 20, 2)}},
		{"quote by id", "/api/quotes", "get", 200, views.QuoteListJSON{Quotes: []views.QuoteJSON{views.ToQuoteJSON(quote, domain.Principal{}, nil)}, Pagination: views.ToPaginationJSON(1, 20, 1)}},
		{"token", "/api/auth/token", "post", 200, newTokenResponse("a.b.c", time.Hour)},
		{"airline", "/api/admin/organizations", "post", 201, views.ToOrganizationJSON(airline)},
		{"forwarder", "/api/admin/organizations", "post", 201, views.ToOrganizationJSON(forwarder)},
		{"organisations", "/api/admin/organizations", "get", 200, struct {
			Organizations []views.OrganizationJSON `json:"organizations"`
		}{[]views.OrganizationJSON{views.ToOrganizationJSON(airline), views.ToOrganizationJSON(forwarder)}}},
		{"client", "/api/admin/clients", "post", 201, views.ToClientJSON(domain.Client{ClientID: "tms", OrganizationID: "acme"}, "cs_abc")},
		{"user", "/api/admin/users", "post", 201, views.ToUserJSON(domain.User{Username: "ana", OrganizationID: "acme"})},
		{"rotated client", "/api/admin/clients/{id}/secret", "post", 200, views.ToClientJSON(domain.Client{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusDisabled}, "cs_abc")},
		{"disabled client", "/api/admin/clients/{id}/disable", "post", 200, views.ToClientStatusJSON(domain.Client{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusDisabled})},
		{"disabled user", "/api/admin/users/{username}/disable", "post", 200, views.ToUserJSON(domain.User{Username: "ana", OrganizationID: "acme", Status: domain.StatusDisabled})},
		{"disabled organisation", "/api/admin/organizations/{id}/disable", "post", 200, views.ToOrganizationJSON(domain.Organization{ID: "acme", Name: "Acme", Role: domain.RoleForwarder, Status: domain.StatusDisabled})},
		{"clients", "/api/admin/clients", "get", 200, struct {
			Clients []views.ClientJSON `json:"clients"`
		}{[]views.ClientJSON{views.ToClientStatusJSON(domain.Client{ClientID: "tms", OrganizationID: "acme", SecretHash: "$2a$04$hash"}),
			views.ToClientStatusJSON(domain.Client{ClientID: "old", OrganizationID: "acme", Status: domain.StatusDeleted})}}},
		{"users", "/api/admin/users", "get", 200, struct {
			Users []views.UserJSON `json:"users"`
		}{[]views.UserJSON{views.ToUserJSON(domain.User{Username: "ana", OrganizationID: "acme", PasswordHash: "$2a$04$hash", Status: domain.StatusDisabled})}}},
		{"API key", "/api/admin/api-keys", "post", 201, keyCreated},
		{"API keys", "/api/admin/api-keys", "get", 200, struct {
			APIKeys []views.APIKeyJSON `json:"apiKeys"`
		}{[]views.APIKeyJSON{views.ToAPIKeyJSON(domain.APIKey{KeyID: "k1", OrganizationID: "acme", Revoked: true})}}},
		{"priced quote", "/api/quotes/{id}", "get", 200, views.ToQuoteJSON(priced, domain.Principal{}, nil)},
		{"rejected quote", "/api/quotes/{id}", "get", 200, views.ToQuoteJSON(rejectedQuote, domain.Principal{}, nil)},
		{"accepted quote", "/api/quotes/{id}", "get", 200, views.ToQuoteJSON(accepted, domain.Principal{}, nil)},
		{"quotes in every status", "/api/quotes", "get", 200, views.QuoteListJSON{Quotes: []views.QuoteJSON{views.ToQuoteJSON(quote, domain.Principal{}, nil), views.ToQuoteJSON(priced, domain.Principal{}, nil), views.ToQuoteJSON(rejectedQuote, domain.Principal{}, nil),
			views.ToQuoteJSON(accepted, domain.Principal{}, nil)}, Pagination: views.ToPaginationJSON(1, 20, 4)}},
		{"flight published", "/api/flights", "post", 201, flights[0]},
		{"flight with its own capacity", "/api/flights", "post", 201, flights[1]},
		{"flights published", "/api/flights", "post", 201, batch},
		{"flights invalid", "/api/flights", "post", 400, validation},
		{"flights", "/api/flights", "get", 200, flightList},
		{"no flights", "/api/flights", "get", 200, noFlights},
		{"flight", "/api/flights/{id}", "get", 200, flights[1]},
		{"flight delayed", "/api/flights/{id}", "patch", 200, delayed},
		{"capacity", "/api/capacity", "get", 200, capacity},
		{"rate card", "/api/rates/{origin}/{destination}", "put", 200, cards[0]},
		{"rate card for any destination", "/api/rates/{origin}/{destination}", "put", 200, cards[1]},
		{"rate cards", "/api/rates", "get", 200, struct {
			Rates []views.RateCardJSON `json:"rates"`
		}{cards}},
		{"booking filed", "/api/bookings", "post", 201, views.ToBookingJSON(pending)},
		{"booking filed without AWB", "/api/bookings", "post", 201, views.ToBookingJSON(withoutAWB)},
		{"booking confirmed", "/api/bookings/{id}", "get", 200, views.ToBookingJSON(confirmed)},
		{"booking rejected", "/api/bookings/{id}", "get", 200, views.ToBookingJSON(rejected)},
		{"booking cancelled", "/api/bookings/{id}/cancel", "post", 200, views.ToBookingJSON(cancelled)},
		{"bookings", "/api/bookings", "get", 200, bookingList},
		{"stock requested", "/api/awb-stock/requests", "post", 201, views.ToStockRequestJSON(stockPending)},
		{"stock request invalid", "/api/awb-stock/requests", "post", 400, validation},
		{"stock request approved", "/api/awb-stock/requests/{id}", "get", 200, views.ToStockRequestJSON(stockApproved)},
		{"stock request allocated", "/api/awb-stock/requests/{id}", "get", 200, views.ToStockRequestJSON(stockAllocated)},
		{"stock request partially approved", "/api/awb-stock/requests/{id}", "get", 200, views.ToStockRequestJSON(stockPartial)},
		{"stock request rejected", "/api/awb-stock/requests/{id}", "get", 200, views.ToStockRequestJSON(stockRejected)},
		{"stock request rejected without a reason", "/api/awb-stock/requests/{id}", "get", 200, views.ToStockRequestJSON(stockRejectedBare)},
		{"stock requests", "/api/awb-stock/requests", "get", 200, stockList},
		{"no stock requests", "/api/awb-stock/requests", "get", 200, noStockRequests},
		{"stock approved", "/api/awb-stock/reply/{requestId}", "put", 200, replyOf(stockApproved)},
		{"stock allocated", "/api/awb-stock/reply/{requestId}", "put", 200, replyOf(stockAllocated)},
		{"stock partially approved", "/api/awb-stock/reply/{requestId}", "put", 200, replyOf(stockPartial)},
		{"stock rejected", "/api/awb-stock/reply/{requestId}", "put", 200, replyOf(stockRejected)},
		{"stock rejected without a reason", "/api/awb-stock/reply/{requestId}", "put", 200, replyOf(stockRejectedBare)},
		{"stock reply overlapping", "/api/awb-stock/reply/{requestId}", "put", 400, stockValidation},
		{"no stock", "/api/awb-stock", "get", 200, struct {
			Stock []views.LedgerJSON `json:"stock"`
		}{[]views.LedgerJSON{}}},
		{"audit log", "/api/audit-logs", "get", 200, auditPage},
		{"empty audit log", "/api/audit-logs", "get", 200, auditLogJSON{Logs: []views.AuditEntryJSON{}, Pagination: views.ToPaginationJSON(3, 20, 0)}},
		{"usage", "/api/usage", "get", 200, usageOf("day", nil, nil)},
		{"usage by status", "/api/usage", "get", 200, usageOf("week", map[string]int64{"200": 1388, "201": 129, "400": 12, "429": 3}, nil)},
		{"usage by day", "/api/usage", "get", 200, usageOf("2026-06-01/2026-06-30", nil, map[string]int64{"2026-06-19": 1000, "2026-06-20": 532})},
		{"usage of nothing", "/api/usage", "get", 200, views.UsageJSON{Period: "month", RequestsByEndpoint: map[string]int64{}, OrganizationID: "acme"}},
		{"rate limits", "/api/admin/organizations/{id}/rate-limits", "put", 200, limits},
	}
	// Import reports, built as handleImportReference builds them from what
	// the parsers make of files: with bad and skipped rows, of a chunk, of
	// a file imported again, and of a file without a bad row.
	type valueTest = struct {
		name   string
		path   string
		method string
		status int
		value  any
	}
	report := func(kind, format string, rows, skipped int, rejected []refdata.RowError, res commands.ImportResult) views.ImportReportJSON {
		r := views.ImportReportJSON{Kind: kind, Format: format, Rows: rows, Skipped: skipped, Rejected: rejected}
		r.Changed, r.Unchanged = res.Changed, res.Rows-res.Changed
		if r.Rejected == nil {
			r.Rejected = []refdata.RowError{}
		}
		return r
	}
	airportsChunk, err := refdata.ParseAirports(strings.NewReader(`"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"
"EDDF","FRA","Frankfurt am Main Airport","Frankfurt am Main","Hesse","DE",364,50.033333,8.570556,"Europe/Berlin",""
"00AA","","Aero B Ranch Airport","Leoti","Kansas","US",3435,38.704022,-101.473911,"America/Chicago","00AA"
"EDDM","MUC","Munich Airport","Munich","Bavaria","DE",1487,48.353783,11.786086,"Europe/Nowhere",""
"EDDH","HAM","Hamburg Airport","Hamburg,"Hamburg","DE",53,53.630389,9.988228,"Europe/Berlin",""
`), refdata.FormatAirportsData, 501, zoneKnown)
	if err != nil || len(airportsChunk.Rows) != 1 || len(airportsChunk.Rejected) != 2 || airportsChunk.Rejected[0].Line != 503 || airportsChunk.Skipped != 1 {
		t.Fatalf("airports chunk: %+v, %v", airportsChunk, err)
	}
	openFlights, err := refdata.ParseAirports(strings.NewReader(`507,"London Heathrow Airport","London","United Kingdom","LHR","EGLL",51.4706,-0.461941,83,0,"E","Europe/London","airport","OurAirports"
508,"Nowhere Airport","Nowhere","Atlantis","NWH","XXXX",0,0,0,0,"E","Europe/London","airport","OurAirports"
`), refdata.FormatOpenFlights, 1, zoneKnown)
	if err != nil || len(openFlights.Rows) != 1 || len(openFlights.Rejected) != 1 {
		t.Fatalf("OpenFlights: %+v, %v", openFlights, err)
	}
	dangerous, err := refdata.ParseCommodities(strings.NewReader(`row_id,id_number,un_number,proper_shipping_name,cross_reference_entries,hazard_class,packing_group,label_codes,special_provisions,symbols,passenger_aircraft_rail_max_qty,cargo_aircraft_only_max_qty,vessel_stowage_location,parse_note
1,UN1088,1088,Acetal,,3,II,3,IB2 T4 TP1,,5 L,60 L,E,
2,NA1993,,"Combustible liquid, n.o.s.",,Comb liq,III,None,IB3 T1 T4 TP1,D,60 L,220 L,A,
`), refdata.FormatDangerousGoods, 1)
	if err != nil || len(dangerous.Rows) != 1 || dangerous.Rejected != nil {
		t.Fatalf("dangerous goods: %+v, %v", dangerous, err)
	}
	const importRoute = "/api/admin/reference/{kind}"
	tests = append(tests,
		valueTest{"import of a chunk with bad rows", importRoute, "post", 200, report(domain.RefAirports, refdata.FormatAirportsData,
			len(airportsChunk.Rows), airportsChunk.Skipped, airportsChunk.Rejected, commands.ImportResult{Rows: 1, Changed: 1, Sequence: 42})},
		valueTest{"import again, with an unknown country", importRoute, "post", 200, report(domain.RefAirports, refdata.FormatOpenFlights,
			len(openFlights.Rows), openFlights.Skipped, openFlights.Rejected, commands.ImportResult{Rows: 1, Changed: 0, Sequence: 42})},
		valueTest{"import of good rows", importRoute, "post", 200, report(domain.RefCommodities, refdata.FormatDangerousGoods,
			len(dangerous.Rows), dangerous.Skipped, dangerous.Rejected, commands.ImportResult{Rows: 1, Changed: 1, Sequence: 43})},
		valueTest{"import of an empty file", importRoute, "post", 200, report(domain.RefAirlines, refdata.FormatOPTD, 0, 0, nil, commands.ImportResult{})},
	)
	// e-DGDs, manifests and offloads, and their refusals, built above.
	for i, d := range dgds {
		tests = append(tests, valueTest{"e-DGD " + d.UNNumber + " " + strconv.Itoa(i), "/api/dangerous-goods", "post", 201, d})
	}
	for i, b := range dgdRefusals {
		tests = append(tests, valueTest{"e-DGD refused " + strconv.Itoa(i), "/api/dangerous-goods", "post", 400, b})
	}
	for i, m := range manifests {
		tests = append(tests, valueTest{"manifest " + strconv.Itoa(i), "/api/flights/{id}/manifests", "post", 201, views.ToManifestJSON(m)})
	}
	for i, b := range manifestRefusals {
		tests = append(tests, valueTest{"manifest refused " + strconv.Itoa(i), "/api/flights/{id}/manifests", "post", 400, b})
	}
	for i, o := range offloads {
		tests = append(tests, valueTest{"offload " + strconv.Itoa(i), "/api/offloads", "post", 201, views.ToOffloadJSON(o)})
	}
	for i, b := range offloadRefusals {
		tests = append(tests, valueTest{"offload refused " + strconv.Itoa(i), "/api/offloads", "post", 400, b})
	}

	// Every row of the built-in reference data, page by page, as the list
	// handlers answer.
	ref := builtinReference()
	for page := 1; ; page++ {
		rows, total := ref.Airports(projections.AirportFilter{}, page, 100)
		out := struct {
			Airports   []views.AirportJSON  `json:"airports"`
			Pagination views.PaginationJSON `json:"pagination"`
		}{Airports: []views.AirportJSON{}, Pagination: views.ToPaginationJSON(page, 100, total)}
		for _, a := range rows {
			out.Airports = append(out.Airports, views.AirportJSON(a))
		}
		tests = append(tests, valueTest{"built-in airports, page " + strconv.Itoa(page), "/api/airports", "get", 200, out})
		if page*100 >= total {
			break
		}
	}
	for page := 1; ; page++ {
		rows, total := ref.Airlines(projections.AirlineFilter{}, page, 100)
		out := struct {
			Airlines   []views.AirlineJSON  `json:"airlines"`
			Pagination views.PaginationJSON `json:"pagination"`
		}{Airlines: []views.AirlineJSON{}, Pagination: views.ToPaginationJSON(page, 100, total)}
		for _, a := range rows {
			out.Airlines = append(out.Airlines, views.AirlineJSON(a))
		}
		tests = append(tests, valueTest{"built-in airlines, page " + strconv.Itoa(page), "/api/airlines", "get", 200, out})
		if page*100 >= total {
			break
		}
	}
	for page := 1; ; page++ {
		rows, total := ref.Commodities(projections.CommodityFilter{}, page, 100)
		out := struct {
			Commodities []views.CommodityJSON `json:"commodities"`
			Pagination  views.PaginationJSON  `json:"pagination"`
		}{Commodities: []views.CommodityJSON{}, Pagination: views.ToPaginationJSON(page, 100, total)}
		for _, c := range rows {
			out.Commodities = append(out.Commodities, views.CommodityJSON{Code: c.Code, Name: c.Name, HSCode: c.HSCode, DangerousGoods: c.DangerousGoods, UNNumber: c.UNNumber})
		}
		tests = append(tests, valueTest{"built-in commodities, page " + strconv.Itoa(page), "/api/commodities", "get", 200, out})
		if page*100 >= total {
			break
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.value); err != nil {
				t.Fatal(err)
			}
			validateJSON(t, responseSchema(t, c, doc, tt.path, tt.method, tt.status, "application/json"), buf.Bytes())
		})
	}
}

// builtinReference is the built-in reference data, as the service loads it.
func builtinReference() *projections.Reference {
	ref := projections.NewReference()
	ref.Apply(domain.Record{}, domain.ReferenceChanged{Airports: domain.BuiltinAirports(),
		Airlines: domain.BuiltinAirlines(), Commodities: domain.BuiltinCommodities()})
	return ref
}

// The pattern of a DGD request's class takes what the domain takes, in
// either case, and only that: a division of class 1 only with a
// compatibility group it has (1.4S, not 1.4A). (The DGD's own pattern
// stays wider: DGDs stored before the domain knew the groups may have
// any.)
func TestOpenAPIHazardClassPatternIsTheDomains(t *testing.T) {
	doc := openAPIDoc(t)
	var candidates []string
	for _, c := range []string{"1", "2", "3", "9", "10", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "2.1", "2.4", "3.1", "5.2", "6.2"} {
		candidates = append(candidates, c)
		for g := 'A'; g <= 'Z'; g++ {
			candidates = append(candidates, c+string(g), c+strings.ToLower(string(g)))
		}
	}
	v, ok := lookup(doc, pointer("components", "schemas", "DGDRequest", "properties", "class", "pattern"))
	if !ok {
		t.Fatal("DGDRequest.class has no pattern")
	}
	pattern := regexp.MustCompile(v.(string))
	for _, c := range candidates {
		want := domain.IsHazardClass(strings.ToUpper(c))
		if got := pattern.MatchString(c); got != want {
			t.Errorf("DGDRequest.class pattern takes %q: %v, the domain %v", c, got, want)
		}
	}
}

// The aircraft type of a flight published takes what the server takes:
// 2 to 8 letters or digits, so a client that checks the document sends
// the freighters the README asks to be published by designator with an F
// (B748F, five characters; the pattern said 2 to 4 before). As for AWB
// numbers, the server trims white space, which the pattern does not admit.
func TestOpenAPIAircraftTypePatternIsTheDomains(t *testing.T) {
	doc := openAPIDoc(t)
	at := pointer("components", "schemas", "FlightRequest", "properties", "aircraftType")
	v, ok := lookup(doc, at+"/pattern")
	if !ok {
		t.Fatalf("%s has no pattern", at)
	}
	pattern := regexp.MustCompile(v.(string))
	maxLength, _ := lookup(doc, at+"/maxLength")
	for _, typ := range []string{"B77F", "B744F", "B748F", "MD11F", "A332F", "74N", "77X", "M1F", "A359", "b748f", "AN124", "IL76TD", "B7478F",
		"C", "B7478F00", "B7478F001", "B77 F", "B77-F", "B77F\u00e9", ""} {
		want := domain.ValidAircraftType(strings.ToUpper(typ))
		if got := pattern.MatchString(typ) && float64(len(typ)) <= maxLength.(float64); got != want {
			t.Errorf("FlightRequest.aircraftType takes %q: %v, the domain %v", typ, got, want)
		}
	}
}

// The AWB number patterns of what a client sends take what the server
// takes, and only that: a three-digit prefix, a dash or none, and an
// eight-digit serial; in a booking's awb, the serial alone or with its
// prefix and a dash. The server reads a number trimmed, and the document
// says so of codes rather than have their patterns admit surrounding
// white space: a pattern is held to the server's answer for the number
// with that white space taken off. White space inside a number is refused
// by both. The check digit is no pattern's: every candidate that has the
// shape has the right one (020-81140743: 8114074 mod 7 is 3).
func TestOpenAPIAWBPatternsAreTheDomains(t *testing.T) {
	doc := openAPIDoc(t)
	pattern := func(t *testing.T, at string) *regexp.Regexp {
		t.Helper()
		v, ok := lookup(doc, at+"/pattern")
		if !ok {
			t.Fatalf("%s has no pattern", at)
		}
		return regexp.MustCompile(v.(string))
	}
	wholeNumbers := []string{
		"020-81140743", "02081140743", " 020-81140743", "020-81140743 ", "\t020-81140743\r\n", "\u00a0020-81140743\u3000",
		"020 81140743", "020-8114 0743", "020 - 81140743", "020\u00a081140743", "020\t81140743", "020--81140743", "020-81140743-",
		"20-81140743", "0200-81140743", "020-8114074", "020-811407433", "2081140743", "020811407433", "020-81140743x", "O20-81140743",
		"020_81140743", "020/81140743", "020.81140743", "+020-81140743", "020-8114074\u0663", "\u0660\u0662\u0660-81140743", "020-",
		"-81140743", "81140743",
	}
	// Every schema and path parameter that the server reads with
	// domain.ParseAWB, and whether it takes no number at all.
	single := []struct {
		at       string
		optional bool
	}{
		{pointer("components", "schemas", "MAWBRequest", "properties", "awbNumber"), false},
		{pointer("components", "schemas", "HAWBRequest", "properties", "mawbNumber"), false},
		{pointer("components", "schemas", "DGDRequest", "properties", "awbNumber"), false},
		{pointer("components", "schemas", "PLACIRequest", "properties", "awbNumber"), false},
		{pointer("components", "schemas", "CSDRequest", "properties", "awbNumber"), false},
		{pointer("components", "schemas", "ManifestRequest", "properties", "awbNumbers", "items"), false},
		{pointer("components", "schemas", "OffloadRequest", "properties", "awbNumber"), false},
		{pointer("components", "schemas", "DocumentUpload", "properties", "awbNumber"), false},
		{pointer("components", "schemas", "StockReplyRequest", "properties", "startNumber"), true},
		{pointer("components", "schemas", "StockReplyRequest", "properties", "endNumber"), true},
		{pointer("paths", "/api/shipments/{awb}", "parameters", "0", "schema"), false},
		{pointer("paths", "/api/shipments/{awb}/history", "parameters", "0", "schema"), false},
		{pointer("paths", "/api/shipments/{awb}/events", "parameters", "0", "schema"), false},
	}
	for _, s := range single {
		t.Run(s.at, func(t *testing.T) {
			p := pattern(t, s.at)
			if s.optional && !p.MatchString("") {
				t.Errorf("the pattern refuses no number, which the server takes")
			}
			for _, c := range wholeNumbers {
				_, err := domain.ParseAWB(c)
				if got, want := p.MatchString(strings.TrimSpace(c)), err == nil; got != want {
					t.Errorf("the pattern takes %q: %v, the server %v (%v)", c, got, want, err)
				}
			}
		})
	}

	// A booking's awb, {prefix, number}: each part against the server's
	// answer with the other part right. A part left empty is a matter of
	// both (the pattern takes it for a booking that sends neither), and
	// another prefix in number than in prefix (MISMATCH) is no pattern's.
	awbProblems := func(prefix, number string) []domain.FieldError {
		weight := 100.0
		q := domain.Quote{ID: "q", OrganizationID: "acme", Origin: "FRA", Destination: "JFK", Pieces: 1, WeightKg: weight, Status: domain.QuoteStatusPriced}
		f := domain.Flight{ID: "LH8400-2030-07-01", Status: domain.FlightStatusScheduled, DepartsAt: time.Date(2030, 7, 1, 8, 35, 0, 0, time.UTC)}
		_, err := domain.DecideRequestBooking(domain.Booking{}, q, f, domain.RequestBooking{BookingID: "b", QuoteID: "q", FlightID: f.ID,
			OrganizationID: "acme", AWBPrefix: prefix, AWBSerial: number})
		var e *domain.Error
		if !errors.As(err, &e) {
			return nil
		}
		var awb []domain.FieldError
		for _, f := range e.Fields {
			if strings.HasPrefix(f.Field, "awb") {
				awb = append(awb, f)
			}
		}
		return awb
	}
	if problems := awbProblems("020", "81140743"); problems != nil {
		t.Fatalf("the server refuses awb 020/81140743: %v", problems)
	}
	ref := pointer("components", "schemas", "AWBReference", "properties")
	t.Run("AWBReference.number", func(t *testing.T) {
		p := pattern(t, ref+"/number")
		for _, c := range append(wholeNumbers, "81140743", " 81140743\t", "8114074", "811407433", "8114 0743", "8114-0743", "O1140743", "020 -81140743") {
			if strings.TrimSpace(c) == "" {
				continue
			}
			problems := awbProblems("020", c)
			if got, want := p.MatchString(strings.TrimSpace(c)), problems == nil; got != want {
				t.Errorf("the pattern takes %q: %v, the server %v (%v)", c, got, want, problems)
			}
		}
	})
	t.Run("AWBReference.prefix", func(t *testing.T) {
		p := pattern(t, ref+"/prefix")
		for _, c := range []string{"020", " 020", "020\n", "\u00a0020 ", "20", "0200", "02O", "0 20", "020-", "-020", "\u0660\u0662\u0660"} {
			problems := awbProblems(c, "81140743")
			if got, want := p.MatchString(strings.TrimSpace(c)), problems == nil; got != want {
				t.Errorf("the pattern takes %q: %v, the server %v (%v)", c, got, want, problems)
			}
		}
	})
}

func TestTheErrorPageIsHTMLOnlyToAClientThatNamesHTML(t *testing.T) {
	tests := []struct {
		name   string
		accept []string
		want   bool
	}{
		{"no Accept", nil, false},
		{"curl's wildcard", []string{"*/*"}, false},
		{"a browser's", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, true},
		{"HTML at a low quality", []string{"text/markdown, text/html;q=0.1"}, true},
		{"HTML refused", []string{"text/html;q=0, */*"}, false},
		{"HTML refused with decimals", []string{"text/html;q=0.000"}, false},
		{"in a second header", []string{"application/json", "TEXT/HTML"}, true},
		{"Markdown only", []string{"text/markdown"}, false},
		{"text of every kind", []string{"text/*"}, false},
		{"malformed items around HTML", []string{";;, text/html, =x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := acceptsHTML(tt.accept); got != tt.want {
				t.Errorf("acceptsHTML(%q) = %v, want %v", tt.accept, got, tt.want)
			}
		})
	}
}

// The documents built in (the OpenAPI document, the largest, and the errors
// page) say their length as every JSON answer does (see writeEncoded), to a
// HEAD too: over 2 kB, they went in chunks, and their HEAD said no length.
func TestTheDocumentsBuiltInSayTheirLength(t *testing.T) {
	for _, tt := range []struct {
		handler http.Handler
		path    string
		length  int
	}{
		{handleOpenAPI(), "/openapi.json", len(openAPIDocument)},
		{handleErrorDocs(), "/docs/errors", len(errorDocs)},
	} {
		srv := httptest.NewServer(tt.handler)
		saysItsLength(t, srv, tt.path, tt.length)
		srv.Close()
	}
}
