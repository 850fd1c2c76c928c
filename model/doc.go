// Package model holds a transformer's configuration read from GGUF
// metadata, its weights (views into the mapped file, never copies) and
// Forward, which runs one ragged batch of several sequences' new tokens over
// a paged KV store (model.KVStore; package kvcache decides which blocks a
// sequence uses).
//
// Supported architectures: llama (Llama 2/3/3.1/3.2, TinyLlama, SmolLM,
// Mistral), qwen2 (QKV biases) and qwen3 (per-head Q/K RMSNorm), and with a
// mixture-of-experts FFN (moe.go) qwen3moe, qwen2moe (plus a gated shared
// expert, shexp.go), olmoe (Q/K RMSNorm over the whole projection) and
// llama with expert_count (Mixtral). MHA, GQA and MQA all reduce to KVHeads dividing Heads.
//
// A batch concatenates every sequence's new tokens; linear layers see it as
// one [numTokens][dim] matrix so each weight is read once per step, while
// attention runs per sequence over that sequence's pages:
//
//	Tokens     [ a0 a1 a2 | b0 | c0 c1 ]   numTokens = 6
//	SeqStarts  [ 0,         3,   4,    6 ]  numSeqs+1
//	Positions  [ 7  8  9  | 41 | 0  1  ]   position of each token in its sequence
//	BlockTables[s] = physical KV blocks of sequence s, in order; position p of
//	sequence s lives in block BlockTables[s][p/BlockSize], slot p%BlockSize.
//
// Invariants: results for a sequence do not depend on what else is in the
// batch (every kernel is row-wise or per-sequence); Forward allocates nothing
// once its scratch has grown to the largest batch seen.
package model
