package server

import (
	"context"
	"errors"
	"net/http"
)

// errShutdownCut is what a request still running at the end of
// Shutdown's drain gets: the server cancels it with this cause (the base
// context every request derives from), so that its handler can tell the
// cut from a client that left. A stream then ends with this error as its
// last event and "data: [DONE]", a whole response with a 503; the access
// log says cut_by_shutdown rather than client_gone.
var errShutdownCut = &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "shutting_down", RetryAfter: 5,
	Message: "the server shut down: the request was cut at the end of its drain (kiln serve --shutdown-timeout)"}

// cutByShutdown reports whether ctx ended because Shutdown's drain ran out.
func cutByShutdown(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), errShutdownCut)
}
