package httpapi

import (
	"net/http"
	"path"
	"slices"
	"strings"
)

// router is net/http's ServeMux with the spec's error bodies where
// ServeMux answers plain text: a path no route serves is 404, a method its
// routes do not take is 405 with Allow. A path that is not clean (a
// doubled slash, a "." or ".." segment) is 404 too, where ServeMux would
// redirect it with a bare 301: an odd path gets the error body like any
// other bad request. As with any ServeMux, a GET route answers HEAD too.
type router struct {
	mux                        *http.ServeMux
	patterns                   []string // as registered: "GET /api/quotes/{id}"
	methods                    []string // the methods of patterns, once each
	notFound, methodNotAllowed http.Handler
}

func newRouter(notFound, methodNotAllowed http.Handler) *router {
	rt := &router{mux: http.NewServeMux(), notFound: notFound, methodNotAllowed: methodNotAllowed}
	rt.mux.HandleFunc("/", rt.unrouted)
	return rt
}

// handle serves pattern, "METHOD /path" in ServeMux's syntax, with h,
// which learns the route it took for its metrics (routed).
func (rt *router) handle(pattern string, h http.Handler) {
	method, route, _ := strings.Cut(pattern, " ")
	rt.patterns = append(rt.patterns, pattern)
	if !slices.Contains(rt.methods, method) {
		rt.methods = append(rt.methods, method)
	}
	rt.mux.Handle(pattern, routed(route, h))
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !cleanPath(r.URL.Path) {
		rt.notFound.ServeHTTP(w, r)
		return
	}
	rt.mux.ServeHTTP(w, r)
}

// unrouted answers a request that no route took: 405 with the methods its
// path has routes for, or 404 when it has none.
func (rt *router) unrouted(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, method := range rt.methods {
		other := r.Clone(r.Context())
		other.Method = method
		if _, pattern := rt.mux.Handler(other); pattern != "/" {
			allowed = append(allowed, method)
		}
	}
	if len(allowed) == 0 {
		rt.notFound.ServeHTTP(w, r)
		return
	}
	if slices.Contains(allowed, http.MethodGet) && !slices.Contains(allowed, http.MethodHead) {
		allowed = append(allowed, http.MethodHead)
	}
	slices.Sort(allowed)
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	rt.methodNotAllowed.ServeHTTP(w, r)
}

// cleanPath reports whether p is a path that ServeMux routes as it is,
// without redirecting to a cleaner one.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean == p
}
