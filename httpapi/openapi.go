package httpapi

import (
	"bytes"
	_ "embed"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
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

// errorDocsHTML is errors.md as a web page. Every errorUri ends in an
// anchor (#not_found), which a browser shown Markdown as text cannot
// follow; a page of HTML takes it to the entry.
var errorDocsHTML = func() []byte {
	var page bytes.Buffer
	page.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Cargostream errors</title>\n" +
		"<style>body{font-family:sans-serif;max-width:72em;margin:auto;padding:0 1em}table{border-collapse:collapse}" +
		"td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top}tr:has(a:target){background:#ffd}</style></head><body>\n")
	// Unsafe: errors.md is ours, and its anchors are raw <a id> tags.
	md := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := md.Convert(errorDocs, &page); err != nil {
		panic("httpapi: errors.md does not convert to HTML: " + err.Error()) // a bytes.Buffer takes every write
	}
	page.WriteString("</body></html>\n")
	return page.Bytes()
}()

func handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeDocument(w, "application/json", openAPIDocument)
	})
}

// writeDocument answers with one of the documents built in, saying its
// length: over 2 kB, it would go in chunks, and its HEAD say no length
// (see writeEncoded).
func writeDocument(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// handleErrorDocs serves the page errorUri links to: as HTML to a client
// that asks for it (a browser following the link), as Markdown to others
// (curl, a client reading it as text).
func handleErrorDocs() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Accept")
		if acceptsHTML(r.Header.Values("Accept")) {
			writeDocument(w, "text/html; charset=utf-8", errorDocsHTML)
			return
		}
		writeDocument(w, "text/markdown; charset=utf-8", errorDocs)
	})
}

// acceptsHTML tells whether Accept headers name text/html, other than at
// q=0. A wildcard alone does not count: curl sends */*, and its users
// read the Markdown.
func acceptsHTML(accept []string) bool {
	for _, header := range accept {
		for _, item := range strings.Split(header, ",") {
			media, params, err := mime.ParseMediaType(item)
			if err != nil || media != "text/html" {
				continue
			}
			if q := params["q"]; q != "" && strings.Trim(q, "0.") == "" {
				continue // q=0, q=0.0: not acceptable
			}
			return true
		}
	}
	return false
}
