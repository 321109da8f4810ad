// Package httpapi serves the invoice API.
package httpapi

import (
	"encoding/json"
	"net/http"
)

// Invoice is the body of POST /invoices.
type Invoice struct {
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

// Saver stores an invoice.
type Saver interface {
	Save(Invoice) error
}

// CreateInvoice handles POST /invoices.
func CreateInvoice(s Saver) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var inv Invoice
		if err := json.NewDecoder(r.Body).Decode(&inv); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err := s.Save(inv); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
}
