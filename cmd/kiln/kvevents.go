package main

import (
	"flag"
	"fmt"

	"kiln/engine"
	"kiln/kvevents"
)

// kvEventFlags are serve's --kv-events-* flags: the prefix-cache events
// llm-d's precise prefix scorer routes by (package kvevents).
type kvEventFlags struct {
	endpoint, pod *string
	pub           *kvevents.Publisher
	addr          string // the HTTP listen address: the default pod id
}

func addKVEventFlags(fs *flag.FlagSet) *kvEventFlags {
	return &kvEventFlags{
		endpoint: fs.String("kv-events-endpoint", "", "publish KV-cache events for llm-d on this ZMQ endpoint, e.g. tcp://*:5557 (bound; tcp://HOST:PORT connects to a subscriber)"),
		pod:      fs.String("kv-events-pod", "", "HOST:PORT naming this replica in the event topic kv@HOST:PORT@MODEL, as the router addresses it (default: the listen address)"),
	}
}

// open starts the publisher when --kv-events-endpoint is set; addr is the
// address kiln serve listens on.
func (k *kvEventFlags) open(addr string) error {
	k.addr = addr
	if *k.pod != "" {
		k.addr = *k.pod
	}
	if *k.endpoint == "" {
		return nil
	}
	pub, err := kvevents.New(*k.endpoint, kvevents.Options{})
	if err != nil {
		return fmt.Errorf("--kv-events-endpoint: %w", err)
	}
	k.pub = pub
	return nil
}

// stream is the event sink of a loaded model (nil without a publisher)
// and what to do once its engine has stopped (announce its blocks gone).
func (k *kvEventFlags) stream(model string, blockSize int) (engine.KVEventSink, func(), error) {
	if k.pub == nil {
		return nil, func() {}, nil
	}
	topic, err := kvevents.Topic(k.addr, model)
	if err != nil {
		return nil, nil, err
	}
	s, err := k.pub.Stream(topic, blockSize)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Clear, nil
}

func (k *kvEventFlags) close() {
	if k.pub != nil {
		k.pub.Close()
	}
}
