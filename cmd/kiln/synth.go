package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kiln/convert"
	"kiln/synth"
)

func init() {
	register("synth", "make a random-weight GGUF (or Hugging Face folder) of a real architecture", runSynth)
}

func runSynth(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(stdout)
	shape := fs.String("shape", "", "named real-model shape: "+strings.Join(synth.ShapeNames(), ", "))
	typ := fs.String("type", "F32", "tensor type (pure: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K) or a llama-quantize mix (Q4_K_M Q4_K_S Q5_K_M ...)")
	seed := fs.Uint64("seed", 1, "random seed: same seed, same bytes")
	vocab := fs.String("vocab", "", "vocabulary: a .gguf (its tokenizer.* keys), a SentencePiece or tiktoken .model, or vocab.json (merges.txt beside it, or vocab.json,merges.txt); default: a synthetic SentencePiece vocab of --vocab-size tokens")
	var sp synth.Spec
	fs.StringVar(&sp.Arch, "arch", "", "architecture: "+strings.Join(synth.Architectures, ", "))
	fs.StringVar(&sp.Name, "name", "", "general.name (default: the shape's name)")
	fs.IntVar(&sp.Dim, "dim", 0, "embedding length")
	fs.IntVar(&sp.Layers, "layers", 0, "number of blocks")
	fs.IntVar(&sp.Heads, "heads", 0, "attention heads")
	fs.IntVar(&sp.KVHeads, "kv-heads", 0, "KV heads (default: heads)")
	fs.IntVar(&sp.HeadDim, "head-dim", 0, "width of one head (default: dim/heads)")
	fs.IntVar(&sp.FFN, "ffn", 0, "feed-forward length")
	fs.IntVar(&sp.Experts, "experts", 0, "mixture of experts (qwen3moe; llama as Mixtral): experts per block")
	fs.IntVar(&sp.ExpertsUsed, "experts-used", 0, "experts each token is routed to (1..experts)")
	fs.IntVar(&sp.ExpertFFN, "expert-ffn", 0, "one expert's feed-forward length (qwen3moe, qwen2moe; default: ffn)")
	fs.IntVar(&sp.SharedFFN, "shared-ffn", 0, "the shared expert's feed-forward length (qwen2moe; default: ffn)")
	fs.IntVar(&sp.VocabSize, "vocab-size", 0, "tokens (default: the vocabulary's size; larger pads it with [PAD] tokens)")
	fs.IntVar(&sp.Ctx, "ctx", 0, "context length (default 2048)")
	fs.Float64Var(&sp.RopeTheta, "rope-theta", 0, "RoPE base (default 10000)")
	fs.Float64Var(&sp.NormEps, "norm-eps", 0, "RMSNorm epsilon (default 1e-5)")
	fs.BoolVar(&sp.Tied, "tied", false, "tie the output projection to token_embd (no output.weight)")
	fs.Float64Var(&sp.ResidualScale, "residual-scale", 0, "scale the spread of attn_output and ffn_down (default 1): below 1 the embedding-to-head path dominates, so a same-seed model with fewer --layers drafts well (a benchmark device for --spec draft)")
	fs.IntVar(&sp.PoolingType, "pooling-type", 0, "write {arch}.pooling_type, llama.cpp's enum (1 mean, 2 cls, 3 last) for embeddings (default: no key)")
	specFile := fs.String("spec", "", "read the spec from a JSON file (the \"spec\" of a --json record, or of testdata/oracle/*.json's \"synth\"); flags override it")
	asJSON := fs.Bool("json", false, "print a JSON record of what was written (resolved spec, type, seed, vocab, sha256) instead of a summary line")
	format := fs.String("format", "gguf", "output: gguf (OUT is a file) or hf (OUT is a new Hugging Face folder: config.json, model.safetensors, tokenizer.json; --type F32, F16 or BF16)")
	llama3 := fs.String("llama3-rope", "", "Llama 3 rope scaling FACTOR,LOW,HIGH,ORIGCTX (e.g. 32,1,4,8192): writes rope_freqs.weight")
	ropeScaling := fs.String("rope-scaling", "", "rope scaling metadata yarn:FACTOR:ORIGCTX (as Qwen2.5's rope_scaling, e.g. yarn:4:32768) or linear:FACTOR")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln synth OUT.gguf (--shape NAME | --arch A --dim N --layers N --heads N --ffn N ...) [--type TYPE] [--seed N] [--vocab SOURCE]\n"+
			"       kiln synth --format hf OUTDIR ... (the same model as a Hugging Face folder)\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want one OUT.gguf argument, got %d", len(pos))
	}
	if *format != "gguf" && *format != "hf" {
		return usageErrorf("--format %q: want gguf or hf", *format)
	}
	scheme, err := convert.ParseScheme(*typ)
	if err != nil {
		return usageErrorf("--type: %v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	spec := sp
	if *specFile != "" && *shape != "" {
		return usageErrorf("--spec and --shape both name a base spec: use one")
	}
	if *specFile != "" {
		data, err := os.ReadFile(*specFile)
		if err != nil {
			return err
		}
		var base synth.Spec
		if err := json.Unmarshal(data, &base); err != nil {
			return usageErrorf("--spec %s: %v", *specFile, err)
		}
		spec = overrideSpec(base, sp, set)
	}
	if *shape != "" {
		base, ok := synth.Shape(*shape)
		if !ok {
			return usageErrorf("unknown --shape %q (want one of %s)", *shape, strings.Join(synth.ShapeNames(), ", "))
		}
		spec = overrideSpec(base, sp, set)
	}
	if *llama3 != "" {
		r, err := parseLlama3Rope(*llama3)
		if err != nil {
			return usageErrorf("--llama3-rope: %v", err)
		}
		spec.RopeScaling = r
	}
	if *ropeScaling != "" {
		r, err := parseScaledRope(*ropeScaling)
		if err != nil {
			return usageErrorf("--rope-scaling: %v", err)
		}
		spec.ScaledRope = r
	}
	var v *synth.Vocab
	if *vocab != "" {
		if err := checkOutput(pos[0], strings.Split(*vocab, ","), nil); err != nil { // vocab.json,merges.txt
			return err
		}
		if v, err = synth.LoadVocab(*vocab); err != nil {
			return err
		}
		if !set["vocab-size"] {
			spec.VocabSize = 0 // the vocabulary's own size
		}
	}
	if err := spec.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	m, err := synth.Plan(spec, v, scheme, *seed)
	if err != nil {
		return err
	}
	write := m.WriteFile
	if *format == "hf" {
		write = m.WriteHF // safetensors shards: no progress feed
	}
	feed, done := writeProgress(stderr, pos[0])
	m.Progress = feed
	if err := write(pos[0]); err != nil {
		return err
	}
	done()
	size, digest, err := outputDigest(pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		rec := synthRecord{File: pos[0], Format: *format, Spec: m.Spec, Type: *typ, Seed: m.Seed, Vocab: m.Vocab.Source, Bytes: size, SHA256: digest}
		out, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", out)
		return err
	}
	s := m.Spec
	experts := ""
	if s.Experts > 0 {
		experts = fmt.Sprintf(" (%d experts, %d used, expert ffn %d)", s.Experts, s.ExpertsUsed, s.ExpertFFN)
	}
	if s.SharedFFN > 0 {
		experts = strings.TrimSuffix(experts, ")") + fmt.Sprintf(", shared ffn %d)", s.SharedFFN)
	}
	fmt.Fprintf(stdout, "wrote %s: %s %q, dim %d, %d layers, %d heads (%d kv, head dim %d), ffn %d%s, vocab %d (%s), tied %v, %s, seed %d, %d tensors, %d bytes\n",
		pos[0], s.Arch, s.Name, s.Dim, s.Layers, s.Heads, s.KVHeads, s.HeadDim, s.FFN, experts, s.VocabSize, m.Vocab.Source,
		s.Tied, scheme, m.Seed, len(m.Tensors), size)
	return nil
}

// synthRecord is the --json output of kiln synth: enough to make the same
// output again (synth.Plan(Spec, LoadVocab(Vocab), ParseScheme(Type),
// Seed), then WriteFile or, for Format "hf", WriteHF) and to check that it
// is the same (SHA256).
type synthRecord struct {
	File   string     `json:"file"`
	Format string     `json:"format"`
	Spec   synth.Spec `json:"spec"`
	Type   string     `json:"type"`
	Seed   uint64     `json:"seed"`
	Vocab  string     `json:"vocab"` // the --vocab source as given, or "synthetic"
	Bytes  int64      `json:"bytes"`
	SHA256 string     `json:"sha256"` // of the file; of a folder, of each file's name, a NUL and its bytes, in name order
}

// outputDigest returns the size and sha256 of what synth wrote: a file, or
// a folder's files (see synthRecord.SHA256).
func outputDigest(path string) (int64, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", err
	}
	files := []string{path}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return 0, "", err
		}
		files = files[:0]
		for _, e := range entries { // ReadDir sorts by name
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	h := sha256.New()
	var total int64
	for _, name := range files {
		if st.IsDir() {
			io.WriteString(h, filepath.Base(name)+"\x00")
		}
		f, err := os.Open(name)
		if err != nil {
			return 0, "", err
		}
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return 0, "", err
		}
		total += n
	}
	return total, hex.EncodeToString(h.Sum(nil)), nil
}

// overrideSpec returns base with the fields whose flags were set taken from sp.
func overrideSpec(base, sp synth.Spec, set map[string]bool) synth.Spec {
	if set["arch"] {
		base.Arch = sp.Arch
	}
	if set["name"] {
		base.Name = sp.Name
	}
	ints := map[string][2]*int{
		"dim": {&base.Dim, &sp.Dim}, "layers": {&base.Layers, &sp.Layers}, "heads": {&base.Heads, &sp.Heads},
		"kv-heads": {&base.KVHeads, &sp.KVHeads}, "head-dim": {&base.HeadDim, &sp.HeadDim}, "ffn": {&base.FFN, &sp.FFN},
		"vocab-size": {&base.VocabSize, &sp.VocabSize}, "ctx": {&base.Ctx, &sp.Ctx},
		"experts": {&base.Experts, &sp.Experts}, "experts-used": {&base.ExpertsUsed, &sp.ExpertsUsed}, "expert-ffn": {&base.ExpertFFN, &sp.ExpertFFN},
	}
	for name, p := range ints {
		if set[name] {
			*p[0] = *p[1]
		}
	}
	if set["rope-theta"] {
		base.RopeTheta = sp.RopeTheta
	}
	if set["norm-eps"] {
		base.NormEps = sp.NormEps
	}
	if set["tied"] {
		base.Tied = sp.Tied
	}
	if set["residual-scale"] {
		base.ResidualScale = sp.ResidualScale
	}
	if set["pooling-type"] {
		base.PoolingType = sp.PoolingType
	}
	return base
}

// parseScaledRope reads yarn:FACTOR:ORIGCTX or linear:FACTOR.
func parseScaledRope(s string) (*synth.ScaledRope, error) {
	parts := strings.Split(s, ":")
	switch {
	case parts[0] == "yarn" && len(parts) == 3, parts[0] == "linear" && len(parts) == 2:
	default:
		return nil, fmt.Errorf("want yarn:FACTOR:ORIGCTX or linear:FACTOR, got %q", s)
	}
	r := &synth.ScaledRope{Type: parts[0]}
	f, err := strconv.ParseFloat(parts[1], 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("factor %q is not a positive number", parts[1])
	}
	r.Factor = f
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[2])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("original context %q is not a positive integer", parts[2])
		}
		r.OriginalContext = n
	}
	return r, nil
}

// parseLlama3Rope reads FACTOR,LOW,HIGH,ORIGCTX.
func parseLlama3Rope(s string) (*synth.Llama3Rope, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, fmt.Errorf("want FACTOR,LOW,HIGH,ORIGCTX, got %q", s)
	}
	var f [3]float64
	for i := range f {
		x, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", parts[i])
		}
		f[i] = x
	}
	ctx, err := strconv.Atoi(strings.TrimSpace(parts[3]))
	if err != nil {
		return nil, fmt.Errorf("%q is not an integer", parts[3])
	}
	return &synth.Llama3Rope{Factor: f[0], LowFreqFactor: f[1], HighFreqFactor: f[2], OriginalContext: ctx}, nil
}
