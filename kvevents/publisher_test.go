package kvevents

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"kiln/kvcache"
)

func TestTopic(t *testing.T) {
	if got, err := Topic("10.0.0.1:8000", "stories260K"); err != nil || got != "kv@10.0.0.1:8000@stories260K" {
		t.Errorf("Topic: %q, %v", got, err)
	}
	for _, c := range [][2]string{{"", "m"}, {"h:1", ""}, {"a@b:1", "m"}, {"h:1", "m@x"}} {
		if _, err := Topic(c[0], c[1]); err == nil {
			t.Errorf("Topic(%q, %q) accepted", c[0], c[1])
		}
	}
}

func TestBindOrConnect(t *testing.T) {
	for ep, want := range map[string]bool{
		"tcp://*:5557": true, "tcp://[::]:5557": true, "ipc:///tmp/kv": true,
		"tcp://10.0.0.2:5557": false, "tcp://epp:5557": false,
	} {
		if bind(ep) != want {
			t.Errorf("bind(%q) = %v", ep, !want)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	for _, ep := range []string{"nope://*:0", "tcp//*:0", "tcp://*:notaport"} {
		if p, err := New(ep, Options{}); err == nil {
			p.Close()
			t.Errorf("New(%q) accepted", ep)
		}
	}
	p, err := New("tcp://*:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Stream("kv@h:1@m", 0); err == nil {
		t.Error("a stream with block size 0 accepted")
	}
	if _, err := p.Stream("", 16); err == nil {
		t.Error("a stream with no topic accepted")
	}
}

// TestPublisherOverZMQ runs a real pool's events through the publisher to
// a zmq4 SUB socket on loopback, subscribed with llm-d's filter "kv@",
// and reads the three frames as llm-d's zmqSubscriber does.
func TestPublisherOverZMQ(t *testing.T) {
	topic, _ := Topic("127.0.0.1:8000", "tiny")
	clock := time.Unix(1764154800, 500_000_000)
	pub, err := New("tcp://*:0", Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	st, err := pub.Stream(topic, 2)
	if err != nil {
		t.Fatal(err)
	}
	port := pub.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Dial(fmt.Sprintf("tcp://127.0.0.1:%d", port)); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, "kv@"); err != nil {
		t.Fatal(err)
	}

	pool, err := kvcache.New(8, 2)
	if err != nil {
		t.Fatal(err)
	}
	pool.SetObserver(st.Observe)

	// PUB drops what is sent before the subscription reaches it: publish a
	// reset every 20ms until one arrives.
	frames := make(chan [][]byte, 64)
	go func() {
		for {
			msg, err := sub.Recv()
			if err != nil {
				close(frames)
				return
			}
			frames <- msg.Frames
		}
	}()
	recv := func() [][]byte {
		t.Helper()
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("subscriber closed")
			}
			return f
		case <-ctx.Done():
			t.Fatal("no message within 20s")
		}
		return nil
	}
	var first [][]byte
	for first == nil {
		pool.ResetPrefixCache()
		st.Flush()
		select {
		case first = <-frames:
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("the subscriber never received a batch")
		}
	}
	for len(frames) > 0 { // resets still in flight
		first = <-frames
	}
	if len(first) != 3 || string(first[0]) != topic || len(first[1]) != 8 {
		t.Fatalf("frames %q", first)
	}
	seq := binary.BigEndian.Uint64(first[1])

	// One step: a 5-token prompt fills two blocks of 2.
	if _, ok := pool.Allocate("a", []int32{7, 8, 9, 10, 11}, 5); !ok {
		t.Fatal("allocate refused")
	}
	if err := pool.Commit("a", []int32{7, 8, 9, 10, 11}); err != nil {
		t.Fatal(err)
	}
	st.Flush()
	f := recv()
	if len(f) != 3 || string(f[0]) != topic || binary.BigEndian.Uint64(f[1]) != seq+1 {
		t.Fatalf("frames %q (after sequence %d)", f, seq)
	}
	ts, events, err := consume(f[2])
	if err != nil {
		t.Fatal(err)
	}
	if ts != 1764154800.5 || len(events) != 2 || events[0].HasParent || !events[1].HasParent ||
		events[1].Parent != events[0].Hash || fmt.Sprint(events[0].Tokens, events[1].Tokens) != "[7 8] [9 10]" {
		t.Errorf("ts %v, events %+v", ts, events)
	}
	if strings.Count(fmt.Sprintf("%x", f[2]), "ab426c6f636b53746f726564") != 1 {
		t.Errorf("the two chained blocks did not go out as one BlockStored: %x", f[2])
	}
	// A second model's stream shares the socket and the sequence.
	topic2, _ := Topic("127.0.0.1:8000", "other")
	st2, err := pub.Stream(topic2, 16)
	if err != nil {
		t.Fatal(err)
	}
	st2.Clear()
	f = recv()
	if string(f[0]) != topic2 || binary.BigEndian.Uint64(f[1]) != seq+2 {
		t.Fatalf("second stream's frames %q", f)
	}
	if _, events, err := consume(f[2]); err != nil || len(events) != 1 || events[0].Kind != kvcache.AllBlocksCleared {
		t.Errorf("Clear sent %+v (%v)", events, err)
	}
	if sent, failed, dropped := pub.Stats(); sent < 3 || failed != 0 || dropped != 0 {
		t.Errorf("stats: sent %d failed %d dropped %d", sent, failed, dropped)
	}
	st.Flush() // nothing new: no message
	select {
	case f := <-frames:
		t.Errorf("an empty flush sent %q", f)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestFlushKeepsEventsWhileBehind: with the sender stalled, events wait
// for a later flush instead of being lost, up to MaxPending; after Close
// they are dropped, not sent on a closed queue.
func TestFlushKeepsEventsWhileBehind(t *testing.T) {
	p := &Publisher{queue: make(chan batch, 1), opts: Options{MaxPending: 3}}
	s := &Stream{p: p, topic: []byte("kv@h:1@m"), blockSize: 4}
	s.Observe(kvcache.Event{Kind: kvcache.AllBlocksCleared})
	s.Flush() // fills the queue
	s.Observe(kvcache.Event{Kind: kvcache.BlockRemoved, Hash: 1})
	s.Flush()
	s.Observe(kvcache.Event{Kind: kvcache.BlockRemoved, Hash: 2})
	s.Flush()
	if len(s.pending) != 2 {
		t.Fatalf("%d events pending, want 2 kept for the next flush", len(s.pending))
	}
	s.Observe(kvcache.Event{Kind: kvcache.BlockRemoved, Hash: 3})
	s.Observe(kvcache.Event{Kind: kvcache.BlockRemoved, Hash: 4})
	s.Flush()
	if _, _, dropped := p.Stats(); dropped != 4 || len(s.pending) != 0 {
		t.Errorf("past MaxPending: dropped %d, pending %d", dropped, len(s.pending))
	}
	<-p.queue
	s.Observe(kvcache.Event{Kind: kvcache.BlockRemoved, Hash: 5})
	s.Flush()
	if got := <-p.queue; len(got.events) != 1 || got.events[0].Hash != 5 || string(got.topic) != "kv@h:1@m" || got.blockSize != 4 {
		t.Errorf("after the queue drained: %+v", got)
	}
	p.mu.Lock()
	p.closed = true
	close(p.queue)
	p.mu.Unlock()
	s.Clear()
	if _, _, dropped := p.Stats(); dropped != 5 || len(s.pending) != 0 {
		t.Errorf("after close: dropped %d, pending %d", dropped, len(s.pending))
	}
}

// TestPublisherConnects: with an endpoint to connect to, the subscriber
// binds (llm-d's centralized mode) and the publisher dials it.
func TestPublisherConnects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, "kv@"); err != nil {
		t.Fatal(err)
	}
	topic, _ := Topic("127.0.0.1:8001", "tiny")
	pub, err := New("tcp://"+sub.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := pub.Stream(topic, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan zmq4.Msg, 1)
	go func() {
		msg, _ := sub.Recv()
		got <- msg
	}()
	for {
		st.Observe(kvcache.Event{Kind: kvcache.BlockRemoved, Hash: 77})
		st.Flush()
		select {
		case msg := <-got:
			if len(msg.Frames) != 3 || string(msg.Frames[0]) != topic {
				t.Fatalf("frames %q (err %v)", msg.Frames, msg.Err())
			}
			if _, events, err := consume(msg.Frames[2]); err != nil || len(events) == 0 || events[0].Hash != 77^st.salt {
				t.Errorf("events %+v, err %v", events, err)
			}
			if err := pub.Close(); err != nil {
				t.Error(err)
			}
			return
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("nothing received within 20s")
		}
	}
}

// TestStreamSalt: a stream's hashes depend on its model, not its pod, and
// keep the parent links.
func TestStreamSalt(t *testing.T) {
	p := &Publisher{queue: make(chan batch, 4), opts: Options{MaxPending: 8}}
	hashes := func(topic string) [2]uint64 {
		s, err := p.Stream(topic, 2)
		if err != nil {
			t.Fatal(err)
		}
		s.Observe(kvcache.Event{Kind: kvcache.BlockStored, Hash: 10, Tokens: []int32{1, 2}})
		s.Observe(kvcache.Event{Kind: kvcache.BlockStored, Hash: 11, Parent: 10, HasParent: true, Tokens: []int32{3, 4}})
		if s.pending[1].Parent != s.pending[0].Hash || s.pending[0].Hash == 10 {
			t.Errorf("%s: %+v", topic, s.pending)
		}
		return [2]uint64{s.pending[0].Hash, s.pending[1].Hash}
	}
	a, b, c := hashes("kv@h:1@m"), hashes("kv@h:2@m"), hashes("kv@h:1@other")
	if a != b || a == c {
		t.Errorf("same model on two pods %x %x; another model %x", a, b, c)
	}
}
