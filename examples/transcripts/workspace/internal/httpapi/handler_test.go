package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type memSaver struct{ saved []Invoice }

func (m *memSaver) Save(inv Invoice) error {
	m.saved = append(m.saved, inv)
	return nil
}

func TestCreateInvoice(t *testing.T) {
	rec := httptest.NewRecorder()
	CreateInvoice(&memSaver{})(rec, httptest.NewRequest(http.MethodPost, "/invoices", strings.NewReader(`{"customer":"acme","cents":1200}`)))
	if rec.Code != http.StatusCreated {
		t.Fatalf("status = %d, want %d", rec.Code, http.StatusCreated)
	}
}

func TestCreateInvoiceBadJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	CreateInvoice(&memSaver{})(rec, httptest.NewRequest(http.MethodPost, "/invoices", strings.NewReader(`{"customer":`)))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status = %d, want %d", rec.Code, http.StatusBadRequest)
	}
}
