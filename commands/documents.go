package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

func documentAggregate(id string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateDocument, ID: id}
}

// DocumentID is the id of the document the command m uploads. The file
// is stored under it before the upload is recorded, so the caller needs
// it first; a retried command gets the same id and overwrites nothing
// else.
func DocumentID(m Meta) string { return m.DeriveID("document") }

// UploadDocument records a document whose file is stored under
// DocumentID(m): the AWB number, type, file name, sniffed content type,
// size and SHA-256 in c. stockHolder is the forwarder whose AWB stock
// alone makes the shipment of the number, which is then in its canonical
// form, its own, or "": the number is then held in its ledger with the
// document (see recordInStock).
func (h *Handler) UploadDocument(ctx context.Context, m Meta, c domain.DocumentUploaded, stockHolder string) (Result[domain.DocumentUploaded], error) {
	c.DocumentID, c.OrganizationID, c.UploadedAt = DocumentID(m), m.Principal.OrganizationID, h.now().UTC()
	decide := func(d domain.DocumentUploaded) ([]domain.Event, error) { return domain.DecideUploadDocument(d, c) }
	if stockHolder != "" {
		return recordInStock(ctx, h, m, stockHolder, c.AWBNumber, documentAggregate(c.DocumentID), domain.EvolveDocument, decide)
	}
	return create(ctx, h, documentAggregate(c.DocumentID), m, domain.EvolveDocument, decide)
}
