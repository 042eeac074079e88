package domain

// Aggregate types name the histories in the event log: an event's subject
// begins with its aggregate's type, the audit log shows it as the
// resource, and tools look histories up by it. Like event type names,
// they are stable forever.
const (
	AggregateOrganization  = "org"
	AggregateClient        = "client"
	AggregateUser          = "user"
	AggregateAPIKey        = "apikey"
	AggregateAuthorization = "auth"
	AggregateQuote         = "quote"
	AggregateBooking       = "booking"
	AggregateFlight        = "flight"
	AggregateRateCard      = "ratecard"
	AggregateStockRequest  = "stockrequest"
	AggregateAWBPrefix     = "awbprefix"
	AggregateStockLedger   = "awbledger"
	AggregateAWB           = "awb"
	AggregateWaybill       = "waybill"
	AggregateCompliance    = "compliance"
	AggregateShipment      = "shipment"
	AggregateDocument      = "document"
	AggregateReference     = "reference"
	AggregateWebhook       = "webhook"
	AggregateDelivery      = "delivery"
	// A revoked token, by its jti: revocations of every token of a
	// client, user or organisation are events of that aggregate.
	AggregateTokenRevocation = "tokenrevocation"
	// An airline's AWB prefix or IATA code, by AirlineClaimID: which
	// organisation holds it.
	AggregateAirlineClaim = "airlineclaim"
	// An organisation's webhook subscriptions, by organisation id: the
	// guard of how many it may have.
	AggregateWebhookQuota = "webhookquota"
)

// AggregateTypes lists every aggregate type.
var AggregateTypes = []string{
	AggregateOrganization, AggregateClient, AggregateUser, AggregateAPIKey, AggregateAuthorization,
	AggregateQuote, AggregateBooking, AggregateFlight, AggregateRateCard,
	AggregateStockRequest, AggregateAWBPrefix, AggregateStockLedger, AggregateAWB,
	AggregateWaybill, AggregateCompliance, AggregateShipment, AggregateDocument,
	AggregateReference, AggregateWebhook, AggregateDelivery, AggregateTokenRevocation, AggregateAirlineClaim,
	AggregateWebhookQuota,
}
