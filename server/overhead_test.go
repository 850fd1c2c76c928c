package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"kiln/engine"
	"kiln/sample"
	"kiln/server"
)

// The cost the HTTP layer adds per generated token: 16 concurrent
// streams of 256 tokens on the tiny model (whose forward takes
// microseconds, so the difference between the two benchmarks is the
// server's: JSON, SSE writes and flushes, channel hops, metrics), through
// kiln serve and straight from the engine. Compare the difference per
// token with a real model's step time per token (BENCHMARKS.md).

const overheadStreams, overheadTokens = 16, 256

func BenchmarkServeTokens(b *testing.B) {
	ts := start(b, server.Config{}, &loader{cfg: engine.Config{MaxSeqs: overheadStreams}})
	if err := ts.Preload(context.Background()); err != nil {
		b.Fatal(err)
	}
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = overheadStreams
	body := `{"model":"tiny","prompt":"x","max_tokens":256,"ignore_eos":true,"temperature":0,"stream":true}`
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range overheadStreams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*overheadStreams*overheadTokens), "ns/token")
}

func BenchmarkEngineTokens(b *testing.B) {
	l := &loader{cfg: engine.Config{MaxSeqs: overheadStreams}}
	path, err := tinyPath()
	if err != nil {
		b.Fatal(err)
	}
	m, err := l.load(context.Background(), "tiny", path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { m.Engine.Close(); m.Close() }()
	prompt := m.Tokenizer.EncodePrompt("x")
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range overheadStreams {
			ch, err := m.Engine.Submit(context.Background(), engine.Request{Prompt: prompt, IgnoreEOS: true,
				Params: sample.Params{TopP: 1, RepetitionPenalty: 1, MaxTokens: overheadTokens}})
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range ch {
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*overheadStreams*overheadTokens), "ns/token")
}
