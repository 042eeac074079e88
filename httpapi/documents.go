package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

// uploadPath is where documents are uploaded; its bodies have a limit of
// their own (see bodyLimit).
const uploadPath = "/api/documents"

// isUpload reports whether r uploads a document.
func isUpload(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == uploadPath }

const (
	// uploadAllowance is what an upload may carry beside its file: the
	// text parts, the part headers and the multipart framing. Go's
	// multipart reader would hold a part header of up to 10 MiB in
	// memory; uploadBody stops it here.
	uploadAllowance = 64 << 10
	// maxTextPart bounds the text parts, awbNumber and documentType.
	maxTextPart = 1 << 10
	// maxParts bounds the parts of an upload: three are needed, unknown
	// ones are passed over, and none should come by the thousand.
	maxParts = 50
	// maxUploads bounds the uploads one process takes at once; beyond it,
	// 503. Each holds some 200 KiB (the header allowance, a 128 KiB chunk
	// of its file, buffers) and a connection for as long as its client
	// keeps sending. 32 files streaming into the object store at once are
	// more than a replica's link carries at full speed, so more would only
	// slow each other down; and slow or stalled clients cannot pile up
	// without end.
	maxUploads = 32
	// maxUploadsPerOrganization bounds one organisation's share of them,
	// so that one tenant's slow or stalled uploads cannot take every
	// place and refuse everyone else's.
	maxUploadsPerOrganization = 8
	// stallTimeout is how long an upload may send no byte, or a download
	// take none, before the connection is cut off. The deadline moves
	// forward as bytes move, so a slow but steady transfer goes on.
	stallTimeout = 30 * time.Second
	// uploadReadTimeout is how long an upload's body may take in all,
	// so that a drip of a byte now and then still ends: 20 MiB in 5
	// minutes is 70 KB/s, less than any office link. The server's
	// ReadTimeout suits JSON bodies; a file on a slow link takes longer.
	// It is granted only once the caller is authenticated.
	uploadReadTimeout = 5 * time.Minute
	// sniffLen is how much of a file content sniffing looks at, as
	// http.DetectContentType does.
	sniffLen = 512
)

var (
	// errFileTooLarge stops reading a file past the upload limit.
	errFileTooLarge = errors.New("the file is larger than the upload limit")
	// errTooMuchBesideFile stops reading an upload whose parts other than
	// the file have passed uploadAllowance.
	errTooMuchBesideFile = errors.New("the upload has more than its allowance beside the file")
)

// takeUploadPlace takes one of the replica's places for an upload by
// organisation org, and returns its release; or refuses with 503 when the
// replica, or the organisation's share of it, is full.
func (s *Server) takeUploadPlace(org string) (func(), error) {
	s.uploadsMu.Lock()
	defer s.uploadsMu.Unlock()
	switch {
	case s.uploadsByOrg[org] >= maxUploadsPerOrganization:
		return nil, errorf(codeServiceUnavailable, fmt.Sprintf("your organisation is sending %d uploads to this replica, the most one organisation may at once; retry when one has ended", maxUploadsPerOrganization))
	case s.uploads >= maxUploads:
		return nil, errorf(codeServiceUnavailable, fmt.Sprintf("this replica is taking %d uploads, the most it takes at once; retry shortly", maxUploads))
	}
	s.uploads++
	s.uploadsByOrg[org]++
	return func() {
		s.uploadsMu.Lock()
		defer s.uploadsMu.Unlock()
		s.uploads--
		if s.uploadsByOrg[org]--; s.uploadsByOrg[org] == 0 {
			delete(s.uploadsByOrg, org)
		}
	}, nil
}

// documentStorage is org's room for document files as this replica knows
// it: the quota, and the bytes of the files the documents read model
// counts and of those it does not count yet.
func (s *Server) documentStorage(org string) domain.DocumentStorage {
	s.uploadsMu.Lock()
	defer s.uploadsMu.Unlock()
	return s.documentStorageLocked(org)
}

func (s *Server) documentStorageLocked(org string) domain.DocumentStorage {
	return domain.DocumentStorage{Quota: s.opts.DocumentQuota, Stored: s.documents.StoredBy(org).Bytes + s.uploadBytesByOrg[org]}
}

// holdStorage checks that a stored file of size bytes fits org's quota,
// beside the files of other uploads that have just fitted, and holds its
// room until the returned release, which the caller calls once the upload
// is recorded and counted by the read model, or refused.
func (s *Server) holdStorage(org string, size int64) (func(), error) {
	s.uploadsMu.Lock()
	defer s.uploadsMu.Unlock()
	if err := s.documentStorageLocked(org).CheckFile(size); err != nil {
		return nil, err
	}
	s.uploadBytesByOrg[org] += size
	return func() {
		s.uploadsMu.Lock()
		defer s.uploadsMu.Unlock()
		if s.uploadBytesByOrg[org] -= size; s.uploadBytesByOrg[org] == 0 {
			delete(s.uploadBytesByOrg, org)
		}
	}, nil
}

// errUploadTooLarge is the answer to an upload over the limit.
func (s *Server) errUploadTooLarge() error {
	return errorf(codePayloadTooLarge, fmt.Sprintf("a document may have at most %d bytes (CARGO_MAX_UPLOAD_BYTES)", s.opts.MaxUploadBytes))
}

// handleUploadDocument takes a document as multipart/form-data with the
// parts awbNumber, documentType and file, in any order.
func (s *Server) handleUploadDocument() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.receiveDocument(w, r)
		if he := (*httpError)(nil); errors.As(err, &he) && he.err != nil {
			// A body that could not be read: the client is told so in
			// fixed words, and the cause, such as a network error naming
			// addresses, is logged.
			s.log.WarnContext(r.Context(), "upload body not read", "request_id", requestID(r.Context()), "err", he.err)
		}
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", uploadPath+"/"+res.State.DocumentID)
		writeJSON(w, http.StatusCreated, views.ToDocumentJSON(res.State))
		return nil
	}
}

// receiveDocument checks who uploads, reads the parts, stores the file
// and records the upload. The file streams through a hash and a byte
// count into the object store and is never held in memory whole. An
// upload refused after its file was stored leaves no file behind.
func (s *Server) receiveDocument(w http.ResponseWriter, r *http.Request) (commands.Result[domain.DocumentUploaded], error) {
	var none commands.Result[domain.DocumentUploaded]
	p := principal(r.Context())
	if err := domain.CheckDocumentUploaderRole(p); err != nil {
		return none, err
	}
	if mediaType(r) != "multipart/form-data" {
		// Said with what came: a multipart/form-data whose boundary is
		// empty or whose parameters do not parse is none either.
		return none, errorf(codeUnsupportedMedia, "the body must be multipart/form-data with a boundary and the parts awbNumber, documentType and file; this request has "+sentContentType(r))
	}
	if err := uncompressed(r); err != nil {
		return none, err
	}
	// A full quota, or a body that says its file does not fit, is refused
	// before any of it is read.
	if err := s.documentStorage(p.OrganizationID).CheckFile(max(1, r.ContentLength-uploadAllowance)); err != nil {
		return none, err
	}
	release, err := s.takeUploadPlace(p.OrganizationID)
	if err != nil {
		return none, err
	}
	defer release()
	body := &uploadBody{ReadCloser: r.Body, deadline: movingDeadline{
		set: http.NewResponseController(w).SetReadDeadline, end: time.Now().Add(uploadReadTimeout)}}
	body.deadline.move()
	r.Body = body
	mr, err := r.MultipartReader()
	if err != nil {
		return none, domain.Errorf(domain.InvalidRequest, "the multipart body has no boundary")
	}
	m := meta(r)
	id := commands.DocumentID(m)
	c, stored, err := s.readUpload(r.Context(), mr, body, id, p)
	err = body.failure(err)
	var res commands.Result[domain.DocumentUploaded]
	if err == nil {
		res, err = s.recordUpload(r, m, c)
	}
	// A failure of the event store may have recorded the upload all the
	// same: then its file stays.
	if err != nil && stored && errorCode(err) != string(domain.Internal) {
		if err := s.files.Delete(context.WithoutCancel(r.Context()), id); err != nil {
			s.log.ErrorContext(r.Context(), "the file of a refused upload was not deleted", "request_id", requestID(r.Context()), "document", id, "err", err)
		}
	}
	return res, err
}

// recordUpload records an upload whose file is stored, if the file fits
// the organisation's quota beside those of uploads being recorded at the
// same time. Its room is held until the read model counts it.
func (s *Server) recordUpload(r *http.Request, m commands.Meta, c domain.DocumentUploaded) (commands.Result[domain.DocumentUploaded], error) {
	stockHolder := ""
	if awb, err := domain.ParseAWB(c.AWBNumber); err == nil {
		c.AWBNumber, stockHolder = awb, s.shipmentFacts.Ownership(awb).HeldInStockBy()
	}
	// Without a file, the command refuses the upload.
	if c.ContentType == "" {
		return s.commands.UploadDocument(r.Context(), m, c, stockHolder)
	}
	release, err := s.holdStorage(m.Principal.OrganizationID, c.Size)
	if err != nil {
		return commands.Result[domain.DocumentUploaded]{}, err
	}
	defer release()
	res, err := s.commands.UploadDocument(r.Context(), m, c, stockHolder)
	if err == nil {
		// The answer waits for this anyway (settle); a read model that
		// takes longer leaves the room to the count of the next upload.
		_ = s.waitFor(r, res.Sequence)
	}
	return res, err
}

// readUpload reads the parts of an upload and stores its file under id.
// It returns the text parts with what was learned of the file, and
// whether the file may have gone to the object store (so that a refusal
// deletes it). Text parts that come before the file are checked before
// the file is read; an airline's upload for another prefix is refused as
// soon as the AWB number is read. body is what mr reads: it is told
// when the file is being read.
func (s *Server) readUpload(ctx context.Context, mr *multipart.Reader, body *uploadBody, id string, p domain.Principal) (c domain.DocumentUploaded, stored bool, err error) {
	seen := map[string]bool{} // of the three known parts only
	for n := 1; ; n++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			return c, stored, nil
		}
		if err != nil {
			return c, stored, bodyError(err)
		}
		if n > maxParts {
			return c, stored, domain.Errorf(domain.InvalidRequest, "an upload may have at most %d parts", maxParts)
		}
		// A part whose Content-Disposition does not parse has no name to
		// part.FormName: passed over as a part the service does not know,
		// a file sent so was counted as text beside the file, and the
		// upload refused as having no file, or as carrying more than its
		// allowance beside it.
		if cd := part.Header.Get("Content-Disposition"); cd != "" {
			if _, _, err := mime.ParseMediaType(cd); err != nil {
				return c, stored, domain.Errorf(domain.InvalidRequest,
					"part %d: its Content-Disposition header does not parse: a quote or backslash in a name or file name is escaped with a backslash", n)
			}
		}
		name := part.FormName()
		if name == "awbNumber" || name == "documentType" || name == "file" {
			if seen[name] {
				var pr domain.Problems
				pr.Add(name, domain.CodeDuplicate, "must be sent once")
				return c, stored, pr.Err()
			}
			seen[name] = true
		}
		switch name {
		case "awbNumber":
			c.AWBNumber, err = readTextPart(part, name)
			// A malformed number is left to validation.
			if awb, parseErr := domain.ParseAWB(c.AWBNumber); err == nil && parseErr == nil {
				err = domain.CheckDocumentUploader(p, s.shipmentFacts.Ownership(awb))
			}
		case "documentType":
			c.DocumentType, err = readTextPart(part, name)
		case "file":
			if seen["awbNumber"] && seen["documentType"] {
				var pr domain.Problems
				domain.CheckDocumentParts(&pr, c.AWBNumber, c.DocumentType)
				if err = pr.Err(); err != nil {
					break
				}
			}
			c.FileName, stored = part.FileName(), true
			body.inFile = true
			c.ContentType, c.Size, c.SHA256, err = s.storeFile(ctx, id, part, s.documentStorage(p.OrganizationID))
			body.inFile = false
		default:
			// Parts the service does not know are passed over.
			_, err = io.Copy(io.Discard, part)
			err = bodyError(err)
		}
		if err != nil {
			return c, stored, err
		}
	}
}

// readTextPart reads a short text part.
func readTextPart(part io.Reader, field string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxTextPart+1))
	if err != nil {
		return "", bodyError(err)
	}
	if len(b) > maxTextPart {
		var p domain.Problems
		p.Add(field, domain.CodeTooLong, "must be at most %d bytes", maxTextPart)
		return "", p.Err()
	}
	return string(b), nil
}

// storeFile streams a file into the object store under id. Its type is
// sniffed from its first bytes, and a type that is not accepted is
// refused before anything is stored; the bytes are hashed and counted on
// the way, and reading stops past the upload limit or past what is left
// of storage, the organisation's room under its quota. Put keeps nothing
// of a file it could not read to the end.
func (s *Server) storeFile(ctx context.Context, id string, file io.Reader, storage domain.DocumentStorage) (contentType string, size int64, sum string, err error) {
	head, err := io.ReadAll(io.LimitReader(file, sniffLen))
	if err != nil {
		return "", 0, "", bodyError(err)
	}
	contentType = sniffContentType(head)
	if !slices.Contains(domain.DocumentContentTypes, contentType) {
		return "", 0, "", errorf(codeUnsupportedMedia, fmt.Sprintf("the file is %s; accepted are %s", contentType, strings.Join(domain.DocumentContentTypes, ", ")))
	}
	hash := sha256.New()
	body := &cappedReader{r: io.MultiReader(bytes.NewReader(head), file), max: min(s.opts.MaxUploadBytes, storage.Left())}
	size, err = s.files.Put(ctx, id, io.TeeReader(body, hash))
	switch {
	case errors.Is(err, errFileTooLarge) && body.max < s.opts.MaxUploadBytes:
		return "", 0, "", storage.CheckFile(body.n)
	case errors.Is(err, errFileTooLarge):
		return "", 0, "", s.errUploadTooLarge()
	case body.err != nil:
		return "", 0, "", bodyError(body.err)
	case err != nil && ctx.Err() != nil:
		// The client went away mid-file: its fault, not the store's.
		return "", 0, "", bodyError(ctx.Err())
	case err != nil:
		return "", 0, "", err
	}
	return contentType, size, hex.EncodeToString(hash.Sum(nil)), nil
}

// cappedReader fails once more than max bytes have come through it,
// reading at most one byte past max. It keeps the error of the reader
// beneath, which is the client's body, apart from errors of whoever
// reads from it.
type cappedReader struct {
	r   io.Reader
	n   int64
	max int64
	err error
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, errFileTooLarge
	}
	if rest := c.max - c.n + 1; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	if c.n > c.max {
		return n, errFileTooLarge
	}
	return n, err
}

// uploadBody is an upload's body as the multipart reader reads it. It
// counts the bytes read outside the file (readUpload sets inFile while
// it copies the file; the reader's lookahead of 4 KiB may count either
// way) and fails once they pass uploadAllowance. And it moves the
// connection's read deadline forward as bytes arrive.
type uploadBody struct {
	io.ReadCloser
	cut      bool // the connection ended before the body its length or chunks announced
	inFile   bool
	outside  int64
	deadline movingDeadline
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if b.outside > uploadAllowance {
		return 0, errTooMuchBesideFile
	}
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		b.cut = true
	}
	if !b.inFile {
		b.outside += int64(n)
	}
	// Not on the read that ends the body: the server then reads on in the
	// background, without a deadline, to notice a client going away, and
	// a deadline set now would end that read and cancel the request.
	if n > 0 && err == nil {
		b.deadline.move()
	}
	if b.outside > uploadAllowance {
		return n, errTooMuchBesideFile
	}
	return n, err
}

// failure is the upload's error err, or, when the connection ended before
// the body did, the client's hang-up (499): the multipart reader reports
// such a body as it finds it (a part header cut short, a missing closing
// boundary), as it would a whole body that is malformed.
func (b *uploadBody) failure(err error) error {
	if err != nil && b.cut {
		return clientGone(err)
	}
	return err
}

// movingDeadline moves a connection's read or write deadline to
// stallTimeout from now, but not past end if end is set. It moves it at
// most once a second: each move is a system call, and reads and writes
// come by the thousand.
type movingDeadline struct {
	set  func(time.Time) error
	end  time.Time
	last time.Time
}

func (d *movingDeadline) move() {
	now := time.Now()
	if now.Sub(d.last) < time.Second {
		return
	}
	d.last = now
	t := now.Add(stallTimeout)
	if !d.end.IsZero() && t.After(d.end) {
		t = d.end
	}
	// Not supported only where no connection lies beneath (tests).
	_ = d.set(t)
}

// bodyError is the error of a request body that could not be read: too
// large (413) or broken (400). The client is not shown the cause, which
// may be a network error naming the service's addresses; it stays in the
// error for the log.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooBig):
		return readError(err)
	case errors.Is(err, errTooMuchBesideFile):
		return errorf(codePayloadTooLarge, fmt.Sprintf("the parts of an upload beside its file, with all part headers, may have at most %d KiB", uploadAllowance>>10))
	}
	// The client is told which of three things went wrong, in fixed
	// words: the cause, such as a network error naming addresses, is
	// logged.
	msg := "the multipart body is malformed: check its boundary and part headers (which may not hold control characters)"
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		msg = fmt.Sprintf("the upload stalled: no bytes came for %s, or it took longer than %s", stallTimeout, uploadReadTimeout)
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the multipart body broke off before its closing boundary"
	}
	return &httpError{code: string(domain.InvalidRequest), msg: msg, err: err}
}

// errorCode is the code an error is answered with.
func errorCode(err error) string {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	return string(domain.ErrorCode(err))
}

// sniffContentType names the type of a file by its first bytes:
// http.DetectContentType, which knows no TIFF and calls JSON text, plus
// TIFF by its byte-order mark and JSON by its first character. Behind a
// UTF-8 byte-order mark, which Windows tools and many Cargo-XML gateways
// write before XML and JSON, http.DetectContentType sees text and looks
// no further: the rest is sniffed for XML and JSON, else xfwb.xml would
// be recorded as text/plain and saved as xfwb.xml.txt.
func sniffContentType(head []byte) string {
	if rest, ok := bytes.CutPrefix(head, []byte("\xEF\xBB\xBF")); ok {
		if ct := sniffContentType(rest); ct == "text/xml" || ct == "application/json" {
			return ct
		}
	}
	if bytes.HasPrefix(head, []byte("II*\x00")) || bytes.HasPrefix(head, []byte("MM\x00*")) {
		return "image/tiff"
	}
	ct, _, _ := strings.Cut(http.DetectContentType(head), ";")
	if trimmed := bytes.TrimLeft(head, " \t\r\n"); ct == "text/plain" && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return "application/json"
	}
	return ct
}

// handleGetDocument streams a document's file with its type, size, name
// and digests; HEAD answers the same headers without the file. Others
// than admins, the uploader and the airline of the AWB number's prefix are
// told it does not exist. The SHA-256 is the ETag: a document never
// changes, so a client that has it gets 304. The server has no
// WriteTimeout, as a large file to a slow client takes long: the write
// deadline moves forward as the client takes bytes, so that one that
// stops reading is cut off after stallTimeout.
func (s *Server) handleGetDocument() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		d, ok := s.documents.Get(id)
		if !ok || !d.VisibleTo(principal(r.Context()), s.shipmentFacts.Ownership(d.AWBNumber)) {
			return domain.Errorf(domain.NotFound, "no document %s", id)
		}
		etag := `"` + d.SHA256 + `"`
		w.Header().Set("ETag", etag)
		if etagMatches(ifNoneMatch(r), etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
		file, size, err := s.files.Get(r.Context(), id)
		if errors.Is(err, domain.ErrNoStoredFile) {
			// Recorded, but its file is gone: no fault of the client,
			// and nothing a retry mends. Operators must see it.
			s.log.ErrorContext(r.Context(), "document recorded but its file is not in the object store", "request_id", requestID(r.Context()), "document", id)
			return domain.Errorf(domain.NotFound, "the file of document %s is missing from the store; quote request id %s when reporting it", id, requestID(r.Context()))
		}
		if err != nil {
			return err
		}
		defer file.Close()
		sum, err := hex.DecodeString(d.SHA256)
		if err != nil {
			return fmt.Errorf("document %s: digest %q: %w", id, d.SHA256, err)
		}
		digest := base64.StdEncoding.EncodeToString(sum)
		h := w.Header()
		h.Set("Accept-Ranges", "bytes")
		status, start, length := http.StatusOK, int64(0), size
		// A download broken off on a poor link goes on where it stopped,
		// unless the file is not the one the client has the start of.
		if ifRange := r.Header.Get("If-Range"); ifRange == "" || ifRange == etag {
			var ok bool
			start, length, ok, err = requestedRange(r.Header.Get("Range"), size)
			if err != nil {
				// The error's body is no part of the file: it goes
				// without the file's name and digests, which a client
				// would save it under.
				h.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
				return err
			}
			if ok {
				status = http.StatusPartialContent
				h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, size))
			}
		}
		h.Set("Content-Type", d.ContentType)
		// Names recorded before the file-name rule get it here.
		h.Set("Content-Disposition", contentDisposition(domain.DocumentFileName(d.FileName, d.ContentType)))
		// Should a browser render the file after all, it runs nothing
		// and loads nothing.
		h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
		h.Set("Repr-Digest", "sha-256=:"+digest+":") // RFC 9530: of the whole file, also in a 206
		h.Set("Digest", "SHA-256="+digest)           // RFC 3230, for older clients
		h.Set("Content-Length", strconv.FormatInt(length, 10))
		w.WriteHeader(status)
		if r.Method == http.MethodHead {
			return nil
		}
		out := &downloadWriter{w: w, deadline: movingDeadline{set: http.NewResponseController(w).SetWriteDeadline}}
		_, err = io.CopyN(io.Discard, file, start) // the object store streams; it cannot seek
		if err == nil {
			_, err = io.CopyN(out, file, length)
		}
		if err != nil {
			// The status is out: the client sees the body end short of
			// Content-Length.
			s.log.WarnContext(r.Context(), "document download cut short", "request_id", requestID(r.Context()), "document", id, "err", err)
		}
		return nil
	}
}

// requestedRange reads a Range header of one byte range (RFC 9110
// §14.1.2) against a file of size bytes: from the start (start-end,
// start-) or the end (-suffix). ok is false when there is none to honour
// (no header, another unit, several ranges, a malformed one): then the
// range is the whole file. A range that starts past the end cannot be
// served.
func requestedRange(header string, size int64) (start, length int64, ok bool, err error) {
	whole := func() (int64, int64, bool, error) { return 0, size, false, nil }
	unsatisfiable := func() (int64, int64, bool, error) {
		return 0, 0, false, errorf(codeRangeNotSatisfiable, fmt.Sprintf("the file has %d bytes: no byte of %s is in it", size, header))
	}
	spec, isBytes := strings.CutPrefix(header, "bytes=")
	first, last, dash := strings.Cut(strings.TrimSpace(spec), "-")
	if !isBytes || !dash || strings.Contains(spec, ",") {
		return whole()
	}
	if first == "" {
		n, perr := strconv.ParseInt(last, 10, 64)
		switch {
		case perr != nil || n < 0:
			return whole()
		case n == 0 || size == 0:
			return unsatisfiable()
		}
		n = min(n, size)
		return size - n, n, true, nil
	}
	start, perr := strconv.ParseInt(first, 10, 64)
	if perr != nil || start < 0 {
		return whole()
	}
	end := size - 1
	if last != "" {
		l, perr := strconv.ParseInt(last, 10, 64)
		if perr != nil || l < start {
			return whole()
		}
		end = min(l, size-1)
	}
	if start >= size {
		return unsatisfiable()
	}
	return start, end - start + 1, true, nil
}

// ifNoneMatch is the request's If-None-Match list: its lines joined, as
// RFC 9110 §5.3 makes one list of a field sent on several lines (a client
// or proxy may send each ETag it holds on a line of its own).
func ifNoneMatch(r *http.Request) string {
	return strings.Join(r.Header.Values("If-None-Match"), ", ")
}

// etagMatches tells whether an If-None-Match header names etag, or is *
// (RFC 9110 §13.1.2; weak tags compare by their opaque part).
func etagMatches(ifNoneMatch, etag string) bool {
	for tag := range strings.SplitSeq(ifNoneMatch, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// downloadWriter moves the write deadline forward before each write.
type downloadWriter struct {
	w        io.Writer
	deadline movingDeadline
}

func (d *downloadWriter) Write(p []byte) (int, error) {
	d.deadline.move()
	return d.w.Write(p)
}

// contentDisposition offers a file for download under its name, quoted
// as a parameter must be: filename in ASCII (anything else replaced by
// '_'), and, for a name that is not ASCII, filename* with the name itself
// (RFC 6266).
func contentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '_'
		}
		return r
	}, name)
	v := mime.FormatMediaType("attachment", map[string]string{"filename": ascii})
	if ascii != name {
		v += strings.TrimPrefix(mime.FormatMediaType("attachment", map[string]string{"filename": name}), "attachment")
	}
	return v
}
