// Package views is how the service shows its state: the JSON of each
// resource as the API answers it and webhooks deliver it, made from domain
// values and read models. Who may see what is domain's to say: views asks
// its rules and never decides itself.
package views

// PaginationJSON is the spec's pagination object.
type PaginationJSON struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	Total      int `json:"total"`
	TotalPages int `json:"totalPages"`
}

// ToPaginationJSON is the page of limit items, of total in all.
func ToPaginationJSON(page, limit, total int) PaginationJSON {
	return PaginationJSON{Page: page, Limit: limit, Total: total, TotalPages: (total + limit - 1) / limit}
}

// orNull is a pointer to s, or nil for "": the spec writes null for what
// is not known.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
