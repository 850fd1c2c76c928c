package server

import "net/http"

// handleCountTokens serves POST /v1/messages/count_tokens, Anthropic's
// prompt count (Claude Code asks it before long requests): the body of
// /v1/messages, max_tokens not needed, answered {"input_tokens": N}, the
// tokens of the prompt that request would render (tools included).
func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request) {
	var q messagesRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &q); err != nil {
		writeMessagesError(w, err)
		return
	}
	if q.MaxTokens == nil {
		one := 1 // only the prompt is counted
		q.MaxTokens = &one
	}
	if err := q.check(); err != nil {
		writeMessagesError(w, err)
		return
	}
	sl, err := s.acquire(r, q.Model)
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	defer s.reg.release(sl)
	cq, err := q.chat(toolFormat(sl.m.Template.Source()))
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	prompt, _, _, err := chatPrompt(sl.m, cq)
	if err != nil {
		writeMessagesError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		InputTokens int `json:"input_tokens"`
	}{len(prompt)})
}
