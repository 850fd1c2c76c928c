// Package kvevents publishes the block manager's prefix-cache changes
// (kvcache.Event) as llm-d's / vLLM's KV-cache events, so llm-d's precise
// prefix-cache scorer can route each request to the replica that holds
// its prefix.
//
// # Wire format
//
// Sources of truth: the consumer, llm-d-kv-cache v0.9.0 (the version
// llm-d-router v0.9.0 pins), pkg/kvevents/zmq_subscriber.go and
// pkg/kvevents/engineadapter/{vllm_adapter,common}.go; the producer it
// mirrors, vLLM's vllm/distributed/kv_events.py (EventBatch, BlockStored,
// BlockRemoved, AllBlocksCleared: msgspec Structs with array_like=True,
// omit_defaults=True, tag=True; ZmqEventPublisher).
//
// One ZMQ message per batch, on a PUB socket, of exactly three frames:
//
//	frame 0  topic    "kv@<host:port>@<model>"   the consumer splits on '@':
//	                                             pod id = host:port, model name
//	frame 1  sequence uint64, 8 bytes big endian, +1 per batch from 0
//	frame 2  payload  msgpack EventBatch
//
// EventBatch is a msgpack array of exactly three elements [ts, events,
// data_parallel_rank]: llm-d decodes it into a positional struct of three
// fields with github.com/vmihailenco/msgpack/v5, which rejects an array of
// any other length ("number of fields in array-encoded struct has
// changed"), so the rank is sent as nil (kiln has one rank; llm-d's own
// test fixture sends nil) rather than omitted. ts is float64 seconds since
// the Unix epoch, events an array of tagged events, each an array whose
// first element is the class name (the event arrays are read by position
// with length guards, so their trailing fields may vary):
//
//	["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium]
//	    block_hashes       [uint64 ...]   one per full block, in chain order
//	    parent_block_hash  uint64 | nil   hash of the block before the first one; nil for a
//	                                      sequence's first block
//	    token_ids          [uint ...]     len(block_hashes) * block_size token ids
//	    block_size         uint           tokens per block
//	    lora_id            nil            no adapters
//	    medium             "GPU"          the consumer lower-cases it into its device tier
//	["BlockRemoved", block_hashes, medium]
//	["AllBlocksCleared"]
//
// Hashes are always encoded as msgpack uint64 (0xcf + 8 bytes big endian),
// never in a shorter integer form: the consumer decodes into interface
// values and accepts only uint64, int64 or bytes as a hash (a small hash
// packed as a fixint would decode as int8 and be rejected).
//
// # Hashes
//
// The hashes sent are kiln's block hashes (kvcache's FNV-1a chain) XORed
// with a salt from the model name (Publisher.Stream says why). They need
// not match anything on the router's side: llm-d recomputes its own block keys from token_ids
// (with its tokenProcessorConfig block size and hash seed) and keeps the
// engine's hashes only as opaque keys mapping to them, for BlockRemoved and
// for parent lookups. What it needs is consistency: a BlockStored's parent
// hash must be one this replica announced earlier (else the consumer drops
// the event), and a hash must not be 0 (the consumer reads a 0 parent as
// "no parent"; an FNV chain hash is 0 with probability 2^-64).
//
// Block size: llm-d splits token_ids into its own blocks of its
// tokenProcessorConfig blockSize and maps engine hashes to those keys by
// the ratio of their counts, and a BlockStored shorter than one of its
// blocks yields no key at all. So the router's blockSize should equal
// kiln's (--block-size), or divide it. Chained blocks stored in one step
// are sent as one BlockStored (as vLLM does per request), which keeps
// that ratio whole.
//
// # Endpoint
//
// As vLLM's ZmqEventPublisher: an endpoint with '*' or "::" in it, or an
// ipc:// one, is bound (the default tcp://*:5557, which llm-d's pod
// discovery dials at <pod IP>:5557); any other is connected to (a
// centralized subscriber that binds). PUB drops messages for subscribers
// that are not connected yet, so a router that joins late learns only
// later changes; vLLM's replay socket is not implemented.
//
// # Running it with llm-d
//
//	kiln serve --model M --host 0.0.0.0 --port 8000 \
//	    --kv-events-endpoint 'tcp://*:5557' --kv-events-pod <pod IP>:8000
//
// and in the endpoint picker, the precise-prefix-cache scorer/producer with
// tokenProcessorConfig {blockSize: <kiln's --block-size, 16 by default>}
// and kvEventsConfig {discoverPods: true, podDiscoveryConfig: {socketPort:
// 5557}}: it dials tcp://<pod IP>:5557 and files the events under the pod
// id of the topic, which must be the "<address>:<port>" the picker knows
// the endpoint by (its producer compares against exactly that string).
// AllBlocksCleared clears the whole pod id in llm-d (every model kiln
// serves there), so with several models one's unload forgets the others'
// blocks until they are stored again.
package kvevents
