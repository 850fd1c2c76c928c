package chatloop

import (
	"fmt"
	"strings"

	"kiln/chat"
	"kiln/tokenizer"
)

// Prompter turns a whole conversation (system message first, if any) into
// the prompt tokens that make the model answer its last user message.
type Prompter func(msgs []chat.Message) ([]int32, error)

// TemplatePrompter renders msgs with the model's chat template (with the
// assistant's generation prompt) and tokenizes the text as llama.cpp does
// for chat: special-token texts are parsed, BOS is added when the vocabulary
// asks for it, and a BOS the template printed itself is then taken off the
// text so that the prompt does not start with two.
func TemplatePrompter(t *chat.Template, tok *tokenizer.Tokenizer) Prompter {
	v := tok.Vocab()
	opts := chat.Options{AddGenerationPrompt: true, BOS: tokenText(tok, v.BOS), EOS: tokenText(tok, v.EOS)}
	return func(msgs []chat.Message) ([]int32, error) {
		text, err := t.Render(msgs, opts)
		if err != nil {
			return nil, err
		}
		if v.AddBOS && opts.BOS != "" {
			text = strings.TrimPrefix(text, opts.BOS)
		}
		return tok.EncodePrompt(text), nil
	}
}

// RawPrompter feeds the conversation as plain text, the way 'kiln generate'
// feeds a prompt: the contents of all messages concatenated with nothing in
// between, special-token texts not parsed, BOS in front when the vocabulary
// asks for it. A one-message conversation is a plain completion; in a chat,
// each line typed continues the text.
func RawPrompter(tok *tokenizer.Tokenizer) Prompter {
	v := tok.Vocab()
	return func(msgs []chat.Message) ([]int32, error) {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(m.Content)
		}
		ids := tok.Encode(b.String(), false)
		if v.AddBOS && v.BOS >= 0 && (len(ids) == 0 || ids[0] != v.BOS) {
			ids = append([]int32{v.BOS}, ids...)
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("chatloop: the prompt is empty")
		}
		return ids, nil
	}
}

// tokenText is the text of token id, or "" when the vocabulary has none.
func tokenText(tok *tokenizer.Tokenizer, id int32) string {
	if id < 0 || int(id) >= tok.Size() {
		return ""
	}
	return tok.Vocab().Tokens[id]
}
