package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore"
)

// part is a part of an upload: a text field, or a file when fileName is
// set.
type part struct {
	name, value, fileName string
}

// documentParts are the three parts of an upload, in the usual order.
func documentParts(awb, docType, fileName string, data []byte) []part {
	return []part{{name: "awbNumber", value: awb}, {name: "documentType", value: docType}, {name: "file", value: string(data), fileName: fileName}}
}

// upload posts parts, in order, to /api/documents as multipart/form-data.
func (s *testServer) upload(t *testing.T, token string, parts ...part) response {
	t.Helper()
	return s.do(t, uploadRequest(token, parts...))
}

// uploadRequest is the request upload sends, for a table of requests.
func uploadRequest(token string, parts ...part) request {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		if p.fileName == "" {
			mw.WriteField(p.name, p.value)
			continue
		}
		fw, _ := mw.CreateFormFile(p.name, p.fileName)
		io.WriteString(fw, p.value)
	}
	mw.Close()
	return request{method: "POST", path: "/api/documents", token: token, body: body.Bytes(), contentType: mw.FormDataContentType()}
}

type document struct {
	DocumentID, AWBNumber, DocumentType, FileName, ContentType, SHA256 string
	Size                                                               int64
	UploadedAt                                                         time.Time
}

// holdNumber gives the forwarder the AWB number 020-81140743 in stock, so
// that it may upload for it.
func holdNumber(t testing.TB, s *testServer, fwd string) {
	t.Helper()
	s.approvedStock(t, fwd, "020", 1, "020-81140743", "020-81140743")
}

// pdfOf is a PDF of size bytes: the header, then random bytes.
func pdfOf(size int) []byte {
	b := make([]byte, size)
	rand.Read(b)
	copy(b, "%PDF-1.7\n")
	return b
}

func TestDocumentUploadAndDownload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd, lh, ek := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-airline-ek")
	holdNumber(t, s, fwd)
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "globex", "name": "Globex Forwarding", "role": "forwarder"})
	var client struct{ ClientID, ClientSecret string }
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "globex", "clientId": "globex-tms"}).json(t, &client)
	otherForwarder := s.token(t, client.ClientID, client.ClientSecret)
	rc := newReceiver(t)
	s.subscribe(t, fwd, rc, []string{"document.*"}, "")

	// A small invoice, the AWB number without its dash, the type in
	// lower case: every field of the answer.
	invoice := []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
	r := s.upload(t, fwd, documentParts("02081140743", "packing_list", "packing list 4711.pdf", invoice)...)
	if r.status != http.StatusCreated {
		t.Fatalf("upload = %d %s", r.status, r.body)
	}
	var doc document
	r.json(t, &doc)
	sum := sha256.Sum256(invoice)
	if doc.DocumentID == "" || r.header.Get("Location") != "/api/documents/"+doc.DocumentID || r.header.Get("Cargo-Sequence") == "" ||
		doc.AWBNumber != "020-81140743" || doc.DocumentType != "PACKING_LIST" || doc.FileName != "packing list 4711.pdf" ||
		doc.ContentType != "application/pdf" || doc.Size != int64(len(invoice)) || doc.SHA256 != hex.EncodeToString(sum[:]) ||
		time.Since(doc.UploadedAt) > time.Minute {
		t.Errorf("upload = %s %v", r.body, r.header)
	}
	got := eventually(t, "a document.uploaded delivery", rc.received, func(d []delivery) bool { return len(d) == 1 })
	if got[0].Type != "document.uploaded" || got[0].Data["documentId"] != doc.DocumentID || got[0].Data["sha256"] != doc.SHA256 {
		t.Errorf("delivery = %+v", got[0])
	}

	// 5 MiB, byte for byte, with its digests.
	big := pdfOf(5 << 20)
	r = s.upload(t, fwd, documentParts("020-81140743", "COO", "certificate.pdf", big)...)
	if r.status != http.StatusCreated {
		t.Fatalf("5 MiB upload = %d %s", r.status, r.body)
	}
	var bigDoc document
	r.json(t, &bigDoc)
	bigSum := sha256.Sum256(big)
	digest := base64.StdEncoding.EncodeToString(bigSum[:])
	download := func(s *testServer, token string) {
		t.Helper()
		r := s.do(t, request{method: "GET", path: "/api/documents/" + bigDoc.DocumentID, token: token})
		if r.status != http.StatusOK || !bytes.Equal(r.body, big) {
			t.Fatalf("download = %d, %d bytes, equal %v", r.status, len(r.body), bytes.Equal(r.body, big))
		}
		h := r.header
		if h.Get("Content-Type") != "application/pdf" || h.Get("Content-Length") != strconv.Itoa(len(big)) ||
			h.Get("Content-Disposition") != `attachment; filename=certificate.pdf` ||
			h.Get("Repr-Digest") != "sha-256=:"+digest+":" || h.Get("Digest") != "SHA-256="+digest ||
			h.Get("Content-Security-Policy") != "sandbox; default-src 'none'" || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("ETag") != `"`+bigDoc.SHA256+`"` {
			t.Errorf("download headers = %v", h)
		}
	}
	download(s, fwd)
	// HEAD answers the headers alone; the ETag spares a second download.
	head := s.do(t, request{method: "HEAD", path: "/api/documents/" + bigDoc.DocumentID, token: fwd})
	if head.status != http.StatusOK || len(head.body) != 0 || head.header.Get("Content-Length") != strconv.Itoa(len(big)) ||
		head.header.Get("Repr-Digest") != "sha-256=:"+digest+":" || head.header.Get("ETag") != `"`+bigDoc.SHA256+`"` {
		t.Errorf("HEAD = %d, %d bytes, %v", head.status, len(head.body), head.header)
	}
	for _, ifNoneMatch := range []string{`"` + bigDoc.SHA256 + `"`, `"other", W/"` + bigDoc.SHA256 + `"`, "*"} {
		r := s.do(t, request{method: "GET", path: "/api/documents/" + bigDoc.DocumentID, token: fwd, header: map[string]string{"If-None-Match": ifNoneMatch}})
		if r.status != http.StatusNotModified || len(r.body) != 0 || r.header.Get("ETag") != `"`+bigDoc.SHA256+`"` {
			t.Errorf("If-None-Match %s = %d, %d bytes", ifNoneMatch, r.status, len(r.body))
		}
	}
	if r := s.do(t, request{method: "GET", path: "/api/documents/" + bigDoc.DocumentID, token: fwd, header: map[string]string{"If-None-Match": `"other"`}}); r.status != http.StatusOK {
		t.Errorf("If-None-Match of another file = %d", r.status)
	}
	// A broken-off download goes on where it stopped.
	n := len(big)
	for _, tt := range []struct {
		rangeHeader, ifRange string
		status               int
		from, to             int // the bytes sent, to exclusive
	}{
		{"bytes=0-1023", "", http.StatusPartialContent, 0, 1024},
		{"bytes=4194304-", `"` + bigDoc.SHA256 + `"`, http.StatusPartialContent, 4194304, n},
		{"bytes=-100", "", http.StatusPartialContent, n - 100, n},
		{"bytes=0-9,20-29", "", http.StatusOK, 0, n},
		{"bytes=100-", `"another file"`, http.StatusOK, 0, n},
	} {
		header := map[string]string{"Range": tt.rangeHeader}
		if tt.ifRange != "" {
			header["If-Range"] = tt.ifRange
		}
		r := s.do(t, request{method: "GET", path: "/api/documents/" + bigDoc.DocumentID, token: fwd, header: header})
		contentRange := ""
		if tt.status == http.StatusPartialContent {
			contentRange = fmt.Sprintf("bytes %d-%d/%d", tt.from, tt.to-1, n)
		}
		if r.status != tt.status || !bytes.Equal(r.body, big[tt.from:tt.to]) || r.header.Get("Content-Range") != contentRange ||
			r.header.Get("Repr-Digest") != "sha-256=:"+digest+":" || r.header.Get("Accept-Ranges") != "bytes" {
			t.Errorf("Range %s = %d, %d bytes, Content-Range %q", tt.rangeHeader, r.status, len(r.body), r.header.Get("Content-Range"))
		}
	}
	r = s.do(t, request{method: "GET", path: "/api/documents/" + bigDoc.DocumentID, token: fwd, header: map[string]string{"Range": fmt.Sprintf("bytes=%d-", n)}})
	// The error is no part of the file: without its name, which a client
	// would save the error under, nor its digests.
	if e := r.apiError(t); r.status != http.StatusRequestedRangeNotSatisfiable || e.Error != "range_not_satisfiable" ||
		r.header.Get("Content-Range") != fmt.Sprintf("bytes */%d", n) || r.header.Get("Content-Disposition") != "" || r.header.Get("Repr-Digest") != "" {
		t.Errorf("a range past the end = %d %s %v", r.status, r.body, r.header)
	}
	if r := s.do(t, request{method: "HEAD", path: "/api/documents/" + bigDoc.DocumentID, token: ek}); r.status != http.StatusNotFound || len(r.body) != 0 {
		t.Errorf("HEAD by another airline = %d %s", r.status, r.body)
	}
	download(s, lh) // the airline of the prefix
	download(s, admin)
	for name, token := range map[string]string{"another forwarder": otherForwarder, "another airline": ek} {
		if r := s.do(t, request{method: "GET", path: "/api/documents/" + bigDoc.DocumentID, token: token}); r.status != http.StatusNotFound {
			t.Errorf("%s downloads: %d", name, r.status)
		}
	}
	if r := s.do(t, request{method: "GET", path: "/api/documents/no-such-document", token: fwd}); r.status != http.StatusNotFound {
		t.Errorf("unknown document: %d", r.status)
	}

	// A file is saved under an extension of the type it was sniffed as,
	// and without invisible characters.
	for _, tt := range []struct {
		sent, data, recorded, disposition string
	}{
		{"inv.html", "Invoice 4711: plain text after all", "inv.html.txt", `attachment; filename=inv.html.txt`},
		{"evil.svg", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`, "evil.svg.xml", `attachment; filename=evil.svg.xml`},
		{"invoice\u202Efdp.exe", "%PDF-1.7\n", "invoicefdp.exe.pdf", `attachment; filename=invoicefdp.exe.pdf`},
		{"manifest.csv", "awb,pieces\n020-81140743,2\n", "manifest.csv", `attachment; filename=manifest.csv`},
	} {
		r := s.upload(t, lh, documentParts("020-81140743", "OTHER", tt.sent, []byte(tt.data))...)
		var d document
		r.json(t, &d)
		if r.status != http.StatusCreated || d.FileName != tt.recorded {
			t.Errorf("upload of %q = %d %s, want the name %q", tt.sent, r.status, r.body, tt.recorded)
			continue
		}
		got := s.do(t, request{method: "GET", path: "/api/documents/" + d.DocumentID, token: lh})
		if cd := got.header.Get("Content-Disposition"); cd != tt.disposition {
			t.Errorf("download of %q: Content-Disposition %s, want %s", tt.sent, cd, tt.disposition)
		}
	}

	// Who may upload: forwarders, and the airline of the prefix.
	for _, tt := range []struct {
		name   string
		token  string
		status int
	}{
		{"the airline of the prefix", lh, http.StatusCreated},
		{"another airline", ek, http.StatusForbidden},
		{"an admin", admin, http.StatusForbidden},
	} {
		if r := s.upload(t, tt.token, documentParts("020-81140743", "MSDS", "sds.txt", []byte("Safety data sheet"))...); r.status != tt.status {
			t.Errorf("upload by %s = %d %s, want %d", tt.name, r.status, r.body, tt.status)
		}
	}

	// The files live in JetStream: a restarted service serves them.
	s.stop()
	s = startServer(t, dir, nil)
	download(s, s.demoToken(t, "demo-forwarder"))
}

func TestDocumentRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	pdf := pdfOf(2048)
	tests := []struct {
		name   string
		parts  []part
		status int
		fields string // of a validation error
	}{
		{"bad check digit", documentParts("020-81140744", "INVOICE", "a.pdf", pdf), 400, "awbNumber:INVALID_AWB_NUMBER"},
		{"no AWB number", documentParts("", "INVOICE", "a.pdf", pdf)[1:], 400, "awbNumber:REQUIRED"},
		{"no document type", documentParts("020-81140743", "", "a.pdf", pdf), 400, "documentType:REQUIRED"},
		{"unknown document type", documentParts("020-81140743", "selfie", "a.pdf", pdf), 400, "documentType:INVALID_VALUE"},
		{"no file", documentParts("020-81140743", "INVOICE", "", nil)[:2], 400, "file:REQUIRED"},
		{"an empty file", documentParts("020-81140743", "INVOICE", "empty.txt", nil), 400, "file:INVALID_VALUE"},
		{"file first, then bad fields", []part{{name: "file", value: string(pdf), fileName: "a.pdf"}, {name: "documentType", value: "x"},
			{name: "awbNumber", value: "1"}}, 400, "awbNumber:INVALID_AWB_NUMBER documentType:INVALID_VALUE"},
		{"the file twice", append(documentParts("020-81140743", "INVOICE", "a.pdf", pdf), part{name: "file", value: "x", fileName: "b.txt"}), 400, "file:DUPLICATE"},
		{"the AWB number twice", append(documentParts("020-81140743", "INVOICE", "a.pdf", pdf)[:2], part{name: "awbNumber", value: "020-81140743"}), 400, "awbNumber:DUPLICATE"},
		{"a document type of 2 KiB", documentParts("020-81140743", strings.Repeat("A", 2048), "a.pdf", pdf), 400, "documentType:TOO_LONG"},
		{"file first", []part{{name: "file", value: string(pdf), fileName: "a.pdf"}, {name: "documentType", value: "awb"}, {name: "awbNumber", value: "020-81140743"}}, 201, ""},
		{"TIFF", documentParts("020-81140743", "OTHER", "scan.tif", []byte("II*\x00\x08\x00\x00\x00")), 201, ""},
		{"JSON", documentParts("020-81140743", "OTHER", "data.json", []byte(`  {"pieces": 2}`)), 201, ""},
		{"XML", documentParts("020-81140743", "AWB", "xfwb.xml", []byte(`<?xml version="1.0"?><Waybill/>`)), 201, ""},
		{"a Windows program", documentParts("020-81140743", "OTHER", "invoice.pdf.exe", append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"), make([]byte, 4096)...)), 415, ""},
		{"HTML", documentParts("020-81140743", "OTHER", "page.html", []byte("<!DOCTYPE html><script>alert(1)</script>")), 415, ""},
	}
	kept := map[string]bool{} // the files of accepted uploads, by document id
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.upload(t, fwd, tt.parts...)
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			switch r.status {
			case http.StatusCreated:
				var d document
				r.json(t, &d)
				kept[d.DocumentID] = true
			case http.StatusBadRequest:
				checkFields(t, r, tt.fields)
			case http.StatusUnsupportedMediaType:
				e := r.apiError(t)
				if e.Error != "unsupported_media_type" || !strings.Contains(e.ErrorDescription, "accepted are application/pdf") || !r.closed {
					t.Errorf("= %s", r.body)
				}
			}
		})
	}
	if e := s.upload(t, fwd, documentParts("020-81140743", "OTHER", "x.exe", []byte("MZ\x90\x00"))...).apiError(t); !strings.Contains(e.ErrorDescription, "the file is application/octet-stream") {
		t.Errorf("the refusal of a program names %q", e.ErrorDescription)
	}
	// Bodies that cannot be read say why.
	for body, want := range map[string]string{
		"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\x01b.pdf\"\r\n\r\n%PDF-1.7\r\n--XX--\r\n": "the multipart body is malformed",
		"--XX\r\nContent-Disposition: form-data; name=\"awbNumber\"\r\n\r\n020-81140743\r\n--XX\r\n" +
			"Content-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\n%PDF-1.7 and no end": "broke off before its closing boundary",
	} {
		r := s.do(t, request{method: "POST", path: "/api/documents", token: fwd, body: []byte(body), contentType: "multipart/form-data; boundary=XX"})
		if e := r.apiError(t); r.status != http.StatusBadRequest || e.Error != "invalid_request" || !strings.Contains(e.ErrorDescription, want) {
			t.Errorf("%q = %d %s", body, r.status, r.body)
		}
	}
	if r := s.do(t, request{method: "POST", path: "/api/documents", token: fwd, body: map[string]string{"awbNumber": "020-81140743"}}); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("a JSON body = %d", r.status)
	}
	// The forwarder's uploads made the shipment its own: another forwarder
	// may not upload for it.
	rival := s.rivalForwarder(t)
	if r := s.upload(t, rival, documentParts("020-81140743", "INVOICE", "a.pdf", pdf)...); r.status != http.StatusForbidden {
		t.Errorf("another forwarder's upload = %d %s", r.status, r.body)
	}
	// Sent before the AWB number, the file is stored before the upload can
	// be refused: then it is deleted.
	if r := s.upload(t, rival, []part{{name: "file", value: string(pdf), fileName: "a.pdf"}, {name: "documentType", value: "INVOICE"},
		{name: "awbNumber", value: "020-81140743"}}...); r.status != http.StatusForbidden {
		t.Errorf("another forwarder's upload, file first = %d %s", r.status, r.body)
	}
	// Idempotency-Key is not honoured on uploads: each is a document.
	var first, second document
	for _, d := range []*document{&first, &second} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("awbNumber", "020-81140743")
		mw.WriteField("documentType", "INVOICE")
		fw, _ := mw.CreateFormFile("file", "a.pdf")
		fw.Write(pdf)
		mw.Close()
		r := s.do(t, request{method: "POST", path: "/api/documents", token: fwd, body: body.Bytes(), contentType: mw.FormDataContentType(),
			header: map[string]string{"Idempotency-Key": "upload-1"}})
		r.json(t, d)
	}
	if first.DocumentID == "" || first.DocumentID == second.DocumentID {
		t.Errorf("two uploads with one Idempotency-Key = %s, %s", first.DocumentID, second.DocumentID)
	}
	kept[first.DocumentID], kept[second.DocumentID] = true, true

	// No refused upload left its file behind.
	s.stop()
	checkStoredFiles(t, dir, kept)
}

// checkStoredFiles checks that the object store of the stopped server of
// dir holds the files of the uploads kept names and no others, and no
// chunks of a file left half stored.
func checkStoredFiles(t *testing.T, dir string, kept map[string]bool) {
	t.Helper()
	store, err := eventstore.Open(t.Context(), eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	files, err := store.Objects(t.Context(), "documents")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := files.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range stored {
		if !kept[f.Name] {
			t.Errorf("the file %s of a refused upload is stored", f.Name)
		}
	}
	if len(stored) != len(kept) {
		t.Errorf("%d files stored for %d accepted uploads", len(stored), len(kept))
	}
	if n, err := files.DeleteUnnamed(t.Context(), 0); err != nil || n != 0 {
		t.Errorf("unnamed chunks of %d uploads (%v) left", n, err)
	}
}

// countingWriter counts what its writer took.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func TestDocumentUploadLimit(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	const limit, tooLarge = 20 << 20, 25 << 20 // the default limit

	// With Content-Length: refused before the body is read. What the
	// client has sent by the answer is what the sockets buffered, far
	// less than the limit the server would otherwise have read up to.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("awbNumber", "020-81140743")
	mw.WriteField("documentType", "INVOICE")
	fw, _ := mw.CreateFormFile("file", "big.pdf")
	fw.Write(pdfOf(tooLarge))
	mw.Close()
	var sent atomic.Int64
	req, err := http.NewRequest(http.MethodPost, s.base+"/api/documents", io.TeeReader(bytes.NewReader(body.Bytes()), countingWriter{io.Discard, &sent}))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(body.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+fwd)
	r := s.send(t, req, nil)
	atAnswer := sent.Load()
	if e := r.apiError(t); r.status != http.StatusRequestEntityTooLarge || e.Error != "payload_too_large" || !r.closed {
		t.Errorf("25 MiB with Content-Length = %d %s", r.status, r.body)
	}
	if atAnswer >= limit {
		t.Errorf("the server answered after %d bytes: it read the body", atAnswer)
	}
	t.Logf("answered after %.1f MiB of %d MiB", float64(atAnswer)/(1<<20), tooLarge>>20)
}

// tooLarge is the size of the uploads that must not be read whole.
const tooLarge = 25 << 20

// streamUpload sends a file of size bytes, beginning with head, chunked
// (without Content-Length), and returns the answer and how many bytes had
// been sent when it came.
func streamUpload(t *testing.T, s *testServer, token, fileName, head string, size int64) (response, int64) {
	t.Helper()
	pr, pw := io.Pipe()
	var sent atomic.Int64
	mw := multipart.NewWriter(countingWriter{pw, &sent})
	done := make(chan struct{})
	go func() {
		defer close(done)
		mw.WriteField("awbNumber", "020-81140743")
		mw.WriteField("documentType", "INVOICE")
		fw, _ := mw.CreateFormFile("file", fileName)
		chunk := pdfOf(64 << 10)
		copy(chunk, head)
		for sent.Load() < size {
			if _, err := fw.Write(chunk); err != nil {
				return // the request is over
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	req, err := http.NewRequest(http.MethodPost, s.base+"/api/documents", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	r := s.send(t, req, nil)
	atAnswer := sent.Load()
	pr.CloseWithError(errors.New("answered")) // stops the writer if the transport has not
	<-done
	return r, atAnswer
}

func TestDocumentStreamingLimit(t *testing.T) {
	t.Parallel()
	// A limit well below 25 MiB: between what the server reads and what
	// the client has sent when the answer comes lie the sockets' buffers,
	// several MiB on loopback.
	const limit = 2 << 20
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_MAX_UPLOAD_BYTES": strconv.Itoa(limit)})
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	for _, tt := range []struct {
		size   int
		status int
	}{{limit, http.StatusCreated}, {limit + 1, http.StatusRequestEntityTooLarge}} {
		if r := s.upload(t, fwd, documentParts("020-81140743", "INVOICE", "edge.pdf", pdfOf(tt.size))...); r.status != tt.status {
			t.Errorf("a file of %d bytes = %d %s, want %d", tt.size, r.status, r.body, tt.status)
		}
	}

	// Chunked, without Content-Length: the server reads up to the limit,
	// then answers and stops reading, long before 25 MiB are sent. A
	// program is refused on its first bytes.
	for _, tt := range []struct {
		name   string
		head   string
		status int
		code   string
	}{
		{"endless.pdf", "%PDF-1.7\n", http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"setup.exe", "MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff", http.StatusUnsupportedMediaType, "unsupported_media_type"},
	} {
		r, atAnswer := streamUpload(t, s, fwd, tt.name, tt.head, tooLarge)
		if r.status != tt.status || !r.closed || r.apiError(t).Error != tt.code {
			t.Errorf("chunked 25 MiB %s = %d %s", tt.name, r.status, r.body)
		}
		if atAnswer >= tooLarge {
			t.Errorf("%s: the server answered after %d bytes: it read the whole body", tt.name, atAnswer)
		}
		t.Logf("%s answered after %.1f MiB of %d MiB", tt.name, float64(atAnswer)/(1<<20), tooLarge>>20)
	}

	// Nothing of the refusals was kept in the way: the service goes on.
	if r := s.upload(t, fwd, documentParts("020-81140743", "INVOICE", "small.pdf", pdfOf(1000))...); r.status != http.StatusCreated {
		t.Errorf("an upload after the refusals = %d %s", r.status, r.body)
	}
}

// stalledUpload posts body, the beginning of an upload, and sends no more
// until the answer has come: the answer must not wait for the rest. The
// request declares a Content-Length of declared bytes, or none for 0.
func (s *testServer) stalledUpload(t *testing.T, token string, body []byte, contentType string, declared int64) response {
	t.Helper()
	// Far below the 30 seconds a stalled upload is given.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		pw.Write(body)
		// Then nothing, until the answer or the timeout: the transport
		// waits for the body to end even when it gives up.
		<-ctx.Done()
		pw.CloseWithError(ctx.Err())
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/documents", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = declared
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	return s.send(t, req, nil)
}

func TestDocumentUploadBeyondTheFile(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	tests := []struct {
		name   string
		write  func(mw *multipart.Writer) // the beginning of the body
		status int
		code   string
		desc   string // in the error description
	}{
		{"a part header of 1 MiB on the file", func(mw *multipart.Writer) {
			fw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file"; filename="a.pdf"`},
				"X-Padding": {strings.Repeat("a", 1<<20)}})
			io.WriteString(fw, "%PDF-1.7\n")
		}, http.StatusRequestEntityTooLarge, "payload_too_large", "beside its file, with all part headers, may have at most 64 KiB"},
		{"a part of 100 KiB the service does not know", func(mw *multipart.Writer) {
			mw.WriteField("notes", strings.Repeat("n", 100<<10))
		}, http.StatusRequestEntityTooLarge, "payload_too_large", "at most 64 KiB"},
		{"51 parts", func(mw *multipart.Writer) {
			for i := range 51 {
				mw.WriteField(fmt.Sprintf("extra%d", i), "x")
			}
		}, http.StatusBadRequest, "invalid_request", "at most 50 parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			tt.write(mw)
			r := s.stalledUpload(t, fwd, body.Bytes(), mw.FormDataContentType(), 0)
			if e := r.apiError(t); r.status != tt.status || e.Error != tt.code || !strings.Contains(e.ErrorDescription, tt.desc) {
				t.Errorf("= %d %s", r.status, r.body)
			}
			if tt.status == http.StatusRequestEntityTooLarge && !r.closed {
				t.Error("the connection is kept")
			}
		})
	}
	// 50 parts are fine; unknown ones are passed over. (Uploaded by the
	// airline of the prefix, which needs no shipment of its own.)
	parts := documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(1000))
	for i := range 47 {
		parts = append(parts, part{name: fmt.Sprintf("extra%d", i), value: "x"})
	}
	if r := s.upload(t, s.demoToken(t, "demo-airline-lh"), parts...); r.status != http.StatusCreated {
		t.Errorf("50 parts = %d %s", r.status, r.body)
	}
}

// forwarders makes n forwarder organisations and returns a token of each.
func (s *testServer) forwarders(t *testing.T, n int) []string {
	t.Helper()
	admin := s.demoToken(t, "demo-admin")
	var tokens []string
	for i := range n {
		id := fmt.Sprintf("uploader-%d", i)
		s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": id, "name": "Uploader " + id, "role": "forwarder"})
		var client struct{ ClientID, ClientSecret string }
		s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": id, "clientId": id + "-tms"}).json(t, &client)
		tokens = append(tokens, s.token(t, client.ClientID, client.ClientSecret))
	}
	return tokens
}

// stalledUploads starts an upload for each token that sends its
// beginning and then stalls, and returns the answers as they come and a
// function that breaks the uploads off.
func (s *testServer) stalledUploads(t *testing.T, tokens []string) (<-chan uploadAnswer, func()) {
	t.Helper()
	var start bytes.Buffer
	mw := multipart.NewWriter(&start)
	mw.WriteField("documentType", "INVOICE")
	answers := make(chan uploadAnswer, len(tokens))
	var writers []*io.PipeWriter
	for _, token := range tokens {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		go pw.Write(start.Bytes())
		req, err := http.NewRequest(http.MethodPost, s.base+"/api/documents", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+token)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- uploadAnswer{err: err}
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- uploadAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(body)}
		}()
	}
	return answers, func() {
		for _, pw := range writers {
			pw.CloseWithError(errors.New("client gone"))
		}
	}
}

type uploadAnswer struct {
	status     int
	retryAfter string
	body       string
	err        error
}

// refusals waits for n answers, each of which must be a 503 with
// Retry-After whose description holds want.
func refusals(t *testing.T, answers <-chan uploadAnswer, n int, want string) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for range n {
		select {
		case a := <-answers:
			if a.status != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.body, want) {
				t.Fatalf("an upload beyond the limit = %+v, want 503 with Retry-After saying %q", a, want)
			}
		case <-timeout:
			t.Fatalf("fewer than %d uploads were refused", n)
		}
	}
}

func TestDocumentUploadsAtOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	const most, share = 32, 8 // httpapi's maxUploads and maxUploadsPerOrganization
	orgs := append([]string{fwd}, s.forwarders(t, most/share)...)

	// Each of four organisations sends share+2 uploads that stall: share
	// of each are taken and wait for the rest, the others are refused at
	// once; the replica's places are all taken.
	var tokens []string
	for _, token := range orgs[:most/share] {
		for range share + 2 {
			tokens = append(tokens, token)
		}
	}
	answers, breakOff := s.stalledUploads(t, tokens)
	defer breakOff()
	refusals(t, answers, 2*most/share, "the most one organisation may at once")
	// An organisation with places of its own to spare is refused too, at
	// once and without its body being read: the replica is full.
	r := s.upload(t, orgs[most/share], documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(1000))...)
	if e := r.apiError(t); r.status != http.StatusServiceUnavailable || e.Error != "service_unavailable" ||
		!strings.Contains(e.ErrorDescription, "32 uploads") || r.header.Get("Retry-After") == "" || !r.closed {
		t.Errorf("one more upload = %d %v %s", r.status, r.header, r.body)
	}
	if len(answers) != 0 {
		t.Errorf("%d of the stalled uploads were answered while they stalled", len(answers))
	}

	// The stalled uploads break off: their places are free again.
	breakOff()
	for range most {
		<-answers
	}
	// Taken, and found wanting.
	eventually(t, "an upload after the stalled ones", func() int {
		return s.upload(t, fwd, documentParts("", "INVOICE", "a.pdf", pdfOf(1000))[1:]...).status
	}, func(status int) bool { return status == http.StatusBadRequest })
}

// One organisation's stalled uploads take no more than its share of a
// replica's places: another organisation's upload goes through.
func TestOneOrganisationsUploadsLeaveRoomForOthers(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	other := s.forwarders(t, 1)[0]
	holdNumber(t, s, fwd)
	const share, tried = 8, 12
	tokens := make([]string, tried)
	for i := range tokens {
		tokens[i] = other
	}
	answers, breakOff := s.stalledUploads(t, tokens)
	defer breakOff()
	refusals(t, answers, tried-share, "the most one organisation may at once")
	if r := s.upload(t, fwd, documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(1000))...); r.status != http.StatusCreated {
		t.Errorf("another organisation's upload while one stalls %d = %d %s", share, r.status, r.body)
	}
}

func TestAnOrganisationsDocumentsStayWithinItsStorageQuota(t *testing.T) {
	t.Parallel()
	const quota = 3000
	dir := t.TempDir()
	s := startServer(t, dir, map[string]string{"CARGO_DOCUMENT_QUOTA_BYTES": strconv.Itoa(quota)})
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	holdNumber(t, s, fwd)
	type storage struct{ Documents, BytesStored, QuotaBytes int64 }
	stored := func(token string) storage {
		var u struct{ DocumentStorage storage }
		s.do(t, request{method: "GET", path: "/api/usage", token: token}).json(t, &u)
		return u.DocumentStorage
	}
	refused := func(what string, r response, desc string) {
		t.Helper()
		if e := r.apiError(t); r.status != http.StatusRequestEntityTooLarge || e.Error != "quota_exceeded" || !r.closed ||
			!strings.Contains(e.ErrorDescription, desc) {
			t.Errorf("%s = %d %s, want 413 quota_exceeded saying %q", what, r.status, r.body, desc)
		}
	}
	kept := map[string]bool{}
	upload := func(token string, size int) response {
		r := s.upload(t, token, documentParts("020-81140743", "INVOICE", "inv.pdf", pdfOf(size))...)
		if r.status == http.StatusCreated {
			var d document
			r.json(t, &d)
			kept[d.DocumentID] = true
		}
		return r
	}

	if r := upload(fwd, 2000); r.status != http.StatusCreated {
		t.Fatalf("2000 bytes of a quota of 3000 = %d %s", r.status, r.body)
	}
	if got := stored(fwd); got != (storage{1, 2000, quota}) {
		t.Errorf("usage after one upload = %+v", got)
	}
	// The file passes what is left as it streams in: refused then.
	refused("1001 bytes with 1000 left", upload(fwd, 1001),
		"take 2.0 KiB (2000 bytes) of its storage quota of 2.9 KiB (3000 bytes); the 1000 bytes left are fewer than this file has")
	// A body whose Content-Length says its file cannot fit is refused
	// before it is read.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "big.pdf")
	fw.Write(pdfOf(200 << 10))
	mw.Close()
	refused("a Content-Length of 200 KiB with 1000 bytes left",
		s.stalledUpload(t, fwd, body.Bytes()[:1000], mw.FormDataContentType(), int64(body.Len())), "the 1000 bytes left")

	if r := upload(fwd, 1000); r.status != http.StatusCreated {
		t.Fatalf("the last 1000 bytes = %d %s", r.status, r.body)
	}
	// A full quota is refused before the body is read: here it never
	// comes.
	head := body.Bytes()[:100]
	refused("an upload with the quota full", s.stalledUpload(t, fwd, head, mw.FormDataContentType(), 0), "; nothing is left")
	if got := stored(fwd); got != (storage{2, quota, quota}) {
		t.Errorf("usage with the quota full = %+v", got)
	}
	// The quota is each organisation's own.
	if r := upload(lh, 2500); r.status != http.StatusCreated {
		t.Errorf("the airline's upload = %d %s", r.status, r.body)
	}
	if got := stored(lh); got != (storage{1, 2500, quota}) {
		t.Errorf("the airline's usage = %+v", got)
	}
	// No refused upload left its file behind.
	s.stop()
	checkStoredFiles(t, dir, kept)
}

// A download takes as long as its client takes to read it: one that
// pauses (a slow link, a busy disk) past the object store's timeout of
// 5 seconds for a request still gets the whole file, as only a client
// that takes nothing for stallTimeout is cut off.
func TestASlowDownloadOfALargeDocumentArrivesWhole(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	// Larger than the sockets' buffers on loopback: the server cannot
	// write it all before the client reads on.
	big := pdfOf(16 << 20)
	r := s.upload(t, fwd, documentParts("020-81140743", "COO", "certificate.pdf", big)...)
	if r.status != http.StatusCreated {
		t.Fatalf("upload = %d %s", r.status, r.body)
	}
	var doc document
	r.json(t, &doc)
	req, err := http.NewRequest(http.MethodGet, s.base+"/api/documents/"+doc.DocumentID, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+fwd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := make([]byte, 1<<20)
	if _, err := io.ReadFull(resp.Body, start); err != nil {
		t.Fatal(err)
	}
	time.Sleep(7 * time.Second) // the client's pause, well within stallTimeout
	rest, err := io.ReadAll(resp.Body)
	if got := append(start, rest...); err != nil || !bytes.Equal(got, big) {
		t.Errorf("download after a pause = %d of %d bytes, %v", len(got), len(big), err)
	}
}

// An upload whose client goes away mid-file leaves nothing in the object
// store: neither a file nor the chunks sent so far, which no file names
// and nothing would find.
func TestAnUploadBrokenOffByItsClientLeavesNoChunks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	mw.WriteField("awbNumber", "020-81140743")
	mw.WriteField("documentType", "INVOICE")
	fw, _ := mw.CreateFormFile("file", "big.pdf")
	// More than the sockets on loopback buffer: once it is written, the
	// server has read much of it and stored chunks of it.
	fw.Write(pdfOf(12 << 20))
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		fwd, mw.FormDataContentType(), head.Len()+(1<<20))
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	// A megabyte short, the client is gone, resetting the connection as
	// a client killed or cut off by its network does.
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
	// The server ends the request before it stops.
	s.stop()
	checkStoredFiles(t, dir, nil)
}

// An upload in the wrong form is refused without its body being read,
// Idempotency-Key or not: a body of the upload limit is never held whole
// in memory to answer 415.
func TestAnUploadNotMultipartIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	const size = 20 << 20 // the upload limit, far more than the sockets buffer
	for _, key := range []string{"", "upload-1"} {
		pr, pw := io.Pipe()
		var sent atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			chunk := bytes.Repeat([]byte(" "), 64<<10)
			for sent.Load() < size {
				n, err := pw.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					return // the request is over
				}
			}
			pw.Close()
		}()
		req, err := http.NewRequest(http.MethodPost, s.base+"/api/documents", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+fwd)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		r := s.send(t, req, nil)
		atAnswer := sent.Load()
		pr.CloseWithError(errors.New("answered"))
		<-done
		if r.status != http.StatusUnsupportedMediaType {
			t.Errorf("Idempotency-Key %q: a JSON body = %d %s", key, r.status, r.body)
		}
		if atAnswer >= size {
			t.Errorf("Idempotency-Key %q: the server answered after %d bytes: it read the whole body", key, atAnswer)
		}
	}
}

func TestAFilePartWhoseHeaderDoesNotParseIsRefusedAsSuch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	// A client that does not escape the quotes of a file name: the file
	// part's Content-Disposition does not parse. A small file was refused
	// as missing, one of more than 64 KiB as too much beside the file.
	for _, size := range []int{2048, 100 << 10} {
		body := "--XX\r\nContent-Disposition: form-data; name=\"awbNumber\"\r\n\r\n020-81140743\r\n" +
			"--XX\r\nContent-Disposition: form-data; name=\"documentType\"\r\n\r\nINVOICE\r\n" +
			"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"invoice \"4711\".pdf\"\r\n\r\n" +
			string(pdfOf(size)) + "\r\n--XX--\r\n"
		r := s.do(t, request{method: "POST", path: "/api/documents", token: fwd, body: []byte(body), contentType: "multipart/form-data; boundary=XX"})
		if e := r.apiError(t); r.status != http.StatusBadRequest || e.Error != "invalid_request" ||
			!strings.Contains(e.ErrorDescription, "part 3: its Content-Disposition header does not parse") {
			t.Errorf("a file of %d bytes = %d %s", size, r.status, r.body)
		}
	}
	s.stop()
	checkStoredFiles(t, dir, map[string]bool{})
}

func TestAnUploadOfAnotherContentTypeIsToldWhatItSent(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	// A multipart/form-data whose boundary is empty was told the body must
	// be multipart/form-data, which it said it was.
	tests := []struct{ contentType, want string }{
		{"multipart/form-data; boundary=", `this request has Content-Type "multipart/form-data; boundary="`},
		{"multipart/form-data; boundary=a; boundary=b", `this request has Content-Type "multipart/form-data; boundary=a; boundary=b"`},
		{"multipart/mixed; boundary=XX", `this request has Content-Type "multipart/mixed; boundary=XX"`},
		{"text/plain", `this request has Content-Type "text/plain"`},
	}
	for _, tt := range tests {
		req := uploadRequest(fwd, documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(2048))...)
		req.contentType = tt.contentType
		r := s.do(t, req)
		if e := r.apiError(t); r.status != http.StatusUnsupportedMediaType || e.Error != "unsupported_media_type" ||
			!strings.Contains(e.ErrorDescription, tt.want) {
			t.Errorf("Content-Type %q = %d %s", tt.contentType, r.status, r.body)
		}
	}
}

func TestACompressedUploadIsRefusedAsCompressed(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	holdNumber(t, s, fwd)
	// A client that compresses its body: refused as a JSON body would be,
	// not as a malformed multipart body.
	req := uploadRequest(fwd, documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(2048))...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(req.body.([]byte))
	zw.Close()
	req.body, req.header = gz.Bytes(), map[string]string{"Content-Encoding": "gzip"}
	r := s.do(t, req)
	if e := r.apiError(t); r.status != http.StatusUnsupportedMediaType || e.Error != "unsupported_media_type" ||
		!strings.Contains(e.ErrorDescription, `Content-Encoding "gzip" is not accepted`) || !r.closed {
		t.Errorf("a gzip upload = %d %s", r.status, r.body)
	}
}

func TestAnUploadRefusedBeforeItsHandlerIsAnsweredWithoutWaitingForItsBody(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	// A file sent in chunks, the last of them a while after the first,
	// with a token that is not valid: the 401 comes at once, telling the
	// client to stop sending, as the upload handler's refusals do. It
	// came once the whole body was in, as the server first read it.
	const pause = 3 * time.Second
	req := uploadRequest("not-a-token", documentParts("020-81140743", "INVOICE", "a.pdf", pdfOf(2048))...)
	body := req.body.([]byte)
	pr, pw := io.Pipe()
	go func() {
		pw.Write(body[:1024])
		time.Sleep(pause)
		pw.Write(body[1024:])
		pw.Close()
	}()
	hr, err := http.NewRequest(http.MethodPost, s.base+"/api/documents", pr)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", req.contentType)
	hr.Header.Set("Authorization", "Bearer not-a-token")
	start := time.Now()
	r := s.send(t, hr, nil)
	if took := time.Since(start); r.status != http.StatusUnauthorized || !r.closed || took >= pause {
		t.Errorf("an upload with a token not valid = %d, Connection: close %t, after %s", r.status, r.closed, took)
	}
}
