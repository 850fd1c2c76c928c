package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// apiError is an error answered with OpenAI's envelope:
//
//	{"error": {"message": "...", "type": "...", "param": "...", "code": "..."}}
//
// Status is the HTTP status; RetryAfter (seconds, 0: none) sets the
// Retry-After header of a 429 or 503.
type apiError struct {
	Status     int
	Message    string
	Type       string // invalid_request_error, authentication_error, ...
	Param      string // the request field at fault, if one is
	Code       string // a machine-readable reason, if any
	RetryAfter int
}

func (e *apiError) Error() string { return e.Message }

// errorEnvelope is the wire form of an apiError.
type errorEnvelope struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) envelope() errorEnvelope {
	b := errorBody{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		b.Param = &e.Param
	}
	if e.Code != "" {
		b.Code = &e.Code
	}
	return errorEnvelope{Error: b}
}

// badRequest is a 400 naming the field at fault.
func badRequest(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, args...)}
}

var (
	errUnauthorized = &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key",
		Message: "missing or incorrect API key: send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'"}
	errQueueFull = &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "queue_full", RetryAfter: 1,
		Message: "the server's request queue is full; retry later"}
	errDraining = &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "shutting_down", RetryAfter: 5,
		Message: "the server is shutting down"}
)

func notFound(model string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist (GET /v1/models lists the models this server serves)", model)}
}

func internal(err error) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
}

// asAPIError turns any error into an apiError: those that already are
// keep their status; anything else is the server's fault (500).
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return internal(err)
}

// writeError answers err in OpenAI's envelope.
func writeError(w http.ResponseWriter, err error) {
	ae := asAPIError(err)
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	writeJSON(w, ae.Status, ae.envelope())
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only our own types are written: a bug
		status, body = http.StatusInternalServerError, []byte(`{"error":{"message":"response encoding failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
