// Package chattest holds test doubles for package chatloop and its callers:
// a tiny ChatML vocabulary and a scripted language model, so that chat
// transcripts can be asserted exactly without model weights.
package chattest

import (
	"fmt"
	"slices"
	"strings"

	"kiln/chat"
	"kiln/tokenizer"
)

// Vocab returns a small SentencePiece vocabulary that spells every text one
// character per token, with ChatML's special tokens and the ChatML template:
//
//	0 <unk>   1 <s> (BOS)   2 </s> (EOS)   3..258 <0x00>..<0xFF> (byte fallback)
//	259 <|im_start|>   260 <|im_end|> (EOT, ends generation)
//	261 "▁"   262.. the printable ASCII characters '!'..'~'
//
// No merges exist (no piece is longer than one character), so the encoding of
// a text is predictable: one token per ASCII character, byte tokens for the
// rest. The dummy-prefix space and BOS are off, as in Qwen's vocabularies.
// Each call returns a fresh Vocab the caller may modify.
func Vocab() *tokenizer.Vocab {
	v := tokenizer.NewVocab(tokenizer.ModelSPM)
	v.Name = "chattest"
	add := func(text string, typ tokenizer.TokenType, score float32) {
		v.Tokens = append(v.Tokens, text)
		v.Types = append(v.Types, typ)
		v.Scores = append(v.Scores, score)
	}
	add("<unk>", tokenizer.TypeUnknown, 0)
	add("<s>", tokenizer.TypeControl, 0)
	add("</s>", tokenizer.TypeControl, 0)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), tokenizer.TypeByte, 0)
	}
	add("<|im_start|>", tokenizer.TypeControl, 0)
	add("<|im_end|>", tokenizer.TypeControl, 0)
	add("▁", tokenizer.TypeNormal, -1)
	for c := byte('!'); c <= '~'; c++ {
		add(string(c), tokenizer.TypeNormal, -float32(len(v.Tokens)))
	}
	v.UNK, v.BOS, v.EOS = 0, 1, 2
	v.EOT = 260
	v.AddBOS = false
	v.AddSpacePrefix = false
	v.ChatTemplate = chat.ChatML
	return v
}

// Tokenizer returns a tokenizer over v, panicking on error (test setup).
func Tokenizer(v *tokenizer.Vocab) *tokenizer.Tokenizer {
	t, err := tokenizer.New(v)
	if err != nil {
		panic("chattest: " + err.Error())
	}
	return t
}

// LM is a scripted language model over a ChatML conversation: it keeps the
// tokens it was fed (its "KV cache") and its logits always put all the
// weight on one token, chosen by Reply from the conversation so far. It
// implements chatloop.LM.
//
// The default reply to a user message X, in the n-th user turn still in the
// cache, is "n: X" followed by <|im_end|>; so a transcript shows both what
// the model was asked and how much of the conversation it still sees.
type LM struct {
	Tok      *tokenizer.Tokenizer
	Capacity int // most tokens the cache holds

	// Reply, when set, replaces the default answer: it gets the user turns
	// still in the cache (oldest first) and returns the answer text.
	Reply func(users []string) string

	// OnFeed, when set, is called after every Feed with the number of
	// tokens fed; tests use it to interrupt a generation mid-way.
	OnFeed func(n int)

	Tokens []int32 // the cache: every token fed and not truncated
	Fed    []int   // the length of every Feed call, in order
	Cut    []int   // the argument of every Truncate call, in order
}

// NewLM returns a scripted model with room for capacity tokens.
func NewLM(tok *tokenizer.Tokenizer, capacity int) *LM {
	return &LM{Tok: tok, Capacity: capacity}
}

// Vocab is the size of a logit row.
func (m *LM) Vocab() int { return m.Tok.Size() }

// Len is the number of tokens in the cache.
func (m *LM) Len() int { return len(m.Tokens) }

// Cap is the most tokens the cache holds.
func (m *LM) Cap() int { return m.Capacity }

// Truncate keeps the first n tokens.
func (m *LM) Truncate(n int) {
	m.Cut = append(m.Cut, n)
	m.Tokens = m.Tokens[:n]
}

// Feed appends tokens and returns the logits of the next token: 0 for all
// ids but the scripted one, which gets 20.
func (m *LM) Feed(tokens []int32) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("chattest: Feed of no tokens")
	}
	if len(m.Tokens)+len(tokens) > m.Capacity {
		return nil, fmt.Errorf("chattest: %d tokens overflow the cache of %d", len(m.Tokens)+len(tokens), m.Capacity)
	}
	m.Tokens = append(m.Tokens, tokens...)
	m.Fed = append(m.Fed, len(tokens))
	logits := make([]float32, m.Vocab())
	logits[m.next()] = 20
	if m.OnFeed != nil {
		m.OnFeed(len(tokens))
	}
	return logits, nil
}

// next is the scripted token after m.Tokens: the next token of the answer
// to the last user turn, or <|im_end|> once it is complete (or when the
// cache does not end inside an assistant turn).
func (m *LM) next() int32 {
	end, _ := m.Tok.ID("<|im_end|>")
	header := m.Tok.EncodePrompt("<|im_start|>assistant\n")
	i := lastIndex(m.Tokens, header)
	if i < 0 {
		return end
	}
	users := m.users(m.Tokens[:i])
	var answer string
	if m.Reply != nil {
		answer = m.Reply(users)
	} else if len(users) > 0 {
		answer = fmt.Sprintf("%d: %s", len(users), users[len(users)-1])
	}
	want := m.Tok.Encode(answer, false)
	got := m.Tokens[i+len(header):]
	if len(got) >= len(want) || !slices.Equal(got, want[:len(got)]) {
		return end
	}
	return want[len(got)]
}

// users returns the contents of the user turns in tokens, oldest first.
func (m *LM) users(tokens []int32) []string {
	text := m.Tok.Decode(tokens)
	var out []string
	for _, part := range strings.Split(text, "<|im_start|>user\n")[1:] {
		content, _, _ := strings.Cut(part, "<|im_end|>")
		out = append(out, content)
	}
	return out
}

// lastIndex returns the start of the last occurrence of sub in s, or -1.
func lastIndex(s, sub []int32) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if slices.Equal(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
