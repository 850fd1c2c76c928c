package gguf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"kiln/gguf"
)

// TestEvict: evicting a tensor of a mapped file leaves its data readable
// and unchanged (the pages fault back in), as do its neighbours'; on a
// file parsed from memory it changes nothing (MADV_DONTNEED there would
// zero the bytes).
func TestEvict(t *testing.T) {
	w := gguf.NewWriter()
	w.Add("general.architecture", gguf.StringValue("llama"))
	want := map[string][]byte{}
	for i, n := range []int{100, 3 << 14, 5000, 1 << 15} { // small, page-spanning, odd sizes
		d := make([]byte, n*4)
		for j := range d {
			d[j] = byte(j*7 + i)
		}
		name := string(rune('a'+i)) + ".weight"
		want[name] = d
		if err := w.AddTensor(name, gguf.TypeF32, []uint64{uint64(n)}, d); err != nil {
			t.Fatal(err)
		}
	}
	img := writeAll(t, w)
	path := filepath.Join(t.TempDir(), "evict.gguf")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	parsed, err := gguf.Parse(bytes.Clone(img))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*gguf.File{mapped, parsed} {
		for name := range want {
			ti, _ := f.Tensor(name)
			_ = f.Data(ti)[0] // resident before the eviction
			f.Evict(f.Data(ti))
		}
		for name, d := range want {
			ti, _ := f.Tensor(name)
			if !bytes.Equal(f.Data(ti), d) {
				t.Fatalf("%s: data changed after Evict", name)
			}
		}
	}
	other := bytes.Clone(img)
	mapped.Evict(other) // not in the image: nothing to do
	if !bytes.Equal(other, img) {
		t.Fatal("Evict touched bytes outside the file image")
	}
	ti, _ := mapped.Tensor("a.weight")
	d := mapped.Data(ti)
	mapped.Close()
	mapped.Evict(d) // after Close: nothing to do, no fault
}
