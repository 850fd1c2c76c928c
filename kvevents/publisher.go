package kvevents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"

	"kiln/kvcache"
)

// Topic is the topic frame llm-d expects: "kv@<host:port>@<model>", where
// host:port names the replica as the router knows it (llm-d takes it as
// the pod identifier) and model is the served model name. Neither may
// contain '@' (the consumer splits on it).
func Topic(hostPort, model string) (string, error) {
	if hostPort == "" || model == "" || strings.Contains(hostPort, "@") || strings.Contains(model, "@") {
		return "", fmt.Errorf("kvevents: topic needs a host:port and a model name without '@' (got %q, %q)", hostPort, model)
	}
	return "kv@" + hostPort + "@" + model, nil
}

// Options tune a Publisher; the zero value is usable.
type Options struct {
	// MaxPending caps the events a Stream holds while the sender is behind
	// (default 1<<16); past it they are dropped and counted (Stats).
	MaxPending int
	// SendTimeout bounds one send to the subscribers (default 5s).
	SendTimeout time.Duration
	// Now is the batch timestamp's clock (default time.Now).
	Now func() time.Time
	// Linger is how long Close lets the last messages go out (default
	// 200ms), like ZMQ_LINGER: zmq4's Send only queues a message, and its
	// Close drops what is still queued.
	Linger time.Duration
}

// Publisher owns a ZMQ PUB socket and a sender goroutine that encodes and
// sends batches, so a slow network never stalls an engine. Each served
// model publishes through its own Stream (its topic, its block size); the
// sequence frame counts the publisher's messages, as vLLM's does.
type Publisher struct {
	opts Options
	sock zmq4.Socket

	mu     sync.Mutex // guards queue sends against Close
	closed bool
	queue  chan batch
	wg     sync.WaitGroup
	cancel context.CancelFunc

	sent, failed, dropped atomic.Int64
	lastSend              time.Time // sender goroutine; read by Close after it ends
}

// batch is one message to send.
type batch struct {
	topic     []byte
	blockSize int
	events    []kvcache.Event
}

// New opens a PUB socket on endpoint: bound when it has '*' or "::" in it
// or is ipc://, else connected to, as vLLM does.
func New(endpoint string, opts Options) (*Publisher, error) {
	if opts.MaxPending <= 0 {
		opts.MaxPending = 1 << 16
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Linger <= 0 {
		opts.Linger = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	// zmq4's automatic reconnect re-dials the socket's endpoint whenever a
	// peer goes away: right for a connected socket (the subscriber
	// restarts), wrong for a bound one (it would dial "tcp://*:5557"), and
	// it races with Close (llm-d turns it off in its subscriber for that
	// reason). So only a connected publisher uses it.
	isBind := bind(endpoint)
	sock := zmq4.NewPub(ctx, zmq4.WithTimeout(opts.SendTimeout), zmq4.WithAutomaticReconnect(!isBind))
	var err error
	if isBind {
		err = sock.Listen(endpoint)
	} else {
		err = sock.Dial(endpoint)
	}
	if err != nil {
		cancel()
		sock.Close()
		return nil, fmt.Errorf("kvevents: open %s: %w", endpoint, err)
	}
	p := &Publisher{opts: opts, sock: sock, queue: make(chan batch, 16), cancel: cancel}
	p.wg.Add(1)
	go p.send()
	return p, nil
}

// bind reports whether endpoint is one to bind rather than connect to:
// vLLM's ZmqEventPublisher rule.
func bind(endpoint string) bool {
	return strings.Contains(endpoint, "*") || strings.Contains(endpoint, "::") ||
		strings.HasPrefix(endpoint, "ipc://") || strings.HasPrefix(endpoint, "inproc://")
}

// Addr is the address the socket listens on (for a bound endpoint; nil
// for a connected one): the real port when the endpoint asked for port 0.
func (p *Publisher) Addr() net.Addr { return p.sock.Addr() }

// Stream is one model's events: its topic (see Topic) and its pool's
// block size. Observe and Flush belong to the goroutine that owns the
// pool (the engine loop); a Stream satisfies engine.KVEventSink.
type Stream struct {
	p         *Publisher
	topic     []byte
	blockSize int
	salt      uint64          // XORed into every hash: the model's (see Stream)
	pending   []kvcache.Event // events since the last Flush
}

// Stream returns a stream publishing under topic the events of a pool
// with blocks of blockSize tokens. Its hashes are the pool's XORed with a
// salt from the topic's model name: kiln's chain hash does not depend on
// the model, and llm-d keeps one engine-key map for every pod and model,
// so two models caching the same tokens would otherwise share keys (and
// a BlockStored's parent could resolve to the other model's block).
// XOR keeps distinct hashes distinct and parent links intact.
func (p *Publisher) Stream(topic string, blockSize int) (*Stream, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("kvevents: block size %d", blockSize)
	}
	if topic == "" {
		return nil, errors.New("kvevents: empty topic")
	}
	model := topic[strings.LastIndexByte(topic, '@')+1:]
	h := fnv.New64a()
	h.Write([]byte(model))
	return &Stream{p: p, topic: []byte(topic), blockSize: blockSize, salt: h.Sum64()}, nil
}

// Observe records one pool event (kvcache.Pool.SetObserver(s.Observe)),
// copying its tokens.
func (s *Stream) Observe(e kvcache.Event) {
	e.Tokens = slices.Clone(e.Tokens)
	e.Hash ^= s.salt
	if e.HasParent {
		e.Parent ^= s.salt
	}
	s.pending = append(s.pending, e)
}

// Flush hands the events observed since the last Flush to the sender, as
// one batch; with none, it does nothing. If the sender is behind, the
// events wait for the next Flush (merged into its batch) up to
// Options.MaxPending events, past which they are dropped and counted:
// the router then lacks some changes until the blocks are stored again.
// After the publisher's Close, events are dropped.
func (s *Stream) Flush() {
	if len(s.pending) == 0 {
		return
	}
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		select {
		case p.queue <- batch{s.topic, s.blockSize, s.pending}:
			s.pending = nil
			return
		default:
			if len(s.pending) <= p.opts.MaxPending {
				return
			}
		}
	}
	p.dropped.Add(int64(len(s.pending)))
	s.pending = s.pending[:0]
}

// Clear publishes AllBlocksCleared: the model is unloaded and its blocks
// are gone. Call it once the engine has stopped.
func (s *Stream) Clear() {
	s.pending = append(s.pending[:0], kvcache.Event{Kind: kvcache.AllBlocksCleared})
	s.Flush()
}

// send is the sender goroutine: one ZMQ message per batch, with the
// sequence number counting messages from 0.
func (p *Publisher) send() {
	defer p.wg.Done()
	var seq uint64
	var payload []byte
	for b := range p.queue {
		t := p.opts.Now()
		ts := float64(t.UnixNano()) / 1e9
		var err error
		payload, err = AppendBatch(payload[:0], ts, b.events, b.blockSize)
		if err != nil {
			p.failed.Add(1)
			continue
		}
		msg := zmq4.NewMsgFrom(b.topic, binary.BigEndian.AppendUint64(nil, seq), slices.Clone(payload))
		seq++
		if err := p.sock.Send(msg); err != nil {
			p.failed.Add(1)
			continue
		}
		p.sent.Add(1)
		p.lastSend = time.Now()
	}
}

// Stats are the publisher's counters: batches sent, batches whose
// encoding or send failed, and events dropped because the sender was
// behind or closed. Safe from any goroutine.
func (p *Publisher) Stats() (sent, failed, dropped int64) {
	return p.sent.Load(), p.failed.Load(), p.dropped.Load()
}

// Close sends what was flushed (each send bounded by
// Options.SendTimeout), stops the sender and closes the socket. Call it
// after the engines using its streams have stopped; later flushes drop
// their events.
func (p *Publisher) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.queue)
	p.mu.Unlock()
	p.wg.Wait()
	if !p.lastSend.IsZero() {
		time.Sleep(time.Until(p.lastSend.Add(p.opts.Linger)))
	}
	err := p.sock.Close()
	p.cancel()
	return err
}
