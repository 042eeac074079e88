package projections

import (
	"fmt"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestDocuments(t *testing.T) {
	m := NewDocuments()
	for _, d := range []domain.DocumentUploaded{
		{DocumentID: "d1", AWBNumber: "020-81140743", DocumentType: "INVOICE", OrganizationID: "f", Size: 1000},
		{DocumentID: "d2", AWBNumber: "176-12345675", DocumentType: "MSDS", OrganizationID: "ek", Size: 20},
		{DocumentID: "d3", AWBNumber: "020-81140743", DocumentType: "COO", OrganizationID: "f", Size: 300},
	} {
		m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "document", ID: d.DocumentID}}, d)
	}
	m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "waybill", ID: "020-81140743"}}, domain.MAWBCreated{AWBNumber: "020-81140743"})
	before := m.ByAWB("020-81140743")
	m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: "document", ID: "d4"}},
		domain.DocumentUploaded{DocumentID: "d4", AWBNumber: "020-81140743", DocumentType: "OTHER"})
	ids := func(ds []domain.DocumentUploaded) string {
		var out []string
		for _, d := range ds {
			out = append(out, d.DocumentID)
		}
		return fmt.Sprint(out)
	}
	tests := []struct {
		awb, want string
	}{
		{"020-81140743", "[d1 d3 d4]"},
		{"176-12345675", "[d2]"},
		{"020-00000011", "[]"},
	}
	for _, tt := range tests {
		if got := ids(m.ByAWB(tt.awb)); got != tt.want {
			t.Errorf("ByAWB(%s) = %s, want %s", tt.awb, got, tt.want)
		}
	}
	if got := ids(before); got != "[d1 d3]" {
		t.Errorf("a list handed out earlier changed to %s", got)
	}
	if d, ok := m.Get("d2"); !ok || d.DocumentType != "MSDS" {
		t.Errorf("Get(d2) = %+v, %v", d, ok)
	}
	if f, ek, none := m.StoredBy("f"), m.StoredBy("ek"), m.StoredBy("lh"); f != (DocumentsStored{2, 1300}) || ek != (DocumentsStored{1, 20}) || none != (DocumentsStored{}) {
		t.Errorf("stored by f, ek, lh = %+v, %+v, %+v", f, ek, none)
	}
	if _, ok := m.Get("nope"); ok {
		t.Error("Get of an unknown id found something")
	}
}
