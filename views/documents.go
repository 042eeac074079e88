package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
)

// DocumentJSON is the spec's document response (documentId, awbNumber,
// documentType, uploadedAt) with what the service learned of the file.
// The webhook document.uploaded sends it too.
type DocumentJSON struct {
	DocumentID   string    `json:"documentId"`
	AWBNumber    string    `json:"awbNumber"`
	DocumentType string    `json:"documentType"`
	FileName     string    `json:"fileName"`
	ContentType  string    `json:"contentType"`
	Size         int64     `json:"size"`
	SHA256       string    `json:"sha256"`
	UploadedAt   time.Time `json:"uploadedAt"`
}

func ToDocumentJSON(d domain.DocumentUploaded) DocumentJSON {
	return DocumentJSON{DocumentID: d.DocumentID, AWBNumber: d.AWBNumber, DocumentType: d.DocumentType, FileName: d.FileName,
		ContentType: d.ContentType, Size: d.Size, SHA256: d.SHA256, UploadedAt: d.UploadedAt}
}

// renderDocument is the webhook data of an upload: the document without
// its bytes.
func (r *Renderer) renderDocument(e domain.Event, p domain.Principal) (any, bool) {
	d, ok := e.(domain.DocumentUploaded)
	if !ok || !d.VisibleTo(p, r.ShipmentFacts.Ownership(d.AWBNumber)) {
		return nil, false
	}
	return ToDocumentJSON(d), true
}
