// Command shorturl serves short links.
package main

import (
	"log"
	"net/http"
	"os"
	"strings"

	"example.com/shorturl/store"
	"github.com/teris-io/shortid"
)

func main() {
	links, err := store.Open(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("POST /links", func(w http.ResponseWriter, r *http.Request) {
		code, err := shortid.Generate()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err := links.Put(r.Context(), code, r.FormValue("url")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(code + "\n"))
	})
	http.HandleFunc("GET /{code}", func(w http.ResponseWriter, r *http.Request) {
		url, err := links.Get(r.Context(), strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, url, http.StatusFound)
	})
	log.Fatal(http.ListenAndServe(":8080", nil))
}
