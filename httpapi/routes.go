package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// routes lists every endpoint of the service.
func (s *Server) routes() *router {
	r := newRouter(
		s.handle(func(w http.ResponseWriter, r *http.Request) error {
			return errorf("not_found", "no endpoint "+r.URL.Path)
		}),
		s.handle(func(w http.ResponseWriter, r *http.Request) error {
			return errorf(codeMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
		}))

	// Open to everyone.
	r.handle("GET /healthz", s.open(s.handleHealth()))
	r.handle("GET /readyz", s.open(s.handleReady()))
	r.handle("GET /openapi.json", s.open(handleOpenAPI()))
	r.handle("GET /docs/errors", s.open(handleErrorDocs()))
	r.handle("GET /.well-known/jwks.json", s.open(s.handleJWKS()))
	r.handle("POST /api/auth/token", withOAuthErrors(s.declaredSize(s.handle(s.handleToken()))))

	// Everything else needs a token or an API key; the roles after a
	// handler are the only ones it serves (403 for the others). Which of
	// the resources a caller of those roles may see or change is the
	// handler's and the domain's business.
	r.handle("POST /api/quotes", s.api(s.handleCreateQuote(), domain.RoleForwarder))
	r.handle("GET /api/quotes", s.api(s.handleListQuotes()))
	r.handle("GET /api/quotes/{id}", s.api(s.handleGetQuote()))
	r.handle("GET /api/quotes/{id}/history", s.api(s.handleHistory(s.history.Quote, "id", asIs)))

	r.handle("POST /api/flights", s.api(s.handleScheduleFlights(), domain.RoleAirline))
	r.handle("GET /api/flights", s.api(s.handleListFlights()))
	r.handle("GET /api/flights/{id}", s.api(s.handleGetFlight()))
	r.handle("PATCH /api/flights/{id}", s.api(s.handleChangeFlight(), domain.RoleAirline))
	r.handle("GET /api/flights/{id}/history", s.api(s.handleHistory(s.history.Flight, "id", flightID)))
	r.handle("GET /api/capacity", s.api(s.handleCapacity()))
	r.handle("POST /api/flights/{id}/manifests", s.api(s.handleSubmitManifest(), domain.RoleAirline))
	r.handle("POST /api/offloads", s.api(s.handleReportOffload(), domain.RoleAirline))
	r.handle("GET /api/rates", s.api(s.handleListRates(), domain.RoleAirline, domain.RoleAdmin))
	r.handle("PUT /api/rates/{origin}/{destination}", s.api(s.handleSetRateCard(), domain.RoleAirline))

	r.handle("POST /api/bookings", s.api(s.handleCreateBooking(), domain.RoleForwarder))
	r.handle("GET /api/bookings", s.api(s.handleListBookings()))
	r.handle("GET /api/bookings/{id}", s.api(s.handleGetBooking()))
	r.handle("GET /api/bookings/{id}/history", s.api(s.handleHistory(s.history.Booking, "id", asIs)))
	r.handle("POST /api/bookings/{id}/cancel", s.api(s.handleCancelBooking()))

	r.handle("GET /api/awb-stock", s.api(s.handleStock()))
	r.handle("POST /api/awb-stock/requests", s.api(s.handleCreateStockRequest(), domain.RoleForwarder))
	r.handle("GET /api/awb-stock/requests", s.api(s.handleListStockRequests()))
	r.handle("GET /api/awb-stock/requests/{id}", s.api(s.handleGetStockRequest()))
	r.handle("GET /api/awb-stock/requests/{id}/history", s.api(s.handleHistory(s.history.StockRequest, "id", asIs)))
	r.handle("PUT /api/awb-stock/reply/{requestId}", s.api(s.handleReplyStock()))

	r.handle("GET /api/airlines", s.api(s.handleAirlines()))
	r.handle("GET /api/airports", s.api(s.handleAirports()))
	r.handle("GET /api/commodities", s.api(s.handleCommodities()))
	r.handle("POST /api/admin/reference/{kind}", s.api(s.handleImportReference(), domain.RoleAdmin))

	r.handle("POST /api/mawb", s.api(s.handleCreateMAWB(), domain.RoleForwarder))
	r.handle("POST /api/hawb", s.api(s.handleCreateHAWB(), domain.RoleForwarder))
	r.handle("POST /api/dangerous-goods", s.api(s.handleSubmitDGD(), domain.RoleForwarder))
	r.handle("POST /api/placi", s.api(s.handleSubmitPLACI(), domain.RoleForwarder))
	r.handle("POST /api/csd", s.api(s.handleSubmitCSD()))
	r.handle("POST "+uploadPath, s.api(s.handleUploadDocument()))
	r.handle("GET "+uploadPath+"/{id}", s.api(s.handleGetDocument()))
	r.handle("HEAD "+uploadPath+"/{id}", s.api(s.handleGetDocument()))
	r.handle("GET /api/shipments/{awb}", s.api(s.handleShipment()))
	r.handle("GET /api/shipments/{awb}/history", s.api(s.handleHistory(s.history.Shipment, "awb", awbID)))
	r.handle("POST /api/shipments/{awb}/events", s.api(s.handleRecordStatus()))
	r.handle("GET /api/shipments/{awb}/events", s.api(s.handleShipmentEvents()))

	r.handle("POST /api/webhooks", s.api(s.handleCreateWebhook()))
	r.handle("GET /api/webhooks", s.api(s.handleListWebhooks()))
	r.handle("GET /api/webhooks/{id}", s.api(s.handleGetWebhook()))
	r.handle("DELETE /api/webhooks/{id}", s.api(s.handleDeleteWebhook()))
	r.handle("GET /api/webhooks/{id}/deliveries", s.api(s.handleDeliveries()))
	r.handle("POST /api/webhooks/{id}/deliveries/{deliveryId}/redeliver", s.api(s.handleRedeliver()))
	r.handle("POST /api/webhooks/{id}/ping", s.api(s.handlePing()))

	r.handle("GET /api/audit-logs", s.api(s.handleAuditLogs()))
	r.handle("GET /api/usage", s.api(s.handleUsage()))

	r.handle("POST /api/admin/organizations", s.api(s.handleCreateOrganization(), domain.RoleAdmin))
	r.handle("GET /api/admin/organizations", s.api(s.handleListOrganizations(), domain.RoleAdmin))
	r.handle("PUT /api/admin/organizations/{id}/rate-limits", s.api(s.handleSetRateLimits(), domain.RoleAdmin))
	r.handle("POST /api/admin/organizations/{id}/disable", s.api(s.handleSetOrganizationStatus(domain.StatusDisabled), domain.RoleAdmin))
	r.handle("POST /api/admin/organizations/{id}/enable", s.api(s.handleSetOrganizationStatus(domain.StatusActive), domain.RoleAdmin))
	r.handle("DELETE /api/admin/organizations/{id}", s.api(s.handleSetOrganizationStatus(domain.StatusDeleted), domain.RoleAdmin))
	r.handle("POST /api/admin/clients", s.api(s.handleCreateClient(), domain.RoleAdmin))
	r.handle("GET /api/admin/clients", s.api(s.handleListClients(), domain.RoleAdmin))
	r.handle("POST /api/admin/clients/{id}/disable", s.api(s.handleSetClientStatus(domain.StatusDisabled), domain.RoleAdmin))
	r.handle("POST /api/admin/clients/{id}/enable", s.api(s.handleSetClientStatus(domain.StatusActive), domain.RoleAdmin))
	r.handle("DELETE /api/admin/clients/{id}", s.api(s.handleSetClientStatus(domain.StatusDeleted), domain.RoleAdmin))
	r.handle("POST /api/admin/clients/{id}/secret", s.api(s.handleRotateClientSecret(), domain.RoleAdmin))
	r.handle("POST /api/admin/users", s.api(s.handleCreateUser(), domain.RoleAdmin))
	r.handle("GET /api/admin/users", s.api(s.handleListUsers(), domain.RoleAdmin))
	r.handle("POST /api/admin/users/{username}/disable", s.api(s.handleSetUserStatus(domain.StatusDisabled), domain.RoleAdmin))
	r.handle("POST /api/admin/users/{username}/enable", s.api(s.handleSetUserStatus(domain.StatusActive), domain.RoleAdmin))
	r.handle("DELETE /api/admin/users/{username}", s.api(s.handleSetUserStatus(domain.StatusDeleted), domain.RoleAdmin))
	r.handle("PUT /api/admin/users/{username}/password", s.api(s.handleSetPassword(), domain.RoleAdmin))
	r.handle("POST /api/admin/token-revocations", s.api(s.handleRevokeTokens(), domain.RoleAdmin))
	r.handle("POST /api/admin/api-keys", s.api(s.handleCreateAPIKey(), domain.RoleAdmin))
	r.handle("GET /api/admin/api-keys", s.api(s.handleListAPIKeys(), domain.RoleAdmin))
	r.handle("DELETE /api/admin/api-keys/{id}", s.api(s.handleRevokeAPIKey(), domain.RoleAdmin))
	r.handle("POST /api/admin/rebuild", s.api(s.handleStartJob(projections.Rebuild), domain.RoleAdmin))
	r.handle("GET /api/admin/rebuild", s.api(s.handleJobStatus(projections.Rebuild), domain.RoleAdmin))
	r.handle("POST /api/admin/verify", s.api(s.handleStartJob(projections.Verify), domain.RoleAdmin))
	r.handle("GET /api/admin/verify", s.api(s.handleJobStatus(projections.Verify), domain.RoleAdmin))
	// Admins only, and outside the API: a scraper's requests every few
	// seconds are neither metered nor rate-limited.
	r.handle("GET /metrics", s.authenticate(s.handle(onlyFor([]domain.Role{domain.RoleAdmin}, s.handleMetrics()))))
	return r
}

// api wraps an endpoint that needs a token or an API key, open to callers
// of the roles given, or of any role when none is.
func (s *Server) api(h handlerFunc, roles ...domain.Role) http.Handler {
	if len(roles) > 0 {
		h = onlyFor(roles, h)
	}
	inner := s.declaredSize(s.consistentReads(s.idempotent(s.handle(h))))
	if s.opts.Metering {
		inner = s.metered(s.rateLimited(inner))
	}
	return s.authenticate(inner)
}
