package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"

	"kiln/internal/testutil"
)

// TestServeKVEvents runs `kiln serve --kv-events-endpoint` against a ZMQ
// SUB socket standing in for llm-d's centralized subscriber: requests make
// BlockStored batches under kv@POD@MODEL, and shutting down (which
// unloads the model) announces AllBlocksCleared.
func TestServeKVEvents(t *testing.T) {
	m := testutil.SharedModel(t, "stories260K.gguf")
	zctx, zcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer zcancel()
	sub := zmq4.NewSub(zctx)
	defer sub.Close()
	if err := sub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, "kv@"); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan zmq4.Msg, 256)
	go func() {
		for {
			msg, err := sub.Recv()
			if err != nil {
				close(msgs)
				return
			}
			msgs <- msg
		}
	}()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrs := make(chan string, 1)
	oldSig, oldListen := serveSignals, serveListening
	serveSignals = func() (context.Context, context.CancelFunc) { return ctx, stop }
	serveListening = func(addr string) { addrs <- addr }
	defer func() { serveSignals, serveListening = oldSig, oldListen }()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe([]string{"--model", "stories=" + m, "--port", "0", "--kv-cache-memory", "64MiB",
			"--kv-events-endpoint", "tcp://" + sub.Addr().String(), "--kv-events-pod", "10.1.2.3:8000"}, io.Discard, &stderr)
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, stderr.String())
	}
	const topic = "kv@10.1.2.3:8000@stories"
	// tags decodes a payload's event tags, checking each BlockStored carries
	// block_size tokens per hash.
	tags := func(msg zmq4.Msg) []string {
		t.Helper()
		if len(msg.Frames) != 3 || string(msg.Frames[0]) != topic || len(msg.Frames[1]) != 8 {
			t.Fatalf("frames %q", msg.Frames)
		}
		var batch []any
		if err := msgpack.Unmarshal(msg.Frames[2], &batch); err != nil || len(batch) != 3 {
			t.Fatalf("payload %x: %v", msg.Frames[2], err)
		}
		var out []string
		for _, ev := range batch[1].([]any) {
			f := ev.([]any)
			out = append(out, f[0].(string))
			if f[0] == "BlockStored" {
				hashes, tokens := f[1].([]any), f[3].([]any)
				if bs := fmt.Sprint(f[4]); fmt.Sprint(len(tokens)/len(hashes)) != bs || len(tokens)%len(hashes) != 0 {
					t.Errorf("BlockStored: %d tokens for %d hashes, block size %s", len(tokens), len(hashes), bs)
				}
			}
		}
		return out
	}
	// PUB drops what it sends before the subscription reaches it: new
	// prompts until a batch arrives.
	var got []string
	for i := 0; len(got) == 0; i++ {
		if i == 20 {
			t.Fatalf("no KV event after %d requests\n%s", i, stderr.String())
		}
		body := fmt.Sprintf(`{"model":"stories","prompt":"Request %d: once upon a time","max_tokens":40,"temperature":0,"ignore_eos":true}`, i)
		resp, err := http.Post("http://"+addr+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		for len(msgs) > 0 {
			got = append(got, tags(<-msgs)...)
		}
		if len(got) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if got[0] != "BlockStored" {
		t.Errorf("events %v, want BlockStored first", got)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s")
	}
	for {
		select {
		case msg, ok := <-msgs:
			if !ok {
				t.Fatal("subscriber closed before AllBlocksCleared")
			}
			if tg := tags(msg); len(tg) > 0 && tg[len(tg)-1] == "AllBlocksCleared" {
				return
			}
		case <-zctx.Done():
			t.Fatal("no AllBlocksCleared after shutdown")
		}
	}
}
