package views

import (
	"time"

	"github.com/cargostream/cargostream/projections"
)

// AuditEntryJSON is one line of the audit log.
type AuditEntryJSON struct {
	ID         string          `json:"id"`
	Timestamp  time.Time       `json:"timestamp"`
	Action     string          `json:"action"`
	Resource   string          `json:"resource"`
	ResourceID string          `json:"resourceId"`
	UserID     string          `json:"userId"`
	IPAddress  string          `json:"ipAddress"`
	Details    AuditDetailJSON `json:"details"`
}

// AuditDetailJSON is the field an update changed, what an authorization
// entry records, or, for a create or an import, empty strings: details is
// an object, as the spec types it, never null.
type AuditDetailJSON struct {
	Field    string `json:"field"`
	OldValue string `json:"oldValue"`
	NewValue string `json:"newValue"`
}

func ToAuditEntryJSON(e projections.AuditEntry) AuditEntryJSON {
	return AuditEntryJSON{ID: e.ID, Timestamp: e.Timestamp, Action: e.Action, Resource: e.Resource,
		ResourceID: e.ResourceID, UserID: e.UserID, IPAddress: e.IPAddress,
		Details: AuditDetailJSON{Field: e.Details.Field, OldValue: e.Details.OldValue, NewValue: e.Details.NewValue}}
}
