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
		{"everything wrong", DocumentUploaded{DocumentID: "d1"}, "awbNumber:REQUIRED documentType:REQUIRED file:REQUIRED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideUploadDocument(DocumentUploaded{}, tt.c)
			var got []string
			if e, ok := err.(*Error); ok {
				for _, f := range e.Fields {
					got = append(got, f.Field+":"+f.Code)
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
