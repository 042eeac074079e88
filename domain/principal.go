package domain

import "regexp"

// Role is what an organisation is to the system.
type Role string

const (
	RoleForwarder Role = "forwarder" // a cargo agent: files RFQs, books, requests AWB stock
	RoleAirline   Role = "airline"   // a carrier with an AWB prefix: prices, confirms, allocates stock
	RoleAdmin     Role = "admin"     // the operator of this service
)

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool {
	return r == RoleForwarder || r == RoleAirline || r == RoleAdmin
}

// Principal is the authenticated caller of a command or query.
type Principal struct {
	Subject        string // "client:<id>", "user:<name>" or "apikey:<id>"
	OrganizationID string
	Role           Role
	AirlineCode    string // IATA code, airlines only
	AWBPrefix      string // airlines only
}

// OrganizationScope is the organisation whose records (webhooks, audit
// log) p reads and manages: its own, or "" for an admin, who runs the
// service for every organisation.
func (p Principal) OrganizationScope() string {
	if p.Role == RoleAdmin {
		return ""
	}
	return p.OrganizationID
}

// ActsFor reports whether p answers for an organisation's records: its
// own organisation's, or any for an admin (see OrganizationScope). So
// the client address of an audit entry is shown only to whom ActsFor the
// entry's organisation (the actor's): an organisation's log also shows
// others' acts on its resources, but not their addresses.
func (p Principal) ActsFor(organizationID string) bool {
	scope := p.OrganizationScope()
	return scope == "" || organizationID == scope
}

var (
	airportCodePattern = regexp.MustCompile(`^[A-Z]{3}$`)
	airlineCodePattern = regexp.MustCompile(`^[A-Z0-9]{2}$`)
	awbPrefixPattern   = regexp.MustCompile(`^[0-9]{3}$`)
	identifierPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
)

// ValidIdentifier reports whether s can name an organisation, a client or
// another resource whose id a person chooses.
func ValidIdentifier(s string) bool { return identifierPattern.MatchString(s) }

// ValidAirportCode reports whether code has the shape of an IATA airport
// code (three capital letters).
func ValidAirportCode(code string) bool { return airportCodePattern.MatchString(code) }

// ValidAirlineCode reports whether code has the shape of an IATA airline
// code (two capital letters or digits).
func ValidAirlineCode(code string) bool { return airlineCodePattern.MatchString(code) }

// ValidAWBPrefix reports whether prefix has the shape of an airline's AWB
// prefix (three digits).
func ValidAWBPrefix(prefix string) bool { return awbPrefixPattern.MatchString(prefix) }
