package deps

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden maps a package to imports it must never have, directly or
// transitively (BLUEPRINT.md, "Packages").
var forbidden = map[string][]string{
	"kiln/gguf":         {"kiln/"},
	"kiln/safetensors":  {"kiln/"},
	"kiln/quant":        {"kiln/kernels", "kiln/model", "kiln/tokenizer", "kiln/sample", "kiln/chat", "kiln/synth", "kiln/convert"},
	"kiln/kernels/simd": {"kiln/kernels", "kiln/model", "kiln/gguf"},
	"kiln/kernels":      {"kiln/model", "kiln/kvcache", "kiln/sched", "kiln/engine", "kiln/tokenizer"},
	"kiln/model":        {"kiln/kvcache", "kiln/sched", "kiln/engine", "kiln/tokenizer", "kiln/sample", "kiln/chat", "net/http"},
	"kiln/tokenizer":    {"kiln/model", "kiln/engine", "kiln/kernels"},
	"kiln/chat":         {"kiln/model", "kiln/engine", "kiln/kernels"},
	"kiln/sample":       {"kiln/model", "kiln/engine", "kiln/kernels"},
	"kiln/kvcache":      {"kiln/model", "kiln/sched"},
	"kiln/sched":        {"kiln/model", "kiln/kernels", "kiln/engine", "net/http"},
	"kiln/runner":       {"kiln/engine", "net/http", "kiln/tokenizer"},
	"kiln/spec":         {"kiln/sched", "kiln/engine"},
	"kiln/engine":       {"net/http"},
	"kiln/assemble":     {"net/http"},
	"kiln/openai":       {"kiln/model", "kiln/kvcache", "kiln/sched", "kiln/kernels"},
	// The load generator is a client of any server: it must not measure
	// kiln through kiln's own internals.
	"kiln/benchserve": {"kiln/engine", "kiln/model", "kiln/kernels", "kiln/sched", "kiln/kvcache", "kiln/runner"},
}

// forbiddenDirect maps a package to imports it must not have itself but
// may reach through another package. The engine owns a *model.Model, which
// runs on kernels, so kernels is in its transitive imports; the rule is that
// the engine never calls a kernel itself.
var forbiddenDirect = map[string][]string{
	"kiln/engine": {"kiln/kernels"},
}

func TestDirectImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "kiln/...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || forbiddenDirect[fields[0]] == nil {
			continue
		}
		seen++
		for _, d := range fields[1:] {
			for _, ban := range forbiddenDirect[fields[0]] {
				if d == ban || strings.HasPrefix(d, ban+"/") {
					t.Errorf("%s imports %s directly (forbidden: %s)", fields[0], d, ban)
				}
			}
		}
	}
	if seen != len(forbiddenDirect) {
		t.Fatalf("checked %d of %d packages:\n%s", seen, len(forbiddenDirect), out)
	}
}

func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "kiln/...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, deps := fields[0], fields[1:]
		bans, ok := forbidden[pkg]
		if !ok {
			continue
		}
		seen++
		for _, d := range deps {
			for _, ban := range bans {
				if d == ban || strings.HasPrefix(d, ban+"/") || (strings.HasSuffix(ban, "/") && strings.HasPrefix(d, ban)) {
					t.Errorf("%s imports %s (forbidden: %s)", pkg, d, ban)
				}
			}
		}
	}
	if seen < 5 {
		t.Fatalf("checked only %d packages: go list output unexpected:\n%s", seen, out)
	}
}
