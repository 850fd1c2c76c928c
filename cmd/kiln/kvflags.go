package main

import (
	"flag"
	"fmt"
	"strings"

	"kiln/assemble"
	"kiln/internal/memstat"
)

// maxBlockSize bounds --block-size: larger blocks only waste the tail of
// each sequence's last block and make prefix hits coarser.
const maxBlockSize = 1024

// kvPoolFlags are the KV pool's flags: --kv-cache-memory and --block-size.
type kvPoolFlags struct {
	memory    *string
	blockSize *int
	budget    int64 // parsed by check; 0: the default
}

func addKVPoolFlags(fs *flag.FlagSet) *kvPoolFlags {
	return &kvPoolFlags{
		memory: fs.String("kv-cache-memory", "", fmt.Sprintf("KV cache budget, e.g. 2GiB or 512MB (default: %.0f%% of available memory, at most what this run can use)",
			100*assemble.DefaultShare)),
		blockSize: fs.Int("block-size", 16, "token slots per KV block"),
	}
}

// check refuses malformed values (usage errors, exit status 2) before
// anything is loaded.
func (k *kvPoolFlags) check() error {
	if bs := *k.blockSize; bs < 1 || bs > maxBlockSize {
		return usageErrorf("--block-size %d: want 1 up to %d token slots", bs, maxBlockSize)
	}
	if *k.memory == "" {
		return nil
	}
	b, err := memstat.ParseBytes(*k.memory)
	if err != nil {
		return usageErrorf("--kv-cache-memory %q: want a size such as 2GiB, 512MiB or 1.5GB", *k.memory)
	}
	if b <= 0 {
		return usageErrorf("--kv-cache-memory %q: want a positive size", *k.memory)
	}
	k.budget = b
	return nil
}

// kv is the KV pool the flags ask for (assemble.KV): the budget over
// the bytes one block takes, capped at seqs sequences of perSeq tokens
// (what the run can use at most: no point in allocating more). A budget
// that does not hold one such sequence is refused when the engine starts
// (startEngine: a usage error). Call check first.
func (k *kvPoolFlags) kv(perSeq, seqs int) assemble.KV {
	return assemble.KV{Budget: k.budget, BlockSize: *k.blockSize, PerSeq: perSeq, Seqs: seqs}
}

// fmtBytes writes a byte count in binary units.
func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// kvTypeFlag registers --kv-type (llama.cpp's --cache-type-k/v) on fs; the
// returned func reports whether F32 storage was asked for.
func kvTypeFlag(fs *flag.FlagSet) func() (bool, error) {
	v := fs.String("kv-type", "f16", "KV cache element type: f16 (default, as llama.cpp) or f32")
	return func() (bool, error) {
		switch strings.ToLower(*v) {
		case "f16":
			return false, nil
		case "f32":
			return true, nil
		}
		return false, usageErrorf("--kv-type %q: want f16 or f32", *v)
	}
}
