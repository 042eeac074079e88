package domain

import "unicode/utf8"

// ValidateSecret checks a client secret or password chosen by a person.
// bcrypt reads at most 72 bytes, so longer ones would be truncated
// silently; refuse them instead.
func ValidateSecret(field, secret string) error {
	var p Problems
	switch n := utf8.RuneCountInString(secret); {
	case secret == "":
		p.Add(field, CodeRequired, "is required")
	case n < 12:
		p.Add(field, CodeInvalidRange, "must be at least 12 characters")
	case len(secret) > 72:
		p.Add(field, CodeTooLong, "must be at most 72 bytes")
	}
	return p.Err()
}

// requireOrganization is the check every new credential makes: it must
// belong to an organisation that exists and is not deleted (a disabled
// one's credentials wait for it to be enabled).
func requireOrganization(p *Problems, org Organization, id string) {
	switch {
	case !org.Exists():
		p.Add("organizationId", CodeInvalidValue, "no organisation %q", id)
	case org.Status == StatusDeleted:
		p.Add("organizationId", CodeInvalidValue, "organisation %q is deleted", id)
	}
}
