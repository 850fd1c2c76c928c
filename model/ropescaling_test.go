package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kiln/convert"
	"kiln/gguf"
	"kiln/model"
	"kiln/synth"
)

// scaledRopeSpecs: qwen2 with YaRN as Qwen2.5 declares it (an original
// context of 16, so the 40-token prompt runs past it) and qwen3 with
// linear scaling.
var scaledRopeSpecs = []synth.Spec{
	{Arch: "qwen2", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, FFN: 256, VocabSize: 400, Tied: true, RopeTheta: 1e6, NormEps: 1e-6, Ctx: 64,
		ScaledRope: &synth.ScaledRope{Type: "yarn", Factor: 4, OriginalContext: 16}},
	{Arch: "qwen3", Dim: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FFN: 256, VocabSize: 400, Tied: true, RopeTheta: 1e6, NormEps: 1e-6,
		ScaledRope: &synth.ScaledRope{Type: "linear", Factor: 2}},
}

// TestScaledRopeHF: synth's GGUF and its Hugging Face folder (config.json
// rope_scaling {"type": "yarn", ...}) load to the same Config and
// bit-identical logits, and so does the folder's kiln convert GGUF, whose
// metadata carries the scaling as convert_hf_to_gguf.py writes it. That
// the scaling is llama.cpp's is the oracle goldens' job (qwen2yarn-F32,
// qwen3yarn-F32); here a model without it must give other logits.
func TestScaledRopeHF(t *testing.T) {
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(3 + i*37%390)
	}
	for _, spec := range scaledRopeSpecs {
		t.Run(spec.ScaledRope.Type, func(t *testing.T) {
			f, want := synthModel(t, spec, "F32")
			if want.Config.RopeScaling != spec.ScaledRope.Type || want.Config.RopeFreqScale != float32(1/spec.ScaledRope.Factor) {
				t.Fatalf("GGUF config %+v: want %s scaling by %v", want.Config, spec.ScaledRope.Type, spec.ScaledRope.Factor)
			}
			if spec.ScaledRope.Type == "yarn" && want.Config.RopeOrigContext != spec.ScaledRope.OriginalContext {
				t.Fatalf("RopeOrigContext %d, want %d", want.Config.RopeOrigContext, spec.ScaledRope.OriginalContext)
			}
			sm, err := synth.Plan(spec, nil, convert.Scheme{FileType: convert.FileTypeF32}, 7)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "hf")
			if err := sm.WriteHF(dir); err != nil {
				t.Fatal(err)
			}
			got := loadHF(t, dir)
			if g, w := got.Config, want.Config; g != w {
				t.Fatalf("config\n got %+v\nwant %+v", g, w)
			}
			lb := newRunner(t, want, len(prompt), true).feed(prompt...)
			sameLogits(t, "HF folder", newRunner(t, got, len(prompt), true).feed(prompt...), lb)

			cpath := filepath.Join(t.TempDir(), "converted.gguf")
			if _, err := convert.FromHF(dir, cpath, convert.Options{}, true); err != nil {
				t.Fatal(err)
			}
			cf, err := gguf.Open(cpath)
			if err != nil {
				t.Fatal(err)
			}
			defer cf.Close()
			for _, k := range []string{"rope.scaling.type", "rope.scaling.factor", "rope.scaling.original_context_length"} {
				a, aok := f.Value(spec.Arch + "." + k)
				b, bok := cf.Value(spec.Arch + "." + k)
				if aok != bok || aok && !reflect.DeepEqual(a, b) {
					t.Errorf("%s: synth %v (%v), converted %v (%v)", k, a, aok, b, bok)
				}
			}
			conv, err := model.Load(cf, model.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer conv.Close()
			if conv.Config != want.Config {
				t.Fatalf("converted config\n got %+v\nwant %+v", conv.Config, want.Config)
			}
			sameLogits(t, "converted", newRunner(t, conv, len(prompt), true).feed(prompt...), lb)

			plain := spec
			plain.ScaledRope = nil
			_, pm := synthModel(t, plain, "F32")
			lp := newRunner(t, pm, len(prompt), true).feed(prompt...)
			if lp[len(lp)-1][0] == lb[len(lb)-1][0] && lp[len(lp)-1][1] == lb[len(lb)-1][1] {
				t.Errorf("the model without rope scaling gives the same logits")
			}
		})
	}
}

// TestScaledRopeHFErrors: bad rope_scaling in config.json is an error
// naming the field.
func TestScaledRopeHFErrors(t *testing.T) {
	spec := scaledRopeSpecs[0]
	sm, err := synth.Plan(spec, nil, convert.Scheme{FileType: convert.FileTypeF32}, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rs   any
		want string
	}{
		{"factor 0", map[string]any{"type": "yarn", "factor": 0, "original_max_position_embeddings": 16}, "rope_scaling.factor must be positive"},
		{"no original", map[string]any{"type": "yarn", "factor": 4}, "rope_scaling.original_max_position_embeddings must be a positive integer"},
		{"unknown type", map[string]any{"rope_type": "longrope", "factor": 4}, `rope_scaling.rope_type "longrope" is not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hf")
			if err := sm.WriteHF(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "config.json")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]any
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatal(err)
			}
			cfg["rope_scaling"] = tc.rs
			b, _ = json.Marshal(cfg)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := model.LoadHF(dir, model.Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadHF error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
