package domain

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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
// "invoice\u202Efdp.exe" show as "invoiceexe.pdf"; nor U+FFFD, which
// stands for bytes that were not UTF-8 (the name sent %FF%FE.txt). A file
// without a name is "document".
func cleanFileName(name string) string {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name))
	if name == "" || name == "." || name == ".." {
		return "document"
	}
	return name
}

// DocumentStorage is an organisation's room for the files of its
// documents: Quota bytes in all (0: no quota), of which Stored are taken.
type DocumentStorage struct {
	Quota, Stored int64
}

// Left is how many more bytes fit: math.MaxInt64 without a quota, 0 when
// the quota is full or passed.
func (s DocumentStorage) Left() int64 {
	if s.Quota == 0 {
		return math.MaxInt64
	}
	return max(s.Quota-s.Stored, 0)
}

// CheckFile refuses a file of size bytes that does not fit. Files are
// kept forever, so without a quota one organisation could fill the
// store everyone's documents share. An upload still arriving is checked
// with the bytes that came so far, and first with 1: a full quota is
// refused before any of the file is read.
func (s DocumentStorage) CheckFile(size int64) error {
	left := s.Left()
	if size <= left {
		return nil
	}
	rest := "nothing is left"
	if left > 0 {
		rest = fmt.Sprintf("the %s left are fewer than this file has", byteSize(left))
	}
	return Errorf(QuotaExceeded, "the documents of your organisation take %s of its storage quota of %s; %s",
		byteSize(s.Stored), byteSize(s.Quota), rest)
}

// byteSize writes n bytes for people, with the exact count: "1.5 MiB
// (1572864 bytes)".
func byteSize(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n)/(1<<10), units[0]
	for _, u := range units[1:] {
		if v < 1<<10 {
			break
		}
		v, unit = v/(1<<10), u
	}
	return fmt.Sprintf("%.1f %s (%d bytes)", v, unit, n)
}
