package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// CORS, as vLLM serves it (FastAPI's CORSMiddleware behind
// --allowed-origins, --allowed-methods, --allowed-headers and
// --allow-credentials): with no allowed origin (kiln's default) no CORS
// header is ever sent and browsers keep other origins out. Otherwise a
// request from an allowed Origin gets Access-Control-Allow-Origin, and a
// preflight (OPTIONS with Access-Control-Request-Method) is answered here,
// before the API key is checked: browsers never send credentials on one.

// corsAnyMethods is what "*" allows, and what a preflight is told.
var corsAnyMethods = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"}

// corsMaxAge is how long a browser may cache a preflight's answer (600 s,
// Starlette's default).
const corsMaxAge = "600"

// cors wraps next with the configured CORS policy; none configured, next.
func (s *Server) cors(next http.Handler) http.Handler {
	c := s.cfg
	if len(c.AllowedOrigins) == 0 {
		return next
	}
	anyOrigin := slices.Contains(c.AllowedOrigins, "*")
	methods := c.AllowedMethods
	if len(methods) == 0 || slices.Contains(methods, "*") {
		methods = corsAnyMethods
	}
	anyHeader := len(c.AllowedHeaders) == 0 || slices.Contains(c.AllowedHeaders, "*")
	allowedOrigin := func(o string) bool { return anyOrigin || slices.Contains(c.AllowedOrigins, o) }
	// allowOrigin sets the response's origin headers: "*" only when any
	// origin goes and no credentials do (browsers refuse "*" with them).
	allowOrigin := func(h http.Header, origin string) {
		if anyOrigin && !c.AllowCredentials {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
		}
		if c.AllowCredentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		reqMethod := r.Header.Get("Access-Control-Request-Method")
		if r.Method != http.MethodOptions || origin == "" || reqMethod == "" { // not a preflight
			if origin != "" && allowedOrigin(origin) {
				allowOrigin(w.Header(), origin)
			}
			next.ServeHTTP(w, r)
			return
		}
		var refused []string
		if !allowedOrigin(origin) {
			refused = append(refused, "origin "+origin)
		}
		if !slices.Contains(methods, strings.ToUpper(reqMethod)) {
			refused = append(refused, "method "+reqMethod)
		}
		reqHeaders := r.Header.Get("Access-Control-Request-Headers")
		if !anyHeader {
			for _, h := range strings.Split(reqHeaders, ",") {
				if h = strings.TrimSpace(h); h != "" && !slices.ContainsFunc(c.AllowedHeaders, func(a string) bool { return strings.EqualFold(a, h) }) {
					refused = append(refused, "header "+h)
				}
			}
		}
		if len(refused) > 0 {
			writeError(w, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "cors_refused",
				Message: fmt.Sprintf("CORS preflight refused: %s not allowed (--allowed-origins, --allowed-methods, --allowed-headers)", strings.Join(refused, ", "))})
			return
		}
		h := w.Header()
		allowOrigin(h, origin)
		h.Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
		switch {
		case !anyHeader:
			h.Set("Access-Control-Allow-Headers", strings.Join(c.AllowedHeaders, ", "))
		case reqHeaders != "": // "*": whatever was asked
			h.Set("Access-Control-Allow-Headers", reqHeaders)
		}
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
	})
}
