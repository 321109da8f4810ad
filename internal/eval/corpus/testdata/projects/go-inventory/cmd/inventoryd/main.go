// Command inventoryd serves the inventory over HTTP.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"

	"example.com/inventory/internal/pricing"
	"example.com/inventory/internal/store"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()

	st := store.New()
	_ = st.Add(store.Item{SKU: "BOLT-M6", Name: "Hex bolt M6", Quantity: 500, PriceCts: 12})
	_ = st.Add(store.Item{SKU: "NUT-M6", Name: "Hex nut M6", Quantity: 40, PriceCts: 5})
	rules := pricing.Rules{{MinQty: 100, Percent: 5}, {MinQty: 1000, Percent: 12}}

	http.HandleFunc("/v1/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st.List())
	})
	http.HandleFunc("/v1/quote", func(w http.ResponseWriter, r *http.Request) {
		it, err := st.Get(r.URL.Query().Get("sku"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		total := pricing.LineTotal(it.PriceCts, 250, rules)
		_, _ = w.Write([]byte(pricing.Format(pricing.WithVAT(total, 0.2), "EUR") + "\n"))
	})
	log.Printf("inventoryd listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
