package server

import (
	"log/slog"
	"net/http"
	"time"
)

// recorder captures a response's status and size for the access log. It
// unwraps for http.ResponseController (flushes, write deadlines).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logRequests writes one structured line per request when it ends.
func (s *Server) logRequests(next http.Handler) http.Handler {
	log := s.cfg.Logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		cut := cutByShutdown(r.Context())
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		log.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes), slog.Float64("seconds", time.Since(start).Seconds()),
			slog.String("remote", r.RemoteAddr), slog.Bool("client_gone", r.Context().Err() != nil && !cut),
			slog.Bool("cut_by_shutdown", cut))
	})
}
