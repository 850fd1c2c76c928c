package convert

import (
	"fmt"
	"testing"

	"kiln/gguf"
)

// TestChooseTypesEightExperts: llama-quantize's n_expert == 8 rules
// (Mixtral, Qwen3-MoE files with 8 experts): attn_v and attn_k in Q8_0 for
// every mixed file type, attn_output in Q5_K for Q2_K..Q4_K_M; the 3-D
// expert tensors take the ffn_* rules and the router stays F32. With 4
// experts the rules do not apply.
func TestChooseTypesEightExperts(t *testing.T) {
	const layers, dim, ffn = 8, 256, 256
	ts := []gguf.TensorInfo{{Name: "token_embd.weight", Shape: []uint64{dim, 1000}}}
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			gguf.TensorInfo{Name: p + "attn_q.weight", Shape: []uint64{dim, dim}},
			gguf.TensorInfo{Name: p + "attn_k.weight", Shape: []uint64{dim, dim / 4}},
			gguf.TensorInfo{Name: p + "attn_v.weight", Shape: []uint64{dim, dim / 4}},
			gguf.TensorInfo{Name: p + "attn_output.weight", Shape: []uint64{dim, dim}},
			gguf.TensorInfo{Name: p + "ffn_gate_inp.weight", Shape: []uint64{dim, 8}},
			gguf.TensorInfo{Name: p + "ffn_gate_exps.weight", Shape: []uint64{dim, ffn, 8}},
			gguf.TensorInfo{Name: p + "ffn_up_exps.weight", Shape: []uint64{dim, ffn, 8}},
			gguf.TensorInfo{Name: p + "ffn_down_exps.weight", Shape: []uint64{ffn, dim, 8}},
		)
	}
	ts = append(ts, gguf.TensorInfo{Name: "output.weight", Shape: []uint64{dim, 1000}})
	for i := range ts {
		ts[i].Type = gguf.TypeF32
	}
	typeOf := func(types []gguf.Type, name string) gguf.Type {
		for i, tt := range ts {
			if tt.Name == name {
				return types[i]
			}
		}
		t.Fatalf("no tensor %s", name)
		return 0
	}
	for _, c := range []struct {
		ft              FileType
		experts         int
		v, k, out, down gguf.Type // of layer 0 (useMoreBits(0, 8) holds)
	}{
		{FileTypeQ4_KM, 8, gguf.TypeQ8_0, gguf.TypeQ8_0, gguf.TypeQ5_K, gguf.TypeQ6_K},
		{FileTypeQ4_KM, 4, gguf.TypeQ6_K, gguf.TypeQ4_K, gguf.TypeQ4_K, gguf.TypeQ6_K},
		{FileTypeQ5_KM, 8, gguf.TypeQ8_0, gguf.TypeQ8_0, gguf.TypeQ5_K, gguf.TypeQ6_K},
		{FileTypeQ3_KL, 8, gguf.TypeQ8_0, gguf.TypeQ8_0, gguf.TypeQ3_K, gguf.TypeQ5_K},
		{FileTypeQ8_0, 8, gguf.TypeQ8_0, gguf.TypeQ8_0, gguf.TypeQ8_0, gguf.TypeQ8_0},
	} {
		types, err := ChooseTypes(ModelInfo{Arch: "qwen3moe", Layers: layers, Heads: 8, KVHeads: 2, Experts: c.experts}, ts, Scheme{FileType: c.ft})
		if err != nil {
			t.Fatal(err)
		}
		got := [4]gguf.Type{typeOf(types, "blk.0.attn_v.weight"), typeOf(types, "blk.0.attn_k.weight"),
			typeOf(types, "blk.0.attn_output.weight"), typeOf(types, "blk.0.ffn_down_exps.weight")}
		if want := [4]gguf.Type{c.v, c.k, c.out, c.down}; got != want {
			t.Errorf("%s, %d experts: attn_v, attn_k, attn_output, ffn_down_exps = %v, want %v", c.ft, c.experts, got, want)
		}
		if r := typeOf(types, "blk.3.ffn_gate_inp.weight"); r != gguf.TypeF32 {
			t.Errorf("%s: router in %s, want F32", c.ft, r)
		}
	}
}
