package domain

import (
	"slices"
	"strings"
)

// The actions of data changes in the audit log: an aggregate came into
// being, or fields of it changed. Authorization events have their own
// (ActionTokenIssued, …).
const (
	ActionCreate = "create"
	ActionUpdate = "update"
)

// AuditActions lists every action an audit log entry can have.
var AuditActions = []string{ActionCreate, ActionUpdate, ActionTokenIssued, ActionLoginFailed, ActionTokenRejected, ActionAccessDenied}

// AuditResourceAuthorization is the resource of an authorization event's
// entry. Its aggregate (AggregateAuthorization) holds that one event, and
// the entry's resource id is the subject it concerns, not the aggregate's.
const AuditResourceAuthorization = "authorization"

// AuditResources lists every resource an audit log entry can name: the
// aggregate types, which are stable forever, so that entries of any age
// name one of them, with the authorization aggregate's under
// AuditResourceAuthorization.
var AuditResources = func() []string {
	r := slices.Clone(AggregateTypes)
	r[slices.Index(r, AggregateAuthorization)] = AuditResourceAuthorization
	return r
}()

// CheckAuditFilter refuses an action or a resource ("" for any) that no
// entry of the audit log can have: filtering by it would answer an empty
// log, as if nothing of the kind had happened.
func CheckAuditFilter(action, resource string, p *Problems) {
	if action != "" && !slices.Contains(AuditActions, action) {
		p.Add("action", CodeInvalidValue, "must be one of %s", strings.Join(AuditActions, ", "))
	}
	if resource != "" && !slices.Contains(AuditResources, resource) {
		p.Add("resource", CodeInvalidValue, "must be one of %s", strings.Join(AuditResources, ", "))
	}
}
