package kvevents

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"kiln/kvcache"
)

// TestGoldenBatch pins the bytes of one batch, written out by hand from
// the msgpack spec and the format in the package comment.
func TestGoldenBatch(t *testing.T) {
	events := []kvcache.Event{
		{Kind: kvcache.BlockStored, Hash: 0x0102030405060708, Tokens: []int32{1, 2}},
		{Kind: kvcache.BlockStored, Hash: 0x1112131415161718, Parent: 0x0102030405060708, HasParent: true, Tokens: []int32{300, 4}},
		{Kind: kvcache.BlockRemoved, Hash: 5},
		{Kind: kvcache.AllBlocksCleared},
	}
	got, err := AppendBatch(nil, 1.5, events, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"93",                 // EventBatch: [ts, events, data_parallel_rank]
		"cb3ff8000000000000", // ts 1.5, float64
		"93",                 // 3 events: the two chained blocks merge into one
		"97", "ab" + hex.EncodeToString([]byte("BlockStored")),
		"92", "cf0102030405060708", "cf1112131415161718", // block_hashes, uint64 always
		"c0",                             // parent_block_hash: none
		"94", "01", "02", "cd012c", "04", // token_ids
		"02",                                     // block_size
		"c0",                                     // lora_id
		"a3" + hex.EncodeToString([]byte("GPU")), // medium
		"93", "ac" + hex.EncodeToString([]byte("BlockRemoved")),
		"91", "cf0000000000000005",
		"a3" + hex.EncodeToString([]byte("GPU")),
		"91", "b0" + hex.EncodeToString([]byte("AllBlocksCleared")),
		"c0", // data_parallel_rank: none
	}, "")
	if hex.EncodeToString(got) != want {
		t.Errorf("batch\n got %x\nwant %s", got, want)
	}
	// Appending keeps what dst held.
	again, err := AppendBatch([]byte{0xee}, 1.5, events, 2)
	if err != nil || !bytes.Equal(again[1:], got) || again[0] != 0xee {
		t.Errorf("AppendBatch onto a prefix: %x, %v", again, err)
	}
}

func TestBatchRejectsBadEvents(t *testing.T) {
	for name, c := range map[string]struct {
		events    []kvcache.Event
		blockSize int
	}{
		"zero block size":   {nil, 0},
		"short block":       {[]kvcache.Event{{Kind: kvcache.BlockStored, Hash: 1, Tokens: []int32{1}}}, 2},
		"negative token id": {[]kvcache.Event{{Kind: kvcache.BlockStored, Hash: 1, Tokens: []int32{1, -3}}}, 2},
		"unknown kind":      {[]kvcache.Event{{Kind: 99}}, 2},
		"zero kind":         {[]kvcache.Event{{}}, 2},
	} {
		if b, err := AppendBatch(nil, 0, c.events, c.blockSize); err == nil || !strings.HasPrefix(err.Error(), "kvevents: ") || len(b) != 0 {
			t.Errorf("%s: %x, err %v", name, b, err)
		}
	}
}

// TestLongForms crosses the size boundaries of msgpack's array, string and
// integer forms.
func TestLongForms(t *testing.T) {
	for _, c := range []struct {
		got, want []byte
	}{
		{appendArrayHeader(nil, 15), []byte{0x9f}},
		{appendArrayHeader(nil, 16), []byte{0xdc, 0, 16}},
		{appendArrayHeader(nil, 70000), []byte{0xdd, 0, 1, 0x11, 0x70}},
		{appendString(nil, strings.Repeat("x", 31))[:1], []byte{0xbf}},
		{appendString(nil, strings.Repeat("x", 32))[:2], []byte{0xd9, 32}},
		{appendString(nil, strings.Repeat("x", 256))[:3], []byte{0xda, 1, 0}},
		{appendString(nil, strings.Repeat("x", 70000))[:5], []byte{0xdb, 0, 1, 0x11, 0x70}},
		{appendUint(nil, 127), []byte{0x7f}},
		{appendUint(nil, 128), []byte{0xcc, 0x80}},
		{appendUint(nil, 65535), []byte{0xcd, 0xff, 0xff}},
		{appendUint(nil, 65536), []byte{0xce, 0, 1, 0, 0}},
		{appendUint(nil, 1<<32), []byte{0xcf, 0, 0, 0, 1, 0, 0, 0, 0}},
		{appendHash(nil, 0), []byte{0xcf, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%x, want %x", c.got, c.want)
		}
	}
}
