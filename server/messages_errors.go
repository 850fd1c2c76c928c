package server

import (
	"net/http"
	"strconv"
	"strings"
)

// Errors of /v1/messages are answered in Anthropic's envelope, with the
// HTTP status the OpenAI routes give the same error:
//
//	{"type": "error", "error": {"type": "invalid_request_error", "message": "..."}}
//
// The error type follows the status as Anthropic's does (400
// invalid_request_error, 401 authentication_error, 403
// permission_error, 404 not_found_error, 413 request_too_large, 429
// rate_limit_error, 503 overloaded_error, else api_error).

type messagesErrorEnvelope struct {
	Type  string            `json:"type"` // error
	Error messagesErrorBody `json:"error"`
}

type messagesErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// messagesError is err in Anthropic's envelope, and its HTTP status.
func messagesError(err error) (int, messagesErrorEnvelope) {
	ae := asAPIError(err)
	typ := "api_error"
	switch ae.Status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusMethodNotAllowed:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case http.StatusServiceUnavailable:
		typ = "overloaded_error"
	}
	return ae.Status, messagesErrorEnvelope{Type: "error", Error: messagesErrorBody{Type: typ, Message: ae.Message}}
}

// writeMessagesError answers err in Anthropic's envelope.
func writeMessagesError(w http.ResponseWriter, err error) {
	if ae := asAPIError(err); ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	status, env := messagesError(err)
	writeJSON(w, status, env)
}

// anthropicPath reports whether a path is Anthropic's API, whose errors
// (the API key's included) take Anthropic's envelope.
func anthropicPath(path string) bool { return strings.HasPrefix(path, "/v1/messages") }
