package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"kiln/benchserve"
)

// maxSweepConcurrency bounds one --max-concurrency value: each slot is a
// goroutine and a connection.
const maxSweepConcurrency = 100000

// runBenchServe is "kiln bench serve": load-test an OpenAI-compatible
// server (kiln serve, llama-server, vLLM) and report vLLM's metrics.
func runBenchServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench serve", flag.ContinueOnError)
	fs.SetOutput(stdout)
	baseURL := fs.String("base-url", "http://127.0.0.1:8080", "server root URL (without /v1)")
	endpoint := fs.String("endpoint", benchserve.CompletionsPath, "API path: "+benchserve.CompletionsPath+" or "+benchserve.ChatPath)
	modelName := fs.String("model", "", "model name sent in every request (default: the first model of the server's /v1/models)")
	apiKey := fs.String("api-key", "", "API key sent as Bearer token (default: $KILN_API_KEY, else $OPENAI_API_KEY)")
	dataset := fs.String("dataset", "random", "random, prefix-repetition or sharegpt")
	datasetPath := fs.String("dataset-path", "", "sharegpt: the ShareGPT JSON file")
	extraBody := fs.String("extra-body", "", "a JSON object merged into every request body, e.g. '{\"response_format\":{\"type\":\"json_object\"}}'")
	promptsFlag := fs.String("num-prompts", "100", "requests per run; with a --max-concurrency sweep, one count per run may be given (8,16,48,128)")
	seed := fs.Uint64("seed", 0, "seed of the dataset and the arrival times")
	inLen := fs.Int("random-input-len", 128, "random: prompt tokens")
	outLen := fs.Int("random-output-len", 64, "random: output tokens (max_tokens)")
	ratio := fs.Float64("random-range-ratio", 0, "random: lengths uniform in [len*(1-r), len*(1+r)], 0 <= r < 1")
	vocab := fs.Int("vocab", 0, fmt.Sprintf("random, prefix-repetition: draw token ids from [min(100, N/4), N) (default: --tokenizer's vocabulary, else [100, %d))", benchserve.DefaultVocab))
	tokenizer := fs.String("tokenizer", "", "a GGUF model or tokenizer file whose vocabulary size sets the token id range")
	prefixLen := fs.Int("prefix-len", 256, "prefix-repetition: tokens of each shared prefix")
	suffixLen := fs.Int("suffix-len", 256, "prefix-repetition: tokens of each request's own suffix")
	numPrefixes := fs.Int("num-prefixes", 10, "prefix-repetition: distinct prefixes")
	prefixOut := fs.Int("output-len", 128, "prefix-repetition: output tokens")
	sharegptOut := fs.Int("sharegpt-output-len", 0, fmt.Sprintf("sharegpt: output tokens (0: the reply's bytes/4, capped at %d)", benchserve.MaxShareGPTOutput))
	rateFlag := fs.String("request-rate", "inf", "requests per second, Poisson arrivals; inf sends all at once")
	concFlag := fs.String("max-concurrency", "", "cap on requests in flight; a list (1,4,16,64) sweeps, one run per value (default: no cap)")
	temperature := fs.Float64("temperature", 0, "sampling temperature of every request")
	pctFlag := fs.String("metric-percentiles", "99", "percentiles reported for each latency, comma-separated")
	resultFile := fs.String("result-file", "", "write the results as JSON (one object; a sweep writes an array of them)")
	chart := fs.String("chart", "", "write an SVG chart (a sweep: latencies and throughput against concurrency; one run: ITL histogram and per-request latencies)")
	timeout := fs.Duration("request-timeout", 30*time.Minute, "limit on one request, send to end of stream (0: none)")
	noTest := fs.Bool("no-test-request", false, "skip the untimed first request that checks the server answers")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln bench serve [--base-url URL] [--model NAME] [--endpoint PATH]\n"+
			"         [--dataset random --random-input-len 128 --random-output-len 64 [--vocab N | --tokenizer GGUF]]\n"+
			"         [--dataset prefix-repetition --prefix-len 256 --suffix-len 256 --num-prefixes 10 --output-len 128]\n"+
			"         [--dataset sharegpt --dataset-path FILE.json [--sharegpt-output-len N]]\n"+
			"         [--num-prompts 100] [--request-rate inf] [--max-concurrency 1,4,16] [--result-file F.json] [--chart F.svg]\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErrorf("unexpected argument %q (kiln bench serve takes flags only)", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	only := func(names ...string) error {
		for _, n := range names {
			if set[n] {
				return usageErrorf("--%s does not apply to --dataset %s", n, *dataset)
			}
		}
		return nil
	}
	randomFlags := []string{"random-input-len", "random-output-len", "random-range-ratio"}
	prefixFlags := []string{"prefix-len", "suffix-len", "num-prefixes", "output-len"}
	idFlags := []string{"vocab", "tokenizer"}
	shareFlags := []string{"dataset-path", "sharegpt-output-len"}
	chat := strings.HasSuffix(*endpoint, "/chat/completions")
	switch *dataset {
	case "random":
		err = only(append(prefixFlags, shareFlags...)...)
	case "prefix-repetition", "prefix_repetition":
		err = only(append(randomFlags, shareFlags...)...)
	case "sharegpt":
		err = only(slices.Concat(randomFlags, prefixFlags, idFlags)...)
		if err == nil && *datasetPath == "" {
			err = usageErrorf("--dataset sharegpt needs --dataset-path FILE.json")
		}
	default:
		err = usageErrorf("--dataset %q: want random, prefix-repetition or sharegpt", *dataset)
	}
	if err != nil {
		return err
	}
	if chat && *dataset != "sharegpt" {
		return usageErrorf("--dataset %s sends token-id prompts, which only %s accepts; use --dataset sharegpt with %s", *dataset, benchserve.CompletionsPath, *endpoint)
	}
	if !strings.HasPrefix(*endpoint, "/") {
		return usageErrorf("--endpoint %q: want a path such as %s", *endpoint, benchserve.CompletionsPath)
	}
	if !strings.HasPrefix(*baseURL, "http://") && !strings.HasPrefix(*baseURL, "https://") {
		return usageErrorf("--base-url %q: want http://HOST:PORT or https://...", *baseURL)
	}
	rate, err := parseRate(*rateFlag)
	if err != nil {
		return err
	}
	concs, err := parseConcurrencies(*concFlag)
	if err != nil {
		return err
	}
	counts, err := parseNumPrompts(*promptsFlag, len(concs))
	if err != nil {
		return err
	}
	var extra map[string]any
	if *extraBody != "" {
		if err := json.Unmarshal([]byte(*extraBody), &extra); err != nil || extra == nil {
			return usageErrorf("--extra-body %q: want a JSON object", *extraBody)
		}
	}
	numPrompts := new(int)
	*numPrompts = slices.Max(counts)
	pcts, err := parsePercentiles(*pctFlag)
	if err != nil {
		return err
	}
	if math.IsNaN(*temperature) || *temperature < 0 || *temperature > 100 {
		return usageErrorf("--temperature %g: want 0 up to 100", *temperature)
	}
	if *timeout < 0 {
		return usageErrorf("--request-timeout %v: want 0 (none) or positive", *timeout)
	}
	if *vocab < 0 || (set["vocab"] && *vocab < 2) {
		return usageErrorf("--vocab %d: want at least 2", *vocab)
	}
	if set["vocab"] && set["tokenizer"] {
		return usageErrorf("give --vocab or --tokenizer, not both")
	}
	key := *apiKey
	if key == "" {
		key = os.Getenv("KILN_API_KEY")
	}
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}

	// The dataset, the same for every run of a sweep.
	ids := benchserve.TokenRange{Lo: 100, Hi: benchserve.DefaultVocab}
	if *tokenizer != "" {
		n, err := benchserve.GGUFVocabSize(*tokenizer)
		if err != nil {
			return fmt.Errorf("--tokenizer: %v", err)
		}
		*vocab = n
	}
	if *vocab > 0 {
		if ids, err = benchserve.VocabRange(*vocab); err != nil {
			return usageErrorf("%v", err)
		}
	}
	var reqs []benchserve.Request
	switch *dataset {
	case "random":
		reqs, err = benchserve.RandomDataset(*numPrompts, *inLen, *outLen, *ratio, ids, *seed)
	case "prefix-repetition", "prefix_repetition":
		reqs, err = benchserve.PrefixRepetitionDataset(*numPrompts, *prefixLen, *suffixLen, *numPrefixes, *prefixOut, ids, *seed)
	case "sharegpt":
		reqs, err = benchserve.ShareGPTDataset(*datasetPath, *numPrompts, *sharegptOut, *seed)
	}
	if err != nil {
		if *dataset == "sharegpt" {
			return err // a file's problem, not the command line's
		}
		return usageErrorf("%v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client := &benchserve.Client{
		BaseURL: *baseURL, Path: *endpoint, Model: *modelName, APIKey: key,
		Temperature: *temperature, Timeout: *timeout, HTTP: benchserve.NewHTTPClient(maxInt(concs)), Extra: extra,
	}
	if client.Model == "" {
		if client.Model, err = client.FirstModel(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "model: %s (the server's first)\n", client.Model)
	}
	if !*noTest {
		if o := client.Do(ctx, reqs[0]); !o.Success {
			check := "--base-url, --endpoint and --model"
			if reqs[0].PromptIDs != nil {
				check = "--base-url, --endpoint, --model, and --vocab or --tokenizer for the token ids"
			}
			return fmt.Errorf("test request to %s failed: %s (check %s; --no-test-request skips this check)", client.URL(), o.Error, check)
		}
	}

	var results []*benchserve.Result
	allFailed := false
	for i, conc := range concs {
		cs := "none"
		if conc > 0 {
			cs = strconv.Itoa(conc)
		}
		run := reqs[:counts[i]]
		fmt.Fprintf(stderr, "run %d/%d: %d requests to %s, request rate %s, max concurrency %s\n", i+1, len(concs), len(run), client.URL(), *rateFlag, cs)
		m, err := benchserve.Run{RequestRate: rate, MaxConcurrency: conc, Seed: *seed}.Execute(ctx, client, run)
		if err != nil {
			return fmt.Errorf("run interrupted: %v", err)
		}
		r := benchserve.Summarize(m, pcts)
		r.Date = time.Now().Format("20060102-150405")
		r.Backend = "openai"
		if chat {
			r.Backend = "openai-chat"
		}
		r.Model, r.Tokenizer, r.RequestRate, r.MaxConcurrency = client.Model, *tokenizer, rate, conc
		r.BaseURL, r.Endpoint, r.Dataset, r.Temperature = *baseURL, *endpoint, *dataset, *temperature
		reportFailures(stderr, &r, run)
		if err := r.WriteTable(stdout); err != nil {
			return err
		}
		allFailed = allFailed || r.Completed == 0
		results = append(results, &r)
	}
	if len(results) > 1 {
		if err := benchserve.WriteSweepTable(stdout, results); err != nil {
			return err
		}
	}
	if *resultFile != "" {
		var v any = results[0]
		if len(results) > 1 {
			v = results
		}
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*resultFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *chart != "" {
		svg := benchserve.RunChart(results[0])
		if len(results) > 1 {
			svg = benchserve.SweepChart(results)
		}
		if err := os.WriteFile(*chart, svg, 0o644); err != nil {
			return err
		}
	}
	if allFailed {
		return fmt.Errorf("every request of a run failed (first error: %s)", firstError(results))
	}
	return nil
}

// reportFailures prints the first ten errors of a run, as vLLM does, and
// warns when completed requests came back shorter than they asked for: the
// server did not honour ignore_eos, so the lengths are not the dataset's.
func reportFailures(w io.Writer, r *benchserve.Result, reqs []benchserve.Request) {
	shown := 0
	for i, e := range r.Errors {
		if e == "" {
			continue
		}
		if shown == 0 {
			fmt.Fprintf(w, "%d failed requests (the first 10):\n", r.Failed)
		}
		if shown < 10 {
			fmt.Fprintf(w, "  request %d: %s\n", i, e)
		}
		shown++
	}
	short := 0
	for i, e := range r.Errors {
		if e == "" && r.OutputLens[i] < reqs[i].OutputLen {
			short++
		}
	}
	if short > 0 {
		fmt.Fprintf(w, "warning: %d completed requests returned fewer tokens than max_tokens (does the server honour ignore_eos?)\n", short)
	}
}

func firstError(rs []*benchserve.Result) string {
	for _, r := range rs {
		for _, e := range r.Errors {
			if e != "" {
				return e
			}
		}
	}
	return "none"
}

// parseRate reads --request-rate: "inf" or a positive number.
func parseRate(s string) (float64, error) {
	if strings.EqualFold(s, "inf") {
		return math.Inf(1), nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return 0, usageErrorf("--request-rate %q: want a positive number of requests per second, or inf", s)
	}
	return r, nil
}

// parseConcurrencies reads --max-concurrency: "" (no cap: one run) or a
// comma-separated list of positive caps, one run each.
func parseConcurrencies(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return []int{0}, nil
	}
	var cs []int
	for f := range strings.SplitSeq(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > maxSweepConcurrency {
			return nil, usageErrorf("--max-concurrency %q: want positive counts up to %d, comma-separated", s, maxSweepConcurrency)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// parseNumPrompts reads --num-prompts: one count for every run, or one
// per run of the sweep (runs of high concurrency need more requests to
// reach a steady state than a run of one needs).
func parseNumPrompts(s string, runs int) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 10_000_000 {
			return nil, usageErrorf("--num-prompts %q: want counts from 1 up to 10000000, comma-separated", s)
		}
		ns = append(ns, n)
	}
	switch len(ns) {
	case 1:
		return slices.Repeat(ns, runs), nil
	case runs:
		return ns, nil
	}
	return nil, usageErrorf("--num-prompts %q: give one count, or one per --max-concurrency run (%d)", s, runs)
}

// parsePercentiles reads --metric-percentiles: numbers in (0, 100].
func parsePercentiles(s string) ([]float64, error) {
	var ps []float64
	for f := range strings.SplitSeq(s, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(p > 0 && p <= 100) {
			return nil, usageErrorf("--metric-percentiles %q: want numbers in (0, 100], comma-separated", s)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
