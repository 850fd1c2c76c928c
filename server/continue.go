package server

import "strings"

// continue_final_message (vLLM's extra): the conversation is rendered
// without a generation prompt and cut right after the final assistant
// message's text, so the template's end-of-turn (ChatML's "<|im_end|>\n")
// is not there and the model continues that message. This is what vLLM
// does through transformers' apply_chat_template: the rendered text is
// cut after the last occurrence of the final message's content, or of it
// trimmed of spaces (templates such as Llama 3.1's trim contents).

// checkContinue checks continue_final_message against the request: the
// final message must be the assistant's, and an explicit
// add_generation_prompt true contradicts it (vLLM's 400); absent, it is
// taken as false.
func checkContinue(in []chatMessage, addGen *bool) error {
	if addGen != nil && *addGen {
		return badRequest("continue_final_message", "continue_final_message and add_generation_prompt cannot both be true")
	}
	if len(in) == 0 || in[len(in)-1].Role != "assistant" {
		return badRequest("continue_final_message", "continue_final_message needs the final message to be the assistant's (the one to continue)")
	}
	return nil
}

// cutAfterFinal cuts rendered after the final message's content final.
func cutAfterFinal(rendered, final string) (string, error) {
	if i := strings.LastIndex(rendered, final); i >= 0 {
		return rendered[:i+len(final)], nil
	}
	if t := strings.TrimSpace(final); strings.Contains(rendered, t) {
		return rendered[:strings.LastIndex(rendered, t)+len(t)], nil
	}
	return "", badRequest("continue_final_message", "continue_final_message: the chat template does not print the final message's content as given, so there is nothing to continue")
}
