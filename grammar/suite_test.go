package grammar

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"kiln/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/jsonschema_baseline.json with the current results")

// sharedData returns ../shared/data beside the repository, or skips
// (fails under CI: testutil.SharedFile).
func sharedData(t testing.TB) string {
	t.Helper()
	return testutil.SharedFile(t, "data")
}

// suiteFileResult is the outcome of one test-suite file.
type suiteFileResult struct {
	Groups      int            `json:"groups"`       // schemas in the file
	Compiled    int            `json:"compiled"`     // schemas the compiler accepted
	Tests       int            `json:"tests"`        // instances of compiled schemas
	Agree       int            `json:"agree"`        // instances where matcher and suite agree
	FalseAccept int            `json:"false_accept"` // invalid instances the grammar accepts (unsound)
	FalseReject int            `json:"false_reject"` // valid instances the grammar rejects (incomplete)
	Refused     map[string]int `json:"refused,omitempty"`
}

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// suiteFiles lists the files run: all of draft2020-12, and the optional
// format files of the formats the compiler asserts.
func suiteFiles(t *testing.T) (root string, files []string) {
	root = filepath.Join(sharedData(t), "json-schema-test-suite", "tests", "draft2020-12")
	main, err := filepath.Glob(filepath.Join(root, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(main) == 0 {
		testutil.Missing(t, "no test-suite files under %s", root)
	}
	for _, f := range main {
		files = append(files, filepath.Base(f))
	}
	for _, f := range []string{"date-time", "date", "time", "uuid", "email", "uri"} {
		files = append(files, "optional/format/"+f+".json")
	}
	files = append(files, "optional/ecmascript-regex.json", "optional/non-bmp-regex.json", "optional/bignum.json")
	return root, files
}

func refusalKey(err error) string {
	var ue *UnsupportedError
	var se *SchemaError
	switch {
	case errors.As(err, &ue):
		return ue.Keyword
	case errors.As(err, &se):
		return "(invalid schema)"
	case errors.Is(err, ErrTooLarge):
		return "(too large)"
	}
	return "(error)"
}

func runSuiteFile(t *testing.T, path string, verbose bool) suiteFileResult {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var groups []suiteGroup
	if err := json.Unmarshal(data, &groups); err != nil {
		t.Fatal(err)
	}
	res := suiteFileResult{Refused: map[string]int{}}
	for _, g := range groups {
		res.Groups++
		gr, err := CompileJSONSchema(g.Schema, nil)
		var p *Program
		if err == nil {
			p, err = Compile(gr)
		}
		if err != nil {
			res.Refused[refusalKey(err)]++
			if verbose {
				t.Logf("%s: %q refused: %v", filepath.Base(path), g.Description, err)
			}
			continue
		}
		res.Compiled++
		for _, tc := range g.Tests {
			res.Tests++
			v, err := parseJSON(tc.Data)
			if err != nil {
				t.Fatalf("%s: %q: instance: %v", path, tc.Description, err)
			}
			accepted := false
			if !p.Empty() {
				_, accepted = acceptedText(p, v, 100000)
			}
			switch {
			case accepted == tc.Valid:
				res.Agree++
			case accepted:
				res.FalseAccept++
				t.Logf("UNSOUND %s: %q / %q: accepted an invalid instance %s", filepath.Base(path), g.Description, tc.Description, tc.Data)
			default:
				res.FalseReject++
				if verbose {
					t.Logf("%s: %q / %q: rejected a valid instance %s", filepath.Base(path), g.Description, tc.Description, tc.Data)
				}
			}
		}
	}
	if len(res.Refused) == 0 {
		res.Refused = nil
	}
	return res
}

// TestJSONSchemaSuite runs the official JSON Schema Test Suite: every
// schema the compiler accepts must accept exactly the valid instances
// (each written in a member order the grammar accepts, if one exists). The
// per-file counts are compared with testdata/jsonschema_baseline.json: a
// file that gets worse fails; one that gets better asks for -update.
func TestJSONSchemaSuite(t *testing.T) {
	root, files := suiteFiles(t)
	verbose := testing.Verbose()
	results := map[string]suiteFileResult{}
	var total suiteFileResult
	refused := map[string]int{}
	for _, f := range files {
		r := runSuiteFile(t, filepath.Join(root, f), verbose)
		results[f] = r
		total.Groups += r.Groups
		total.Compiled += r.Compiled
		total.Tests += r.Tests
		total.Agree += r.Agree
		total.FalseAccept += r.FalseAccept
		total.FalseReject += r.FalseReject
		for k, n := range r.Refused {
			refused[k] += n
		}
	}
	var keys []string
	for k := range refused {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return refused[keys[i]] > refused[keys[j]] || refused[keys[i]] == refused[keys[j]] && keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s:%d", k, refused[k])
	}
	t.Logf("schemas compiled %d/%d; instances of compiled schemas %d: agree %d, false accept %d, false reject %d; refused by keyword:%s",
		total.Compiled, total.Groups, total.Tests, total.Agree, total.FalseAccept, total.FalseReject, b.String())

	basePath := filepath.Join("testdata", "jsonschema_baseline.json")
	if *update {
		out, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(basePath, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", basePath)
		return
	}
	raw, err := os.ReadFile(basePath)
	if err != nil {
		t.Fatalf("%v (run go test ./grammar -run TestJSONSchemaSuite -update to create it)", err)
	}
	var base map[string]suiteFileResult
	if err := json.Unmarshal(raw, &base); err != nil {
		t.Fatal(err)
	}
	improved := false
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range results {
			if !yield(k) {
				return
			}
		}
	})
	for _, f := range names {
		r, ok := base[f]
		got := results[f]
		if !ok {
			t.Errorf("%s: not in the baseline (run with -update)", f)
			continue
		}
		worse := got.Compiled < r.Compiled || got.Agree < r.Agree || got.FalseAccept > r.FalseAccept || got.FalseReject > r.FalseReject && got.Compiled <= r.Compiled
		better := got.Compiled > r.Compiled || got.Agree > r.Agree || got.FalseAccept < r.FalseAccept || got.FalseReject < r.FalseReject
		switch {
		case worse:
			t.Errorf("%s regressed: baseline %+v, now %+v", f, r, got)
		case better:
			improved = true
			t.Logf("%s improved: baseline %+v, now %+v", f, r, got)
		}
	}
	if improved && !t.Failed() {
		t.Logf("results improved: record them with go test ./grammar -run TestJSONSchemaSuite -update")
	}
	if total.FalseAccept > 0 {
		t.Errorf("%d invalid instances accepted: the compiler is unsound somewhere (see UNSOUND lines)", total.FalseAccept)
	}
}
