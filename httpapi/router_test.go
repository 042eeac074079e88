package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRouterAnswersEveryPathWithARouteOrTheSpecsErrors(t *testing.T) {
	answer := func(what string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Answer", what+" "+r.PathValue("id"))
		})
	}
	rt := newRouter(answer("not found"), answer("method not allowed"))
	rt.handle("GET /api/quotes", answer("list"))
	rt.handle("POST /api/quotes", answer("create"))
	rt.handle("GET /api/quotes/{id}", answer("get"))
	rt.handle("DELETE /api/webhooks/{id}", answer("delete"))

	tests := []struct {
		name, method, target string
		answer, allow        string
	}{
		{name: "a route", method: "GET", target: "/api/quotes", answer: "list "},
		{name: "a route with a variable", method: "GET", target: "/api/quotes/Q-1", answer: "get Q-1"},
		{name: "an escaped variable", method: "GET", target: "/api/quotes/a%2Fb", answer: "get a/b"},
		{name: "HEAD where GET is served", method: "HEAD", target: "/api/quotes/Q-1", answer: "get Q-1"},
		{name: "another method of the path", method: "POST", target: "/api/quotes", answer: "create "},
		{name: "a method the path has no route for", method: "DELETE", target: "/api/quotes", answer: "method not allowed ", allow: "GET, HEAD, POST"},
		{name: "a method only another route has", method: "GET", target: "/api/webhooks/W-1", answer: "method not allowed ", allow: "DELETE"},
		{name: "no route", method: "GET", target: "/api/nothing", answer: "not found "},
		{name: "a trailing slash", method: "GET", target: "/api/quotes/", answer: "not found "},
		{name: "a doubled slash, not redirected", method: "GET", target: "/api//quotes", answer: "not found "},
		{name: "a dot segment, not redirected", method: "GET", target: "/api/./quotes", answer: "not found "},
		{name: "a dot-dot segment, not redirected", method: "GET", target: "/api/quotes/../quotes", answer: "not found "},
		{name: "an escaped dot-dot segment", method: "GET", target: "/api/quotes/%2e%2e", answer: "not found "},
		{name: "an asterisk", method: "OPTIONS", target: "*", answer: "not found "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			rt.ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
			if got := w.Header().Get("X-Answer"); got != tt.answer || w.Code != http.StatusOK {
				t.Errorf("%s %s answered %d %q, want %q", tt.method, tt.target, w.Code, got, tt.answer)
			}
			if got := w.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}
