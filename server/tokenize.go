package server

import (
	"maps"
	"net/http"
)

// handleTokenize serves POST /tokenize (vLLM's shape): a prompt, or chat
// messages rendered with the model's template, to the token ids kiln runs.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var q tokenizeRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &q); err != nil {
		writeError(w, err)
		return
	}
	if (q.Prompt == nil) == (q.Messages == nil) {
		writeError(w, badRequest("prompt", "give either prompt or messages"))
		return
	}
	tools, _, err := parseTools(q.Tools, nil, maxToolCalls)
	if err != nil {
		writeError(w, err)
		return
	}
	if tools != nil {
		q.ChatTemplateKwargs = maps.Clone(q.ChatTemplateKwargs)
		if q.ChatTemplateKwargs == nil {
			q.ChatTemplateKwargs = map[string]any{}
		}
		q.ChatTemplateKwargs["tools"] = tools.tools
	}
	sl, err := s.acquire(r, q.Model)
	if err != nil {
		writeError(w, err)
		return
	}
	defer s.reg.release(sl)
	m := sl.m
	var ids []int32
	if q.Prompt != nil {
		if q.AddSpecialTokens == nil || *q.AddSpecialTokens {
			ids = m.Tokenizer.EncodePrompt(*q.Prompt)
		} else {
			ids = m.Tokenizer.Encode(*q.Prompt, true)
		}
	} else if ids, err = renderChat(m, q.Messages, q.AddGenerationPrompt, q.ChatTemplateKwargs, q.ContinueFinalMessage); err != nil {
		writeError(w, err)
		return
	}
	resp := tokenizeResponse{Count: len(ids), MaxModelLen: m.MaxModelLen, Tokens: ids}
	if resp.Tokens == nil {
		resp.Tokens = []int32{}
	}
	if q.ReturnTokenStrs {
		resp.TokenStrs = make([]string, len(ids))
		for i, id := range ids {
			resp.TokenStrs[i] = m.Tokenizer.Piece(id)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// handleDetokenize serves POST /detokenize: token ids to text.
func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	var q detokenizeRequest
	if err := decodeBody(w, r, s.cfg.MaxBodyBytes, &q); err != nil {
		writeError(w, err)
		return
	}
	sl, err := s.acquire(r, q.Model)
	if err != nil {
		writeError(w, err)
		return
	}
	defer s.reg.release(sl)
	tok := sl.m.Tokenizer
	for i, id := range q.Tokens {
		if id < 0 || int(id) >= tok.Size() {
			writeError(w, badRequest("tokens", "tokens[%d] = %d is not a token id in [0, %d)", i, id, tok.Size()))
			return
		}
	}
	writeJSON(w, http.StatusOK, detokenizeResponse{Prompt: tok.Decode(q.Tokens)})
}

// handleModels serves GET /v1/models: the operator's models, then the hub
// cache's, with the context length of those loaded.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	loaded := map[string]*slot{}
	for _, sl := range s.reg.loaded() {
		loaded[sl.path] = sl
	}
	list := modelList{Object: "list", Data: []modelCard{}}
	card := func(id, path string) modelCard {
		c := modelCard{ID: id, Object: "model", Created: s.cfg.Now().Unix(), OwnedBy: "kiln", Root: id}
		if sl := loaded[path]; sl != nil {
			c.Loaded, c.MaxModelLen, c.Created = true, sl.m.MaxModelLen, sl.created.Unix()
		}
		return c
	}
	listed := map[string]bool{}
	for _, src := range s.cfg.Models { // one card per model, under its first name
		if !listed[src.Path] {
			listed[src.Path] = true
			list.Data = append(list.Data, card(src.Name, src.Path))
		}
	}
	if s.cfg.HubList != nil {
		ms, err := s.cfg.HubList()
		if err != nil {
			writeError(w, internal(err))
			return
		}
		for _, m := range ms {
			list.Data = append(list.Data, card(m.Ref, m.Path))
		}
	}
	writeJSON(w, http.StatusOK, list)
}
