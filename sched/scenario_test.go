package sched

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kiln/kvcache"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the scenarios")

// TestScenarios runs each testdata/*.txt script and compares the printed
// plans, events and pool state with testdata/*.golden. Script lines:
//
//	config tokens=N seqs=N blocks=N block=N context=N   (first line)
//	add ID prompt=1,2,5-9 [max=N] [stop=T,T] [prio=N] [n=N] [beam=W] [tail=N]
//	                         (n > 1: forks ID.1 ... ID.N-1; beam: a beam search of width W;
//	                         tail: ComputeTail)
//	step [ID=TOKEN ...]      schedule, then update; unnamed samples are 100+step (forks: 200+step)
//	draft ID 5,6,7           store this draft for ID for the next step (SetDrafts; only a
//	                         request that decodes next takes it: asked says whether
//	                         DraftAsks named ID) (step ID/acc=N: N of them accepted,
//	                         default all; accepted tokens' events are marked +)
//	continue ID TOKEN        Continue a held beam member
//	branch PARENT CHILD TOKEN
//	abort ID
//	# comment
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			script, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := runScript(t, string(script))
			golden := strings.TrimSuffix(f, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (run with -update to accept):\n%s", golden, diff(string(want), got))
			}
		})
	}
}

func runScript(t *testing.T, script string) string {
	var out strings.Builder
	var s *Scheduler
	var pool *kvcache.Pool
	for ln, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		args := map[string]string{}
		for _, f := range fields[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				args[k] = v
			}
		}
		fmt.Fprintf(&out, "> %s\n", line)
		if fields[0] != "config" && s == nil {
			t.Fatalf("line %d: config must come first", ln+1)
		}
		switch fields[0] {
		case "config":
			var err error
			if pool, err = kvcache.New(atoi(t, args["blocks"]), atoi(t, args["block"])); err != nil {
				t.Fatal(err)
			}
			cfg := Config{MaxBatchedTokens: atoi(t, args["tokens"]), MaxSeqs: atoi(t, args["seqs"]), MaxModelLen: atoi(t, args["context"])}
			if s, err = New(cfg, pool); err != nil {
				t.Fatal(err)
			}
		case "add":
			req := Request{ID: fields[1], Prompt: tokens(t, args["prompt"]), Stop: tokens(t, args["stop"])}
			if v, ok := args["max"]; ok {
				req.MaxTokens = atoi(t, v)
			}
			if v, ok := args["prio"]; ok {
				req.Priority = atoi(t, v)
			}
			if v, ok := args["beam"]; ok {
				req.Beam, req.Width = true, atoi(t, v)
			}
			if v, ok := args["tail"]; ok {
				req.ComputeTail = atoi(t, v)
			}
			if v, ok := args["n"]; ok {
				for i := 1; i < atoi(t, v); i++ {
					req.Forks = append(req.Forks, fmt.Sprintf("%s.%d", req.ID, i))
				}
			}
			if err := s.Add(req); err != nil {
				fmt.Fprintf(&out, "  error: %v\n", err)
			}
		case "abort":
			fmt.Fprintf(&out, "  aborted: %v\n", s.Abort(fields[1]))
		case "draft":
			asks := s.DraftAsks(nil)
			asked := false
			for _, a := range asks {
				if a.ID == fields[1] {
					a.Draft, asked = tokens(t, fields[2]), true
					s.SetDrafts([]DraftAsk{a})
				}
			}
			fmt.Fprintf(&out, "  asked: %v\n", asked)
		case "continue":
			if err := s.Continue(fields[1], int32(atoi(t, fields[2]))); err != nil {
				fmt.Fprintf(&out, "  error: %v\n", err)
			}
		case "branch":
			if err := s.Branch(fields[1], fields[2], int32(atoi(t, fields[3]))); err != nil {
				fmt.Fprintf(&out, "  error: %v\n", err)
			}
		case "step":
			plan := s.Schedule()
			fmt.Fprintf(&out, "  step %d: %d tokens\n", plan.Step, plan.NumTokens)
			sampled := make([]int32, len(plan.Seqs)+len(plan.Forks))
			accepted := make([]int32, len(plan.Seqs))
			for i, q := range plan.Seqs {
				if q.Draft > 0 {
					accepted[i] = int32(q.Draft)
					if v, ok := args[q.ID+"/acc"]; ok {
						accepted[i] = int32(atoi(t, v))
					}
					sample := fmt.Sprintf(" sample draft=%v accepted %d", q.Tokens[1:], accepted[i])
					sampled[i] = int32(100 + plan.Step)
					if v, ok := args[q.ID]; ok {
						sampled[i] = int32(atoi(t, v))
					}
					fmt.Fprintf(&out, "  %-4s [%d,%d)%s table=%v\n", q.ID, q.Start, q.Start+len(q.Tokens), sample, q.Table)
					continue
				}
				sample := ""
				if q.Sample {
					sample = " sample"
					sampled[i] = int32(100 + plan.Step)
					if v, ok := args[q.ID]; ok {
						sampled[i] = int32(atoi(t, v))
					}
				}
				fmt.Fprintf(&out, "  %-4s [%d,%d)%s table=%v\n", q.ID, q.Start, q.Start+len(q.Tokens), sample, q.Table)
			}
			for j, f := range plan.Forks {
				k := len(plan.Seqs) + j
				sampled[k] = int32(200 + plan.Step)
				if v, ok := args[f.ID]; ok {
					sampled[k] = int32(atoi(t, v))
				}
				fmt.Fprintf(&out, "  fork %s <- %s\n", f.ID, plan.Seqs[f.Seq].ID)
			}
			if len(plan.Copies) > 0 {
				fmt.Fprintf(&out, "  copies: %v\n", plan.Copies)
			}
			if len(plan.Preempted) > 0 {
				fmt.Fprintf(&out, "  preempted: %v\n", plan.Preempted)
			}
			events, err := s.UpdateDrafts(plan, sampled, accepted)
			if err != nil {
				t.Fatalf("line %d: %v", ln+1, err)
			}
			var ev []string
			for _, e := range events {
				x := fmt.Sprintf("%s:%d", e.ID, e.Token)
				if e.Draft > 0 {
					x += "+"
				}
				if e.Done {
					x += "(" + string(e.Reason) + ")"
				}
				ev = append(ev, x)
			}
			if len(ev) > 0 {
				fmt.Fprintf(&out, "  events: %s\n", strings.Join(ev, " "))
			}
		default:
			t.Fatalf("line %d: unknown command %q", ln+1, fields[0])
		}
		if err := pool.Check(); err != nil {
			t.Fatalf("line %d: %v", ln+1, err)
		}
		st := pool.Stats()
		fmt.Fprintf(&out, "  waiting %d running %d | blocks free %d/%d cached %d | prefix hits %d/%d evictions %d\n",
			s.NumWaiting(), s.NumRunning(), st.Free, st.Blocks, st.CachedBlocks, st.PrefixHits, st.PrefixQueries, st.Evictions)
	}
	return out.String()
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}

// tokens parses "1,2,5-9" into 1 2 5 6 7 8 9.
func tokens(t *testing.T, s string) []int32 {
	t.Helper()
	var out []int32
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		for v := atoi(t, lo); v <= atoi(t, hi); v++ {
			out = append(out, int32(v))
		}
	}
	return out
}

// diff shows the first differing line of want and got.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return ""
}
