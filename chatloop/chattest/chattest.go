// Package chattest holds test doubles for package chatloop and its callers:
// a tiny ChatML vocabulary and a scripted language model run by a real
// engine, so that chat transcripts can be asserted exactly without model
// weights.
package chattest

import (
	"fmt"
	"slices"
	"strings"

	"kiln/chat"
	"kiln/engine"
	"kiln/model"
	"kiln/runner/scripted"
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

// PromptChunk is the step budget of NewEngine's engine (prompt tokens
// per forward): tests interrupt a long prompt between its chunks.
const PromptChunk = 128

// LM is a scripted language model over a ChatML conversation, run by a
// real engine (NewEngine): its logits always put all the weight on one
// token, chosen by Reply from the conversation so far, which it reads
// back through the engine's block tables (runner/scripted), so a wrong
// prefix-cache hit shows as a wrong answer.
//
// The default reply to a user message X, in the n-th user turn of the
// prompt, is "n: X" followed by <|im_end|>; so a transcript shows both
// what the model was asked and how much of the conversation it still sees.
type LM struct {
	Tok      *tokenizer.Tokenizer
	Capacity int // the chat's context: NewEngine's requests hold Capacity+1 tokens

	// Reply, when set, replaces the default answer: it gets the user turns
	// of the sequence (oldest first) and returns the answer text.
	Reply func(users []string) string

	// Edit, when set, may change the logits of every forward's last row;
	// fed is the number of tokens that forward ran.
	Edit func(fed int, logits []float32)

	// OnFeed, when set, is called after every forward with the number of
	// tokens it ran (a prompt chunk, or one answer token fed back); tests
	// use it to interrupt a generation mid-way.
	OnFeed func(n int)

	Tokens []int32 // the sequence of the last forward, up to its last token
	Fed    []int   // the tokens run by every forward, in order
	Starts []int   // the position of the first of them: where each forward began

	model scripted.Model
}

// NewLM returns a scripted model for a chat context of capacity tokens.
func NewLM(tok *tokenizer.Tokenizer, capacity int) *LM {
	m := &LM{Tok: tok, Capacity: capacity}
	m.model = scripted.Model{VocabSize: tok.Size(), Ctx: capacity + 1, BlockSize: 1, Next: m.next}
	return m
}

// NewEngine runs lm in an engine sized for one chat of lm.Capacity
// tokens: blocks of one token, so that the prefix cache reuses exactly
// the common prefix of two turns (as a chat's own cache would), and
// PromptChunk tokens per step. Close it after use.
func NewEngine(lm *LM) (*engine.Engine, error) {
	return engine.NewBackend(lm, engine.Config{NumBlocks: lm.Capacity + 1, BlockSize: 1, MaxSeqs: 1,
		MaxModelLen: lm.Capacity + 1, MaxBatchedTokens: PromptChunk, Tokenizer: lm.Tok})
}

// Vocab, Context: runner.Backend.
func (m *LM) Vocab() int   { return m.Tok.Size() }
func (m *LM) Context() int { return m.Capacity + 1 }

// Len is the length of Tokens; Cap is Capacity.
func (m *LM) Len() int { return len(m.Tokens) }
func (m *LM) Cap() int { return m.Capacity }

// CopyBlock: runner.Backend.
func (m *LM) CopyBlock(src, dst int) error { return m.model.CopyBlock(src, dst) }

// Forward runs the scripted model (one chat sequence per batch), then
// Edit and OnFeed.
func (m *LM) Forward(b *model.Batch) ([]float32, error) {
	logits, err := m.model.Forward(b)
	if err != nil {
		return nil, err
	}
	n := len(b.Tokens)
	last := b.Positions[n-1]
	h, err := m.model.History(b.BlockTables[len(b.BlockTables)-1], int(last)+1)
	if err != nil {
		return nil, err
	}
	m.Tokens = append(m.Tokens[:0], h...)
	m.Fed = append(m.Fed, n)
	m.Starts = append(m.Starts, int(b.Positions[0]))
	if m.Edit != nil && len(logits) > 0 {
		m.Edit(n, logits[len(logits)-m.Vocab():])
	}
	if m.OnFeed != nil {
		m.OnFeed(n)
	}
	return logits, nil
}

// next writes the scripted row after history: all the weight (20) on the
// next token of the answer to its last user turn, or on <|im_end|> once
// it is complete (or when history does not end inside an assistant turn).
func (m *LM) next(history []int32, row []float32) {
	row[m.nextToken(history)] = 20
}

func (m *LM) nextToken(tokens []int32) int32 {
	end, _ := m.Tok.ID("<|im_end|>")
	header := m.Tok.EncodePrompt("<|im_start|>assistant\n")
	i := lastIndex(tokens, header)
	if i < 0 {
		return end
	}
	users := m.users(tokens[:i])
	var answer string
	if m.Reply != nil {
		answer = m.Reply(users)
	} else if len(users) > 0 {
		answer = fmt.Sprintf("%d: %s", len(users), users[len(users)-1])
	}
	want := m.Tok.Encode(answer, false)
	got := tokens[i+len(header):]
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
