package domain

import (
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
)

// DocumentTypes are the kinds of document a shipment carries: the air
// waybill, dangerous goods and consignment security declarations, safety
// data sheets, certificates of origin and of insurance, the commercial
// invoice and the packing list.
var DocumentTypes = []string{"AWB", "DGD", "CSD", "MSDS", "COO", "COI", "INVOICE", "PACKING_LIST", "OTHER"}

// DocumentContentTypes are the file types a document may have, as sniffed
// from its first bytes: what shippers and customs exchange, and nothing
// that runs.
var DocumentContentTypes = []string{"application/pdf", "image/png", "image/jpeg", "image/tiff", "application/xml", "text/xml", "application/json", "text/plain"}

// maxFileName bounds a document's file name, as most file systems do.
const maxFileName = 255

// fileExtensions are the usual extensions of each accepted type, the
// canonical one first. A file is saved under the extension of the type it
// was sniffed as: a browser or desktop opens a downloaded file by its
// extension, not by the Content-Type it came with, so inv.html sniffed as
// text/plain must not be saved as inv.html.
var fileExtensions = map[string][]string{
	"application/pdf":  {".pdf"},
	"image/png":        {".png"},
	"image/jpeg":       {".jpg", ".jpeg"},
	"image/tiff":       {".tif", ".tiff"},
	"application/xml":  {".xml"},
	"text/xml":         {".xml"},
	"application/json": {".json"},
	// Plain text: notes, CSV and tab-separated exports, EDIFACT and
	// Cargo-IMP messages.
	"text/plain": {".txt", ".csv", ".tsv", ".edi"},
}

// DocumentUploaded records a file uploaded for a shipment. The bytes are
// kept beside the stream under DocumentID; the event says what they are.
type DocumentUploaded struct {
	DocumentID     string    `json:"documentId"`
	AWBNumber      string    `json:"awbNumber"`
	DocumentType   string    `json:"documentType"`
	OrganizationID string    `json:"organizationId"`
	FileName       string    `json:"fileName"`
	ContentType    string    `json:"contentType"`
	Size           int64     `json:"size"`
	SHA256         string    `json:"sha256"` // hex
	UploadedAt     time.Time `json:"uploadedAt"`
}

func (DocumentUploaded) EventType() string { return "DocumentUploaded" }

// EvolveDocument applies an event to a document.
func EvolveDocument(d DocumentUploaded, e Event) DocumentUploaded {
	if u, ok := e.(DocumentUploaded); ok {
		return u
	}
	return d
}

// VisibleTo: the organisation that uploaded the document, and all who
// see its shipment (see ShipmentOwnership.VisibleTo); shipment is the
// ownership of the document's AWB number.
func (d DocumentUploaded) VisibleTo(p Principal, shipment ShipmentOwnership) bool {
	return p.OrganizationID == d.OrganizationID || shipment.VisibleTo(p)
}

// CheckDocumentUploaderRole refuses an upload by anyone but a forwarder or an
// airline, before any of it is read.
func CheckDocumentUploaderRole(p Principal) error {
	if p.Role != RoleForwarder && p.Role != RoleAirline {
		return Errorf(Forbidden, "documents are uploaded by forwarders and by the airline of the AWB number's prefix")
	}
	return nil
}

// CheckDocumentUploader refuses an airline's upload for another airline's
// AWB number, and a forwarder's for another forwarder's shipment (see
// ShipmentOwnership.CheckFiler); shipment is the ownership of the AWB
// number the upload names. Others are refused before, by
// CheckDocumentUploaderRole.
func CheckDocumentUploader(p Principal, shipment ShipmentOwnership) error {
	return shipment.checkOwnerOrAirline(p, "documents of %s are uploaded by forwarders and the airline with prefix %s")
}

// CheckDocumentParts checks the text parts of an upload and returns them
// as recorded: the AWB number in its canonical form and the document type
// in upper case.
func CheckDocumentParts(p *Problems, awbNumber, documentType string) (awb, docType string) {
	if strings.TrimSpace(awbNumber) == "" {
		p.Add("awbNumber", CodeRequired, "is required")
	} else if canonical, err := ParseAWB(awbNumber); err != nil {
		p.Add("awbNumber", CodeInvalidAWBNumber, "%s", err.Error())
	} else {
		awb = canonical
	}
	docType = strings.ToUpper(strings.TrimSpace(documentType))
	switch {
	case docType == "":
		p.Add("documentType", CodeRequired, "is required")
	case !slices.Contains(DocumentTypes, docType):
		p.Add("documentType", CodeInvalidValue, "must be one of %s", strings.Join(DocumentTypes, ", "))
	}
	return awb, docType
}

// DecideUploadDocument checks an upload whose file has been stored:
// its text parts, and that a file came, not empty and of an accepted
// type. c.ContentType is empty when no file came.
func DecideUploadDocument(d, c DocumentUploaded) ([]Event, error) {
	var p Problems
	c.AWBNumber, c.DocumentType = CheckDocumentParts(&p, c.AWBNumber, c.DocumentType)
	name := cleanFileName(c.FileName)
	c.FileName = DocumentFileName(name, c.ContentType)
	switch {
	case c.ContentType == "":
		p.Add("file", CodeRequired, "is required: a part named file with the document")
	case !slices.Contains(DocumentContentTypes, c.ContentType):
		p.Add("file", CodeInvalidValue, "is %s; accepted are %s", c.ContentType, strings.Join(DocumentContentTypes, ", "))
	case c.Size <= 0:
		p.Add("file", CodeInvalidValue, "is empty")
	}
	// The limit is of the name as sent: the extension DocumentFileName
	// may add is not the client's to shorten.
	checkLength(&p, "fileName", name, maxFileName)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if d.DocumentID != "" {
		return nil, Errorf(Conflict, "document %s already exists", c.DocumentID)
	}
	return []Event{c}, nil
}

// DocumentFileName is the name a file of type contentType is recorded
// and offered for download under: the name sent, cleaned, with the
// canonical extension of its type appended unless it has one of the
// type's usual extensions (inv.html of text/plain is inv.html.txt).
// Applied to a name it made, it changes nothing; downloads apply it again
// so that names recorded before the rule follow it too.
func DocumentFileName(name, contentType string) string {
	name = cleanFileName(name)
	exts := fileExtensions[contentType]
	if len(exts) == 0 || slices.Contains(exts, strings.ToLower(path.Ext(name))) {
		return name
	}
	return name + exts[0]
}

// cleanFileName keeps the last element of a path, as some clients send
// one, without control characters and without format characters (Cf),
// which are invisible: a right-to-left override makes
// "invoice\u202Efdp.exe" show as "invoiceexe.pdf". A file without a name
// is "document".
func cleanFileName(name string) string {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, name))
	if name == "" || name == "." || name == ".." {
		return "document"
	}
	return name
}
