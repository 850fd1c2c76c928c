// Package chatloop owns a conversation with a model: the messages, turning
// them into prompt tokens (the chat template, or raw text), streaming each
// answer, interruption, dropping old turns when the context fills up, and
// the interactive loop with its slash commands (/set, /show, /clear,
// /help, /bye). 'kiln run' is a thin wrapper around it. The model is run
// by an engine (package engine, behind the small Engine interface): each
// answer is one request whose prompt is the whole conversation, so
// sampling, detokenizing and stop strings are the engine's, and tests run
// a real engine over a scripted model (package chattest).
//
// A turn re-renders the whole conversation; the engine's prefix cache
// finds the KV that earlier turns computed:
//
//	turn 1  prompt: [ sys | u1 | hdr ]                       computed: all
//	        KV:     [ sys | u1 | hdr | a1 ... ]              (the answer's tokens, but its last)
//	turn 2  prompt: [ sys | u1 | hdr | a1' end | u2 | hdr ]  a1' = a1 as the template re-renders it
//	        cached = the longest prefix of whole KV blocks shared with turn 1
//	        computed: the rest
//
// The reuse is in whole blocks of the engine (16 tokens in kiln run;
// chattest's blocks are single tokens, so its reuse is exact), and never
// covers the prompt's last token. When the prompt plus a reserve for the
// answer does not fit the context, the oldest user+assistant pairs are left
// out of the conversation (the system message always stays); an answer
// that fills the context stops with Reason ContextFull.
//
// Invariants:
//   - The text written to the output is exactly Result.Text, and Result.Text
//     is what joins the conversation as the assistant's message: no stop
//     string, no end-of-generation token.
//   - Cancelling the context of a turn ends it cleanly (Reason Interrupted,
//     no error), leaving the session usable: the request is aborted, and
//     what the engine generated before the cancellation is all written,
//     nothing after it.
//   - Bad user input (ErrInput) never ends a chat and never changes state.
package chatloop
