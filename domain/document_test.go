package domain

import (
	"strings"
	"testing"
)

func TestDecideUploadDocument(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	good := DocumentUploaded{DocumentID: "d1", AWBNumber: "02081140743", DocumentType: " packing_list ", OrganizationID: "f",
		FileName: `C:\scans\list.pdf`, ContentType: "application/pdf", Size: 1234, SHA256: sum}
	with := func(change func(*DocumentUploaded)) DocumentUploaded {
		d := good
		change(&d)
		return d
	}
	tests := []struct {
		name   string
		c      DocumentUploaded
		fields string // field:code of every problem, or "" for success
	}{
		{"good", good, ""},
		{"every known type, any case", with(func(d *DocumentUploaded) { d.DocumentType = "msds" }), ""},
		{"no AWB number", with(func(d *DocumentUploaded) { d.AWBNumber = " " }), "awbNumber:REQUIRED"},
		{"bad check digit", with(func(d *DocumentUploaded) { d.AWBNumber = "020-81140744" }), "awbNumber:INVALID_AWB_NUMBER"},
		{"malformed AWB number", with(func(d *DocumentUploaded) { d.AWBNumber = "LH-1234" }), "awbNumber:INVALID_AWB_NUMBER"},
		{"no type", with(func(d *DocumentUploaded) { d.DocumentType = "" }), "documentType:REQUIRED"},
		{"unknown type", with(func(d *DocumentUploaded) { d.DocumentType = "selfie" }), "documentType:INVALID_VALUE"},
		{"no file", with(func(d *DocumentUploaded) { d.ContentType, d.Size, d.SHA256 = "", 0, "" }), "file:REQUIRED"},
		{"empty file", with(func(d *DocumentUploaded) { d.ContentType, d.Size = "text/plain", 0 }), "file:INVALID_VALUE"},
		{"a program", with(func(d *DocumentUploaded) { d.ContentType = "application/octet-stream" }), "file:INVALID_VALUE"},
		{"long file name", with(func(d *DocumentUploaded) { d.FileName = strings.Repeat("x", 256) }), "fileName:TOO_LONG"},
		{"longest file name, given an extension", with(func(d *DocumentUploaded) { d.FileName = strings.Repeat("x", 255) }), ""},
		{"everything wrong", DocumentUploaded{DocumentID: "d1"}, "awbNumber:REQUIRED documentType:REQUIRED file:REQUIRED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideUploadDocument(DocumentUploaded{}, tt.c)
			var got []string
			if e, ok := err.(*Error); ok {
				for _, f := range e.Fields {
					got = append(got, f.Field+":"+string(f.Code))
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != tt.fields {
				t.Fatalf("problems = %v, want %s", got, tt.fields)
			}
			if tt.fields == "" && len(events) != 1 {
				t.Fatalf("events = %v", events)
			}
		})
	}
	events, _ := DecideUploadDocument(DocumentUploaded{}, good)
	if d := events[0].(DocumentUploaded); d.AWBNumber != "020-81140743" || d.DocumentType != "PACKING_LIST" || d.FileName != "list.pdf" || d.SHA256 != sum {
		t.Errorf("recorded = %+v", d)
	}
	if _, err := DecideUploadDocument(EvolveDocument(DocumentUploaded{}, events[0]), good); ErrorCode(err) != Conflict {
		t.Errorf("an upload under an existing id = %v, want a conflict", err)
	}
}

func TestCleanFileName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"invoice.pdf", "invoice.pdf"},
		{"../../etc/passwd", "passwd"},
		{`C:\Users\ops\scan 1.tiff`, "scan 1.tiff"},
		{"bad\r\nname\x00.txt", "badname.txt"},
		{"invoice\u202Efdp.exe", "invoicefdp.exe"}, // a right-to-left override
		{"\u200Bscan\u2066.pdf\uFEFF", "scan.pdf"}, // zero width space, isolate, byte order mark
		{"\u202E", "document"},
		{"\xff\xfe.txt", ".txt"},         // bytes that are not UTF-8
		{"Z\uFFFDrich.pdf", "Zrich.pdf"}, // what a decoder made of them
		{"\uFFFD\uFFFD", "document"},
		{"Lieferschein für Kunde.pdf", "Lieferschein für Kunde.pdf"},
		{"", "document"},
		{"dir/", "document"},
		{"..", "document"},
	}
	for _, tt := range tests {
		if got := cleanFileName(tt.in); got != tt.want {
			t.Errorf("cleanFileName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDocumentFileName(t *testing.T) {
	tests := []struct{ name, contentType, want string }{
		{"invoice.pdf", "application/pdf", "invoice.pdf"},
		{"SCAN.PDF", "application/pdf", "SCAN.PDF"},
		{"scan", "application/pdf", "scan.pdf"},
		{"", "image/png", "document.png"},
		{"photo.jpeg", "image/jpeg", "photo.jpeg"},
		{"photo.png", "image/jpeg", "photo.png.jpg"},
		{"scan.tif", "image/tiff", "scan.tif"},
		{"xfwb.xml", "text/xml", "xfwb.xml"},
		{"evil.svg", "text/xml", "evil.svg.xml"},
		{"data.json", "application/json", "data.json"},
		{"manifest.csv", "text/plain", "manifest.csv"},
		{"message.edi", "text/plain", "message.edi"},
		{"inv.html", "text/plain", "inv.html.txt"},
		{"inv.txt.html", "text/plain", "inv.txt.html.txt"},
		{"inv.", "text/plain", "inv..txt"},
		{"invoice\u202Efdp.exe", "application/pdf", "invoicefdp.exe.pdf"},
		{`C:\tmp\run.bat`, "text/plain", "run.bat.txt"},
		{"legacy.bin", "application/octet-stream", "legacy.bin"}, // not an accepted type: no extension known
	}
	for _, tt := range tests {
		got := DocumentFileName(tt.name, tt.contentType)
		if got != tt.want {
			t.Errorf("DocumentFileName(%q, %s) = %q, want %q", tt.name, tt.contentType, got, tt.want)
		}
		if again := DocumentFileName(got, tt.contentType); again != got {
			t.Errorf("DocumentFileName(%q, %s) = %q: not stable", got, tt.contentType, again)
		}
	}
}

func TestDocumentVisibleTo(t *testing.T) {
	d := DocumentUploaded{DocumentID: "d1", AWBNumber: "020-00000011", OrganizationID: "f2"}
	shipment := ShipmentOwnership{AWBNumber: "020-00000011", BookedBy: "f1"}
	tests := []struct {
		name string
		p    Principal
		want bool
	}{
		{"the organisation that uploaded it sees it, though the shipment is another's", Principal{OrganizationID: "f2", Role: RoleForwarder}, true},
		{"the forwarder the shipment is of sees it", Principal{OrganizationID: "f1", Role: RoleForwarder}, true},
		{"the airline of the prefix sees it", Principal{OrganizationID: "lh", Role: RoleAirline, AWBPrefix: "020"}, true},
		{"an admin sees it", Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
		{"another forwarder does not", Principal{OrganizationID: "f3", Role: RoleForwarder}, false},
		{"an airline of another prefix does not", Principal{OrganizationID: "ek", Role: RoleAirline, AWBPrefix: "176"}, false},
	}
	for _, tt := range tests {
		if got := d.VisibleTo(tt.p, shipment); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheckDocumentUploaderRole(t *testing.T) {
	tests := []struct {
		name string
		role Role
		want string
	}{
		{"a forwarder uploads", RoleForwarder, ""},
		{"an airline uploads", RoleAirline, ""},
		{"an admin does not", RoleAdmin, "forbidden: documents are uploaded by forwarders and by the airline of the AWB number's prefix"},
	}
	for _, tt := range tests {
		if got := errText(CheckDocumentUploaderRole(Principal{OrganizationID: "o", Role: tt.role})); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCheckDocumentUploader(t *testing.T) {
	shipment := ShipmentOwnership{AWBNumber: "020-00000011", WaybilledBy: "f1"}
	tests := []struct {
		name string
		p    Principal
		want string
	}{
		{"a forwarder uploads for its own shipment", Principal{OrganizationID: "f1", Role: RoleForwarder}, ""},
		{"a forwarder does not upload for another's shipment", Principal{OrganizationID: "f2", Role: RoleForwarder},
			"forbidden: 020-00000011 is not a shipment of yours: file for the AWB numbers you booked, waybilled or hold in stock"},
		{"the airline of the prefix uploads", Principal{OrganizationID: "lh", Role: RoleAirline, AWBPrefix: "020"}, ""},
		{"an airline of another prefix does not", Principal{OrganizationID: "ek", Role: RoleAirline, AWBPrefix: "176"},
			"forbidden: documents of 020-00000011 are uploaded by forwarders and the airline with prefix 020"},
	}
	for _, tt := range tests {
		if got := errText(CheckDocumentUploader(tt.p, shipment)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDocumentStorageRefusesFilesPastTheQuota(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name    string
		storage DocumentStorage
		size    int64
		want    string // in the refusal, or "" for none
	}{
		{"no quota takes anything", DocumentStorage{Stored: 1 << 40}, 1 << 40, ""},
		{"a file that fills the quota exactly", DocumentStorage{Quota: 10 * mib, Stored: 9 * mib}, mib, ""},
		{"one byte more", DocumentStorage{Quota: 10 * mib, Stored: 9 * mib}, mib + 1,
			"take 9.0 MiB (9437184 bytes) of its storage quota of 10.0 MiB (10485760 bytes); the 1.0 MiB (1048576 bytes) left are fewer than this file has"},
		{"a full quota refuses the first byte", DocumentStorage{Quota: 10 * mib, Stored: 10 * mib}, 1, "; nothing is left"},
		{"a quota lowered below what is stored", DocumentStorage{Quota: 5 * mib, Stored: 10 * mib}, 1, "take 10.0 MiB (10485760 bytes) of its storage quota of 5.0 MiB"},
		{"a few bytes left", DocumentStorage{Quota: 1000, Stored: 990}, 11, "quota of 1000 bytes; the 10 bytes left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.storage.CheckFile(tt.size)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (ErrorCode(err) != QuotaExceeded || !strings.Contains(ErrorMessage(err), tt.want)):
				t.Errorf("= %v, want %s saying %q", err, QuotaExceeded, tt.want)
			}
		})
	}
}
