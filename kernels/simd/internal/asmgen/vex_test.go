package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestVEXEncoding checks the bytes vexDPBUSD and vexDPWSSD emit (Go's
// assembler has no VEX form of these AVX-VNNI instructions) against
// binutils' disassembler, for every register triple Y0..Y15: each must
// decode as the {vex} instruction named in its comment with the same
// operands. Skips where objdump is not installed.
func TestVEXEncoding(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed: VEX encodings not checked")
	}
	type want struct {
		name             string
		src3, src2, dest int
	}
	var raw []byte
	var wants []want
	byteRe := regexp.MustCompile(`BYTE \$0x([0-9a-f]{2})`)
	for _, op := range []struct {
		name string
		emit func(a *asm, src3, src2, dst int)
	}{{"vpdpbusd", vexDPBUSD}, {"vpdpwssd", vexDPWSSD}} {
		for s3 := 0; s3 < 16; s3++ {
			for s2 := 0; s2 < 16; s2++ {
				for d := 0; d < 16; d++ {
					a := &asm{}
					op.emit(a, s3, s2, d)
					line := a.b.String()
					m := byteRe.FindAllStringSubmatch(line, -1)
					if len(m) != 5 {
						t.Fatalf("%s: %d BYTE directives, want 5", strings.TrimSpace(line), len(m))
					}
					for _, b := range m {
						v, _ := strconv.ParseUint(b[1], 16, 8)
						raw = append(raw, byte(v))
					}
					wants = append(wants, want{op.name, s3, s2, d})
				}
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "vex.bin")
	if err := os.WriteFile(bin, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "i386:x86-64", bin).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	insnRe := regexp.MustCompile(`^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)$`)
	var got []string
	for _, l := range bytes.Split(out, []byte("\n")) {
		if m := insnRe.FindSubmatch(l); m != nil {
			got = append(got, strings.Join(strings.Fields(string(m[2])), " "))
		}
	}
	if len(got) != len(wants) {
		t.Fatalf("objdump decoded %d instructions, want %d:\n%s", len(got), len(wants), out[:min(len(out), 2000)])
	}
	for i, w := range wants {
		exp := fmt.Sprintf("{vex} %s %%ymm%d,%%ymm%d,%%ymm%d", w.name, w.src3, w.src2, w.dest)
		if got[i] != exp {
			t.Errorf("instruction %d: objdump says %q, want %q", i, got[i], exp)
		}
	}
}
