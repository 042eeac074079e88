package views

import "github.com/cargostream/cargostream/domain"

// UsageJSON is an organisation's requests over a period, and its rate
// limits.
type UsageJSON struct {
	Period             string              `json:"period"`
	TotalRequests      int64               `json:"totalRequests"`
	RequestsByEndpoint map[string]int64    `json:"requestsByEndpoint"`
	RequestsByStatus   map[string]int64    `json:"requestsByStatus,omitempty"`
	RequestsByDay      map[string]int64    `json:"requestsByDay,omitempty"`
	RateLimits         RateLimitsJSON      `json:"rateLimits"`
	DocumentStorage    DocumentStorageJSON `json:"documentStorage"`
	OrganizationID     string              `json:"organizationId"`
}

// DocumentStorageJSON is what an organisation's uploaded documents take,
// and its quota.
type DocumentStorageJSON struct {
	Documents   int   `json:"documents"`
	BytesStored int64 `json:"bytesStored"`
	QuotaBytes  int64 `json:"quotaBytes"` // 0: no quota
}

// RateLimitsJSON is an organisation's request limits; an admin sends the
// same to set them.
type RateLimitsJSON struct {
	RequestsPerMinute int `json:"requestsPerMinute"`
	RequestsPerHour   int `json:"requestsPerHour"`
	RequestsPerDay    int `json:"requestsPerDay"`
}

func ToRateLimitsJSON(l domain.RateLimits) RateLimitsJSON {
	return RateLimitsJSON{l.PerMinute, l.PerHour, l.PerDay}
}
