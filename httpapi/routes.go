package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/gorilla/mux"
)

// routes lists every endpoint of the service.
func (s *Server) routes() http.Handler {
	// No clean-path redirects: an odd path gets the error body like any
	// other bad request, not a bare 301.
	r := mux.NewRouter().SkipClean(true)
	r.NotFoundHandler = s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return errorf("not_found", "no endpoint "+r.URL.Path)
	})
	r.MethodNotAllowedHandler = s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return errorf(codeMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
	})
	// Run once a route matched: requests are counted by its pattern.
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route, _ := mux.CurrentRoute(r).GetPathTemplate()
			noteRoute(r, route)
			next.ServeHTTP(w, r)
		})
	})

	// Open to everyone.
	r.Handle("/healthz", s.open(s.handleHealth())).Methods(http.MethodGet)
	r.Handle("/readyz", s.open(s.handleReady())).Methods(http.MethodGet)
	r.Handle("/openapi.json", s.open(handleOpenAPI())).Methods(http.MethodGet)
	r.Handle("/docs/errors", s.open(handleErrorDocs())).Methods(http.MethodGet)
	r.Handle("/.well-known/jwks.json", s.open(s.handleJWKS())).Methods(http.MethodGet)
	r.Handle("/api/auth/token", withOAuthErrors(s.handle(s.handleToken()))).Methods(http.MethodPost)

	// Everything else needs a token or an API key; the roles after a
	// handler are the only ones it serves (403 for the others). Which of
	// the resources a caller of those roles may see or change is the
	// handler's and the domain's business.
	r.Handle("/api/quotes", s.api(s.handleCreateQuote(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/quotes", s.api(s.handleListQuotes())).Methods(http.MethodGet)
	r.Handle("/api/quotes/{id}", s.api(s.handleGetQuote())).Methods(http.MethodGet)
	r.Handle("/api/quotes/{id}/history", s.api(s.handleHistory(s.history.Quote, "id", asIs))).Methods(http.MethodGet)

	r.Handle("/api/flights", s.api(s.handleScheduleFlights(), domain.RoleAirline)).Methods(http.MethodPost)
	r.Handle("/api/flights", s.api(s.handleListFlights())).Methods(http.MethodGet)
	r.Handle("/api/flights/{id}", s.api(s.handleGetFlight())).Methods(http.MethodGet)
	r.Handle("/api/flights/{id}", s.api(s.handleChangeFlight(), domain.RoleAirline)).Methods(http.MethodPatch)
	r.Handle("/api/flights/{id}/history", s.api(s.handleHistory(s.history.Flight, "id", flightID))).Methods(http.MethodGet)
	r.Handle("/api/capacity", s.api(s.handleCapacity())).Methods(http.MethodGet)
	r.Handle("/api/flights/{id}/manifests", s.api(s.handleSubmitManifest(), domain.RoleAirline)).Methods(http.MethodPost)
	r.Handle("/api/offloads", s.api(s.handleReportOffload(), domain.RoleAirline)).Methods(http.MethodPost)
	r.Handle("/api/rates", s.api(s.handleListRates(), domain.RoleAirline, domain.RoleAdmin)).Methods(http.MethodGet)
	r.Handle("/api/rates/{origin}/{destination}", s.api(s.handleSetRateCard(), domain.RoleAirline)).Methods(http.MethodPut)

	r.Handle("/api/bookings", s.api(s.handleCreateBooking(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/bookings", s.api(s.handleListBookings())).Methods(http.MethodGet)
	r.Handle("/api/bookings/{id}", s.api(s.handleGetBooking())).Methods(http.MethodGet)
	r.Handle("/api/bookings/{id}/history", s.api(s.handleHistory(s.history.Booking, "id", asIs))).Methods(http.MethodGet)
	r.Handle("/api/bookings/{id}/cancel", s.api(s.handleCancelBooking())).Methods(http.MethodPost)

	r.Handle("/api/awb-stock", s.api(s.handleStock())).Methods(http.MethodGet)
	r.Handle("/api/awb-stock/requests", s.api(s.handleCreateStockRequest(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/awb-stock/requests", s.api(s.handleListStockRequests())).Methods(http.MethodGet)
	r.Handle("/api/awb-stock/requests/{id}", s.api(s.handleGetStockRequest())).Methods(http.MethodGet)
	r.Handle("/api/awb-stock/requests/{id}/history", s.api(s.handleHistory(s.history.StockRequest, "id", asIs))).Methods(http.MethodGet)
	r.Handle("/api/awb-stock/reply/{requestId}", s.api(s.handleReplyStock())).Methods(http.MethodPut)

	r.Handle("/api/airlines", s.api(s.handleAirlines())).Methods(http.MethodGet)
	r.Handle("/api/airports", s.api(s.handleAirports())).Methods(http.MethodGet)
	r.Handle("/api/commodities", s.api(s.handleCommodities())).Methods(http.MethodGet)
	r.Handle("/api/admin/reference/{kind}", s.api(s.handleImportReference(), domain.RoleAdmin)).Methods(http.MethodPost)

	r.Handle("/api/mawb", s.api(s.handleCreateMAWB(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/hawb", s.api(s.handleCreateHAWB(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/dangerous-goods", s.api(s.handleSubmitDGD(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/placi", s.api(s.handleSubmitPLACI(), domain.RoleForwarder)).Methods(http.MethodPost)
	r.Handle("/api/csd", s.api(s.handleSubmitCSD())).Methods(http.MethodPost)
	r.Handle(uploadPath, s.api(s.handleUploadDocument())).Methods(http.MethodPost)
	r.Handle(uploadPath+"/{id}", s.api(s.handleGetDocument())).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/api/shipments/{awb}", s.api(s.handleShipment())).Methods(http.MethodGet)
	r.Handle("/api/shipments/{awb}/history", s.api(s.handleHistory(s.history.Shipment, "awb", awbID))).Methods(http.MethodGet)
	r.Handle("/api/shipments/{awb}/events", s.api(s.handleRecordStatus())).Methods(http.MethodPost)
	r.Handle("/api/shipments/{awb}/events", s.api(s.handleShipmentEvents())).Methods(http.MethodGet)

	r.Handle("/api/webhooks", s.api(s.handleCreateWebhook())).Methods(http.MethodPost)
	r.Handle("/api/webhooks", s.api(s.handleListWebhooks())).Methods(http.MethodGet)
	r.Handle("/api/webhooks/{id}", s.api(s.handleGetWebhook())).Methods(http.MethodGet)
	r.Handle("/api/webhooks/{id}", s.api(s.handleDeleteWebhook())).Methods(http.MethodDelete)
	r.Handle("/api/webhooks/{id}/deliveries", s.api(s.handleDeliveries())).Methods(http.MethodGet)
	r.Handle("/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", s.api(s.handleRedeliver())).Methods(http.MethodPost)
	r.Handle("/api/webhooks/{id}/ping", s.api(s.handlePing())).Methods(http.MethodPost)

	r.Handle("/api/audit-logs", s.api(s.handleAuditLogs())).Methods(http.MethodGet)
	r.Handle("/api/usage", s.api(s.handleUsage())).Methods(http.MethodGet)

	r.Handle("/api/admin/organizations", s.api(s.handleCreateOrganization(), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/organizations", s.api(s.handleListOrganizations(), domain.RoleAdmin)).Methods(http.MethodGet)
	r.Handle("/api/admin/organizations/{id}/rate-limits", s.api(s.handleSetRateLimits(), domain.RoleAdmin)).Methods(http.MethodPut)
	r.Handle("/api/admin/organizations/{id}/disable", s.api(s.handleSetOrganizationStatus(domain.StatusDisabled), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/organizations/{id}/enable", s.api(s.handleSetOrganizationStatus(domain.StatusActive), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/organizations/{id}", s.api(s.handleSetOrganizationStatus(domain.StatusDeleted), domain.RoleAdmin)).Methods(http.MethodDelete)
	r.Handle("/api/admin/clients", s.api(s.handleCreateClient(), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/clients/{id}/disable", s.api(s.handleSetClientStatus(domain.StatusDisabled), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/clients/{id}/enable", s.api(s.handleSetClientStatus(domain.StatusActive), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/clients/{id}", s.api(s.handleSetClientStatus(domain.StatusDeleted), domain.RoleAdmin)).Methods(http.MethodDelete)
	r.Handle("/api/admin/clients/{id}/secret", s.api(s.handleRotateClientSecret(), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/users", s.api(s.handleCreateUser(), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/users/{username}/disable", s.api(s.handleSetUserStatus(domain.StatusDisabled), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/users/{username}/enable", s.api(s.handleSetUserStatus(domain.StatusActive), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/users/{username}", s.api(s.handleSetUserStatus(domain.StatusDeleted), domain.RoleAdmin)).Methods(http.MethodDelete)
	r.Handle("/api/admin/users/{username}/password", s.api(s.handleSetPassword(), domain.RoleAdmin)).Methods(http.MethodPut)
	r.Handle("/api/admin/token-revocations", s.api(s.handleRevokeTokens(), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/api-keys", s.api(s.handleCreateAPIKey(), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/api-keys", s.api(s.handleListAPIKeys(), domain.RoleAdmin)).Methods(http.MethodGet)
	r.Handle("/api/admin/api-keys/{id}", s.api(s.handleRevokeAPIKey(), domain.RoleAdmin)).Methods(http.MethodDelete)
	r.Handle("/api/admin/rebuild", s.api(s.handleStartJob(projections.Rebuild), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/rebuild", s.api(s.handleJobStatus(projections.Rebuild), domain.RoleAdmin)).Methods(http.MethodGet)
	r.Handle("/api/admin/verify", s.api(s.handleStartJob(projections.Verify), domain.RoleAdmin)).Methods(http.MethodPost)
	r.Handle("/api/admin/verify", s.api(s.handleJobStatus(projections.Verify), domain.RoleAdmin)).Methods(http.MethodGet)
	// Admins only, and outside the API: a scraper's requests every few
	// seconds are neither metered nor rate-limited.
	r.Handle("/metrics", s.authenticate(s.handle(onlyFor([]domain.Role{domain.RoleAdmin}, s.handleMetrics())))).Methods(http.MethodGet)
	return r
}

// api wraps an endpoint that needs a token or an API key, open to callers
// of the roles given, or of any role when none is.
func (s *Server) api(h handlerFunc, roles ...domain.Role) http.Handler {
	if len(roles) > 0 {
		h = onlyFor(roles, h)
	}
	inner := s.consistentReads(s.idempotent(s.handle(h)))
	if s.opts.Metering {
		inner = s.metered(s.rateLimited(inner))
	}
	return s.authenticate(inner)
}
