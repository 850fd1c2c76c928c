package deps

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// forbidden maps a package to imports it must never have, directly or
// transitively (BLUEPRINT.md, "Packages"). A ban ending in "/" bans every
// package under that prefix ("kiln/" = any kiln package). Every key and
// every ban must name a package that exists (ruleNameErrors): a rule keyed
// by a renamed or never-written package would otherwise pass forever, as
// the server's rule once did under the name kiln/openai.
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
	// The KV cache is a page allocator: it knows nothing of models,
	// schedulers or tensors, so any kiln import is a layering slip.
	"kiln/kvcache": {"kiln/"},
	// The scheduler plans batches over KV pages; it never runs a model or
	// a kernel, and never speaks HTTP.
	"kiln/sched":           {"kiln/model", "kiln/kernels", "kiln/engine", "net/http"},
	"kiln/runner":          {"kiln/engine", "net/http", "kiln/tokenizer"},
	"kiln/runner/scripted": {"kiln/engine", "net/http", "kiln/tokenizer"},
	"kiln/spec":            {"kiln/sched", "kiln/engine"},
	"kiln/engine":          {"net/http"},
	// assemble builds engines from files and flags' values; it serves nothing.
	"kiln/assemble": {"net/http"},
	// The load generator is a client of any server: it must not measure
	// kiln through kiln's own internals.
	"kiln/benchserve": {"kiln/engine", "kiln/model", "kiln/kernels", "kiln/sched", "kiln/kvcache", "kiln/runner"},
}

// forbiddenDirect maps a package to imports it must not have itself but
// may reach through another package. The engine owns a *model.Model, which
// runs on kernels, so kernels is in its transitive imports; the rule is that
// the engine never calls a kernel itself. Likewise the server reaches the
// model, the kernels, the KV cache, the scheduler and the runner only
// through the engine's API (all are in its transitive imports, via the
// engine).
var forbiddenDirect = map[string][]string{
	"kiln/engine": {"kiln/kernels"},
	"kiln/server": {"kiln/model", "kiln/kernels", "kiln/kvcache", "kiln/sched", "kiln/runner"},
}

// goList runs go list over kiln/... and returns each package's import
// path with the listed field (Imports or Deps).
func goList(t *testing.T, field string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .`+field+` " "}}`, "kiln/...").Output()
	if err != nil {
		// The test runs under go test, so go is on PATH: failing to list
		// is a broken tree, not a reason to skip the layering check.
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			pkgs[fields[0]] = fields[1:]
		}
	}
	return pkgs
}

// ruleNameErrors lists a rule whose key is not a kiln package, or one of
// whose bans names no package kiln has or depends on (a typo'd ban would
// never match). pkgs holds kiln's packages; known is every kiln package and
// every dependency.
func ruleNameErrors(rules map[string][]string, pkgs map[string][]string, known map[string]bool) []string {
	var errs []string
	for key, bans := range rules {
		if _, ok := pkgs[key]; !ok {
			errs = append(errs, "rule for "+key+": no such package in kiln/...")
		}
		for _, ban := range bans {
			if strings.HasSuffix(ban, "/") {
				continue // a prefix; "kiln/" is the only one
			}
			if !known[ban] {
				errs = append(errs, "rule for "+key+" bans "+ban+": no such package (kiln's or a dependency)")
			}
		}
	}
	sort.Strings(errs)
	return errs
}

// knownPackages returns go list's Deps of every kiln package, and the set
// of every kiln package and every package any of them depends on, so a ban
// on net/http is checked against a real package.
func knownPackages(t *testing.T) (deps map[string][]string, known map[string]bool) {
	deps = goList(t, "Deps")
	known = map[string]bool{}
	for p, ds := range deps {
		known[p] = true
		for _, d := range ds {
			known[d] = true
		}
	}
	return deps, known
}

func banned(d, ban string) bool {
	return d == ban || strings.HasPrefix(d, ban+"/") || (strings.HasSuffix(ban, "/") && strings.HasPrefix(d, ban))
}

// violations lists "pkg imports d (forbidden: ban)" for every import of
// every package with a rule, sorted.
func violations(rules map[string][]string, imports map[string][]string) []string {
	var v []string
	for pkg, bans := range rules {
		for _, d := range imports[pkg] {
			for _, ban := range bans {
				if banned(d, ban) {
					v = append(v, pkg+" imports "+d+" (forbidden: "+ban+")")
				}
			}
		}
	}
	sort.Strings(v)
	return v
}

func TestDirectImports(t *testing.T) {
	_, known := knownPackages(t)
	imports := goList(t, "Imports")
	for _, e := range ruleNameErrors(forbiddenDirect, imports, known) {
		t.Error(e)
	}
	for _, v := range violations(forbiddenDirect, imports) {
		t.Error(v)
	}
}

func TestImportArrows(t *testing.T) {
	deps, known := knownPackages(t)
	for _, e := range ruleNameErrors(forbidden, deps, known) {
		t.Error(e)
	}
	for _, v := range violations(forbidden, deps) {
		t.Error(v)
	}
}

// TestRulesBite checks the checker on a made-up import graph: a rule that
// holds reports nothing, one that is broken (exactly or under a prefix) is
// reported, and a rule naming a missing package is caught.
func TestRulesBite(t *testing.T) {
	imports := map[string][]string{
		"kiln/sched":   {"kiln/kvcache", "net/http"},
		"kiln/kvcache": {"sort"},
		"kiln/server":  {"kiln/engine", "kiln/model/internal"},
	}
	rules := map[string][]string{
		"kiln/sched":   {"net/http"},
		"kiln/kvcache": {"kiln/"},
		"kiln/server":  {"kiln/model"},
	}
	got := violations(rules, imports)
	want := []string{
		"kiln/sched imports net/http (forbidden: net/http)",
		"kiln/server imports kiln/model/internal (forbidden: kiln/model)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations = %q, want %q", got, want)
	}
	known := map[string]bool{"kiln/sched": true, "kiln/kvcache": true, "kiln/server": true, "net/http": true}
	errs := ruleNameErrors(map[string][]string{
		"kiln/openai": {"net/http"},
		"kiln/sched":  {"net/htp"},
	}, imports, known)
	wantErrs := []string{
		"rule for kiln/openai: no such package in kiln/...",
		"rule for kiln/sched bans net/htp: no such package (kiln's or a dependency)",
	}
	if strings.Join(errs, "\n") != strings.Join(wantErrs, "\n") {
		t.Errorf("rule name errors = %q, want %q", errs, wantErrs)
	}
}
