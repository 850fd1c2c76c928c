package local

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln/internal/testutil"
)

// pool is a running kiln-pool.sh: its ports and state folder.
type pool struct {
	state    string
	replicas []int // replica i's port
	proxy    int
	metrics  int // the EPP's Prometheus port
	env      []string
}

// freePorts reserves n loopback ports and frees them for the pool to take
// (a small race with other processes, acceptable for a test).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startPool runs `kiln-pool.sh start` with n replicas (consecutive ports)
// and stops it when the test ends. It skips when the picker or the model is
// absent.
func startPool(t *testing.T, n int, profile, serveArgs string) *pool {
	t.Helper()
	if testing.Short() {
		t.Skip("starts replicas and the picker: not under -short")
	}
	bin := os.Getenv("LLMD_BIN")
	if bin == "" {
		bin = "/tmp/llm-d-bin"
	}
	// .ci/run builds the picker, so under CI its absence fails (testutil.Missing).
	if _, err := os.Stat(filepath.Join(bin, "epp")); err != nil {
		testutil.Missing(t, "no %s/epp (build it with ../shared/scale/build-epp.sh %s)", bin, bin)
	}
	model, err := filepath.Abs(testutil.SharedModel(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	// Every port is one the kernel just handed out and we released: other
	// test binaries running at the same time cannot take it in the moments
	// before the pool binds it, barring a tiny race.
	ports := freePorts(t, n+4)
	p := &pool{state: t.TempDir(), replicas: ports[:n], proxy: ports[n], metrics: ports[n+1]}
	grpc := ports[n+2:]
	kiln := filepath.Join(p.state, "kiln")
	build := exec.Command("go", "build", "-o", kiln, "kiln/cmd/kiln")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var list []string
	for _, port := range p.replicas {
		list = append(list, strconv.Itoa(port))
	}
	p.env = append(os.Environ(), "MODEL="+model, "MODEL_NAME=stories", "THREADS=2",
		"PORTS="+strings.Join(list, " "), "PROXY_PORT="+strconv.Itoa(p.proxy), "EPP_METRICS="+strconv.Itoa(p.metrics),
		"EPP_GRPC="+strconv.Itoa(grpc[0]), "EPP_HEALTH="+strconv.Itoa(grpc[1]), "PROFILE="+profile,
		"LLMD_BIN="+bin, "KILN_BIN="+kiln, "STATE="+p.state, "SERVE_ARGS="+serveArgs)
	t.Cleanup(func() {
		if out, err := p.script("stop"); err != nil {
			t.Errorf("stop: %v\n%s", err, out)
		}
	})
	if out, err := p.script("start"); err != nil {
		logs := []string{"epp.log", "proxy.log"}
		for i := range n {
			logs = append(logs, fmt.Sprintf("kiln-%d.log", i+1))
		}
		for _, f := range logs {
			b, _ := os.ReadFile(filepath.Join(p.state, f))
			t.Logf("%s:\n%s", f, tail(b, 2000))
		}
		t.Fatalf("start: %v\n%s", err, out)
	}
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (p *pool) script(verb string) ([]byte, error) {
	cmd := exec.Command("bash", "kiln-pool.sh", verb)
	cmd.Env = p.env
	return cmd.CombinedOutput()
}

// eppMetric reads one series of the picker's own metrics: the value of the
// first line that starts with name and holds every label pair in labels.
func (p *pool) eppMetric(name string, labels ...string) (float64, bool) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metrics))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		return v, err == nil
	}
	return 0, false
}

// waitFor polls cond every 100 ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// viaProxy sends a completion through the proxy and returns the replica
// that served it (the proxy's x-gateway-destination-endpoint header).
func (p *pool) viaProxy(t *testing.T, body string) string {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/completions", p.proxy), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("through the proxy: %d %s", resp.StatusCode, b)
	}
	return resp.Header.Get("x-gateway-destination-endpoint")
}

// stream runs one long streaming completion directly on a replica, reading
// it to the end (or until ctx ends). 1,500 tokens (about 0.3 s of
// stories260K on a core, ~95 KV blocks): long enough that the picker's
// scrapes see the load steadily rather than between two short streams
// (with 400 the load-only control drifted from 0-1/10 to 4/10).
func stream(ctx context.Context, port int, prompt string) {
	body := fmt.Sprintf(`{"model":"stories","prompt":%q,"max_tokens":1500,"ignore_eos":true,"stream":true}`, prompt)
	req, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://127.0.0.1:%d/v1/completions", port), bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestPickerSeesReplicas: the picker's own metrics carry each kiln
// replica's queue (per endpoint) and the pool's KV usage and running
// requests, scraped from kiln's vLLM-named /metrics.
func TestPickerSeesReplicas(t *testing.T) {
	p := startPool(t, 2, "prefix", "")
	for i := range p.replicas {
		ep := fmt.Sprintf(`model_server_endpoint="kiln-%d"`, i+1)
		if _, ok := p.eppMetric("llm_d_epp_per_endpoint_queue_size", ep); !ok {
			t.Errorf("the picker shows no queue size for kiln-%d", i+1)
		}
	}
	for _, m := range []string{"llm_d_epp_average_kv_cache_utilization", "llm_d_epp_average_running_requests", "llm_d_epp_average_queue_size"} {
		if _, ok := p.eppMetric(m); !ok {
			t.Errorf("the picker shows no %s", m)
		}
	}
	// Through the proxy, with the prefix profile (tokenized by kiln's /render).
	if dest := p.viaProxy(t, `{"model":"stories","prompt":"Once upon a time","max_tokens":4}`); dest == "" {
		t.Errorf("the proxy named no destination")
	}
}

// TestBusyAvoidance: with replica A saturated by long streams (sent to it
// directly), at least 90% of new requests through the proxy land on B.
func TestBusyAvoidance(t *testing.T) {
	// Few sequences at once so that A's saturation shows as a queue, and a
	// small KV pool so that it shows in KV usage too.
	p := startPool(t, 2, "prefix", "--max-num-seqs 4 --kv-cache-memory 4MiB")
	a, b := fmt.Sprintf("127.0.0.1:%d", p.replicas[0]), fmt.Sprintf("127.0.0.1:%d", p.replicas[1])
	question := func(i int) string {
		// Distinct prompts: no prefix affinity pulls towards either replica.
		return fmt.Sprintf(`{"model":"stories","prompt":"Question %d: what is %d plus %d?","max_tokens":4}`, i, i, i+1)
	}

	// Control: idle, the same kind of requests spread over both replicas
	// (so the share below measures load avoidance, not a fixed preference).
	idle := map[string]int{}
	for i := range 20 {
		idle[p.viaProxy(t, question(1000+i))]++
	}
	t.Logf("both idle: %v", idle)
	if idle[a] == 0 || idle[b] == 0 {
		t.Errorf("idle replicas: %v; want requests on both", idle)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 12 { // 12 looping streams against 4 sequence slots
		wg.Go(func() {
			for ctx.Err() == nil {
				stream(ctx, p.replicas[0], fmt.Sprintf("Long story %d:", i))
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()

	busy := func() bool {
		q, ok := p.eppMetric("llm_d_epp_per_endpoint_queue_size", `model_server_endpoint="kiln-1"`)
		return ok && q >= 4
	}
	if !waitFor(15*time.Second, busy) {
		q, _ := p.eppMetric("llm_d_epp_per_endpoint_queue_size", `model_server_endpoint="kiln-1"`)
		t.Fatalf("the picker never saw replica A's queue reach 4 (last %v)", q)
	}
	// The pool averages are refreshed every 5 s (the EPP's
	// --refresh-prometheus-metrics-interval); the queue above is live.
	var q, kv, run float64
	if !waitFor(12*time.Second, func() bool {
		q, _ = p.eppMetric("llm_d_epp_per_endpoint_queue_size", `model_server_endpoint="kiln-1"`)
		kv, _ = p.eppMetric("llm_d_epp_average_kv_cache_utilization")
		run, _ = p.eppMetric("llm_d_epp_average_running_requests")
		return kv > 0 && run > 0
	}) {
		t.Errorf("the picker shows no KV usage (%v) or running requests (%v) under load", kv, run)
	}
	t.Logf("A saturated, as the picker sees it: A's queue %v, pool average KV usage %.3f, running %.1f", q, kv, run)

	const m = 40
	counts := map[string]int{}
	for i := range m {
		counts[p.viaProxy(t, question(i))]++
		time.Sleep(50 * time.Millisecond)
	}
	share := float64(counts[b]) / m
	t.Logf("busy avoidance: %d/%d new requests on idle replica B (%.0f%%), %d on busy A, other %v", counts[b], m, 100*share, counts[a], counts)
	if share < 0.9 {
		t.Errorf("only %.0f%% of new requests avoided the busy replica; want >= 90%%", 100*share)
	}
}

// TestPrefixAffinity: requests sharing a prefix of about 1,024 tokens (as
// kiln tokenizes it, through /render) keep landing on the replica that
// served the first of them even when that replica is the busier one; with
// the load-only profile (the control) they move to the idler replica.
func TestPrefixAffinity(t *testing.T) {
	for _, tc := range []struct {
		profile string
		sticky  bool
	}{{"prefix", true}, {"load", false}} {
		t.Run(tc.profile, func(t *testing.T) {
			p := startPool(t, 2, tc.profile, "--kv-cache-memory 4MiB")
			seed := "Once upon a time there was a little girl named Lily. "
			per := p.tokenCount(t, strings.Repeat(seed, 10)) / 10
			prefix := strings.Repeat(seed, 1024/per+1)
			n := p.tokenCount(t, prefix)
			if n < 1000 || n > 1300 {
				t.Fatalf("prefix is %d tokens, want about 1,024", n)
			}
			ask := func(i int) string {
				return p.viaProxy(t, fmt.Sprintf(`{"model":"stories","prompt":%q,"max_tokens":4}`, prefix+fmt.Sprintf("Part %d.", i)))
			}
			first := ask(0)
			_, portText, _ := strings.Cut(first, ":")
			port, err := strconv.Atoi(portText)
			if err != nil {
				t.Fatalf("destination %q", first)
			}
			// Make the prefix holder the busier replica: two looping streams.
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Go(func() {
					for ctx.Err() == nil {
						stream(ctx, port, fmt.Sprintf("Busy %d:", i))
					}
				})
			}
			defer func() { cancel(); wg.Wait() }()
			if !waitFor(12*time.Second, func() bool {
				kv, _ := p.eppMetric("llm_d_epp_average_kv_cache_utilization")
				return kv > 0
			}) {
				t.Fatal("the picker never saw the holder's KV usage rise")
			}
			same := 0
			for i := 1; i <= 10; i++ {
				if ask(i) == first {
					same++
				}
			}
			t.Logf("PROFILE=%s, prefix of %d tokens: %d/10 followed it to the busier replica %s", tc.profile, n, same, first)
			if tc.sticky && same < 9 {
				t.Errorf("only %d/10 requests followed the prefix", same)
			}
			if !tc.sticky && same > 5 {
				t.Errorf("without prefix scoring %d/10 still went to the busier replica: the control shows no load preference", same)
			}
		})
	}
}

// tokenCount asks replica 1's /tokenize how many tokens text is.
func (p *pool) tokenCount(t *testing.T, text string) int {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/tokenize", p.replicas[0]), "application/json",
		strings.NewReader(fmt.Sprintf(`{"model":"stories","prompt":%q}`, text)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct{ Count int }
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		t.Fatal(err)
	}
	return tr.Count
}

// TestReplicaFailure: a replica killed (SIGKILL) under traffic leaves the
// picker's routing within seconds (the script's watcher drops it from the
// endpoints file when its /health stops answering); after that every
// request succeeds on the survivor.
func TestReplicaFailure(t *testing.T) {
	p := startPool(t, 2, "prefix", "")
	b, err := os.ReadFile(filepath.Join(p.state, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	pid := 0
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 && f[1] == "kiln-2" {
			pid, _ = strconv.Atoi(f[0])
		}
	}
	proc, err := os.FindProcess(pid)
	if pid == 0 || err != nil {
		t.Fatalf("no PID for kiln-2 in %s", b)
	}
	survivor := fmt.Sprintf("127.0.0.1:%d", p.replicas[0])
	killed := time.Now()
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	var failed int
	var lastBad time.Duration
	client := &http.Client{Timeout: 10 * time.Second}
	for i := 0; time.Since(killed) < 8*time.Second; i++ {
		resp, err := client.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/completions", p.proxy), "application/json",
			strings.NewReader(fmt.Sprintf(`{"model":"stories","prompt":"Hello %d","max_tokens":2}`, i)))
		ok := err == nil && resp.StatusCode == 200 && resp.Header.Get("x-gateway-destination-endpoint") == survivor
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if !ok {
			failed++
			lastBad = time.Since(killed)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("after SIGKILL of replica 2: %d failed requests, the last %.1fs after the kill", failed, lastBad.Seconds())
	if lastBad > 5*time.Second {
		t.Errorf("requests still failed %.1fs after the kill; want the replica out of routing within 5 s", lastBad.Seconds())
	}
}
