package httpapi

import (
	_ "embed"
	"net/http"
)

// The OpenAPI document of everything implemented. Tests check every
// request and response they make against it, so it stays true.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the served OpenAPI document.
func OpenAPIDocument() []byte { return openAPIDocument }

//go:embed errors.md
var errorDocs []byte

func handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPIDocument)
	})
}

// handleErrorDocs serves the page errorUri links to.
func handleErrorDocs() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Write(errorDocs)
	})
}
