package main

import (
	"flag"
	"fmt"
	"strings"

	"kiln/assemble"
	"kiln/internal/memstat"
	"kiln/kernels"
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

// kvTypeValue is the value of --kv-cache-dtype and its alias --kv-type.
type kvTypeValue struct {
	name string
}

func (v *kvTypeValue) String() string { return v.name }
func (v *kvTypeValue) Set(s string) error {
	v.name = s
	return nil
}

// kvTypeFlag registers --kv-cache-dtype (vLLM's flag name; llama.cpp's
// type names, as its -ctk/-ctv) and its older alias --kv-type on fs; the
// returned func parses the value: an unknown type is a usage error that
// lists the types.
func kvTypeFlag(fs *flag.FlagSet) func() (kernels.KVType, error) {
	v := &kvTypeValue{name: "f16"}
	fs.Var(v, "kv-cache-dtype", "KV cache element type: "+strings.Join(kernels.KVTypeNames(), ", ")+
		" (q8_0 and q4_0 hold about 1.9x and 3.5x the tokens of f16 in the same memory; they need heads a multiple of 32 wide)")
	fs.Var(v, "kv-type", "alias of --kv-cache-dtype")
	return func() (kernels.KVType, error) {
		t, err := kernels.ParseKVType(v.name)
		if err != nil {
			return 0, usageErrorf("--kv-cache-dtype (--kv-type) %q: want one of %s", v.name, strings.Join(kernels.KVTypeNames(), ", "))
		}
		return t, nil
	}
}
