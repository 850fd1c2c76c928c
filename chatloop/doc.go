// Package chatloop owns a conversation with one model sequence: the
// messages, turning them into prompt tokens (the chat template, or raw
// text), reusing the KV cache across turns, the generation loop that samples,
// detokenizes and streams an answer, stop conditions, interruption, dropping
// old turns when the context fills up, and the interactive loop with its
// slash commands (/set, /show, /clear, /help, /bye). 'kiln run' is a thin
// wrapper around it; the model is behind the small LM interface so that the
// loop is tested against a scripted fake (package chattest).
//
// A turn re-renders the whole conversation and feeds only the tokens the
// cache does not already hold:
//
//	turn 1  prompt: [ sys | u1 | hdr ]                       fed: all
//	        cache:  [ sys | u1 | hdr | a1 ... ]              (answer tokens fed back as sampled)
//	turn 2  prompt: [ sys | u1 | hdr | a1' end | u2 | hdr ]  a1' = a1 as the template re-renders it
//	        keep  = common prefix of cache and prompt       (stops where a1' differs from a1)
//	        Truncate(keep); feed prompt[keep:]
//
// keep is at most len(prompt)-1, so at least one token is fed and there are
// logits to sample from. When the prompt plus a reserve for the answer does
// not fit the cache, the oldest user+assistant pairs are left out of the
// conversation (the system message always stays); an answer that fills the
// cache stops with Reason ContextFull.
//
// Invariants:
//   - Session.cached mirrors the LM's cache token for token (Truncate and
//     Feed go through the Session).
//   - The text written to the output is exactly Result.Text, and Result.Text
//     is what joins the conversation as the assistant's message: no stop
//     string, no end-of-generation token.
//   - Cancelling the context of a turn ends it cleanly (Reason Interrupted,
//     no error), leaving the session usable.
//   - Bad user input (ErrInput) never ends a chat and never changes state.
package chatloop
