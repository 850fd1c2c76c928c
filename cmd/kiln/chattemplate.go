package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"kiln/chat"
)

// --chat-template (vLLM's and llama.cpp's flag) replaces a model's chat
// template, or gives one to a model that has none: a file holding a Jinja
// template, or a built-in name. Without it a model without a template is
// served with ChatML (kiln serve, as llama-server does; vLLM refuses chat
// requests) and run on raw text (kiln run, as llama-cli does for a base
// model); each says so once, naming the flag.

// builtinTemplates are the names --chat-template knows besides files.
var builtinTemplates = map[string]string{"chatml": chat.ChatML}

// addChatTemplateFlag registers --chat-template on fs.
func addChatTemplateFlag(fs *flag.FlagSet) *string {
	names := slices.Sorted(maps.Keys(builtinTemplates))
	return fs.String("chat-template", "", "chat template for every model: a Jinja template FILE, or a built-in NAME ("+strings.Join(names, ", ")+"); default: the model's own")
}

// chatTemplateSource reads --chat-template's value: a readable file's text,
// else a built-in name's template; "" is no override. Anything else is a
// usage error, and so is a template that does not compile.
func chatTemplateSource(arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	var src string
	b, err := os.ReadFile(arg)
	switch {
	case err == nil:
		src = string(b)
	case builtinTemplates[arg] != "":
		src = builtinTemplates[arg]
	case errors.Is(err, fs.ErrNotExist):
		return "", usageErrorf("--chat-template %q: neither a file nor a built-in template (chatml)", arg)
	default:
		return "", usageErrorf("--chat-template %q: %v", arg, err)
	}
	if strings.TrimSpace(src) == "" {
		return "", usageErrorf("--chat-template %q is empty", arg)
	}
	if _, err := chat.Compile(src); err != nil {
		return "", usageErrorf("--chat-template %q: %v", arg, err)
	}
	return src, nil
}

// noTemplateNote is the one line a command prints when a model has no chat
// template and --chat-template gave none: what it does instead.
func noTemplateNote(does string) string {
	return fmt.Sprintf("the model has no chat template: %s (--chat-template FILE|chatml sets one)", does)
}
