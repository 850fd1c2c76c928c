package kvevents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
	// MaxPending caps the events held while the sender is behind (default
	// 1<<16); past it whole batches are dropped and counted (Dropped).
	MaxPending int
	// SendTimeout bounds one send to the subscribers (default 5s).
	SendTimeout time.Duration
	// Now is the batch timestamp's clock (default time.Now).
	Now func() time.Time
}

// Publisher sends a pool's events to llm-d over a ZMQ PUB socket. Observe
// and Flush belong to the goroutine that owns the pool (the engine loop):
// Observe collects the events of a step, Flush hands them to a sender
// goroutine that encodes and sends them as one batch, so a slow network
// never stalls the engine.
type Publisher struct {
	topic     []byte
	blockSize int
	opts      Options
	sock      zmq4.Socket

	pending []kvcache.Event // owner goroutine only: events since the last Flush
	queue   chan []kvcache.Event
	wg      sync.WaitGroup
	cancel  context.CancelFunc
	once    sync.Once

	sent, dropped, failed atomic.Int64
}

// New opens a PUB socket on endpoint (bound when it has '*' or "::" in it
// or is ipc://, else connected to, as vLLM does) publishing under topic
// (see Topic) the events of a pool with blocks of blockSize tokens.
func New(endpoint, topic string, blockSize int, opts Options) (*Publisher, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("kvevents: block size %d", blockSize)
	}
	if topic == "" {
		return nil, errors.New("kvevents: empty topic")
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 1 << 16
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
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
	p := &Publisher{
		topic:     []byte(topic),
		blockSize: blockSize,
		opts:      opts,
		sock:      sock,
		queue:     make(chan []kvcache.Event, 16),
		cancel:    cancel,
	}
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

// Observe records one pool event (kvcache.Pool.SetObserver(p.Observe)),
// copying its tokens. Owner goroutine only.
func (p *Publisher) Observe(e kvcache.Event) {
	e.Tokens = slices.Clone(e.Tokens)
	p.pending = append(p.pending, e)
}

// Flush hands the events observed since the last Flush to the sender, as
// one batch; with none, it does nothing. If the sender is behind, the
// events wait for the next Flush (merged into its batch) up to
// Options.MaxPending events, past which they are dropped and counted:
// the router then lacks some changes until the blocks are stored again.
// Owner goroutine only.
func (p *Publisher) Flush() {
	if len(p.pending) == 0 {
		return
	}
	select {
	case p.queue <- p.pending:
		p.pending = nil
	default:
		if len(p.pending) > p.opts.MaxPending {
			p.dropped.Add(int64(len(p.pending)))
			p.pending = p.pending[:0]
		}
	}
}

// send is the sender goroutine: one ZMQ message per batch, with the
// sequence number counting batches from 0.
func (p *Publisher) send() {
	defer p.wg.Done()
	var seq uint64
	var payload []byte
	for events := range p.queue {
		t := p.opts.Now()
		ts := float64(t.UnixNano()) / 1e9
		var err error
		payload, err = AppendBatch(payload[:0], ts, events, p.blockSize)
		if err != nil {
			p.failed.Add(1)
			continue
		}
		msg := zmq4.NewMsgFrom(p.topic, binary.BigEndian.AppendUint64(nil, seq), slices.Clone(payload))
		seq++
		if err := p.sock.Send(msg); err != nil {
			p.failed.Add(1)
			continue
		}
		p.sent.Add(1)
	}
}

// Stats are the publisher's counters: batches sent, batches whose
// encoding or send failed, and events dropped because the sender was
// behind. Safe from any goroutine.
func (p *Publisher) Stats() (sent, failed, dropped int64) {
	return p.sent.Load(), p.failed.Load(), p.dropped.Load()
}

// Close flushes what was observed, waits for the sender to finish (each
// send bounded by Options.SendTimeout) and closes the socket. Owner
// goroutine; the publisher is unusable afterwards.
func (p *Publisher) Close() error {
	var err error
	p.once.Do(func() {
		if len(p.pending) > 0 {
			p.queue <- p.pending
			p.pending = nil
		}
		close(p.queue)
		p.wg.Wait()
		err = p.sock.Close()
		p.cancel()
	})
	return err
}
