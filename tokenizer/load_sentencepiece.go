package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// LoadSentencePiece reads a SentencePiece model file (the ModelProto
// protobuf, "tokenizer.model") into a SentencePiece vocabulary: pieces,
// scores and types as stored (SentencePiece's piece types have llama.cpp's
// values), unk/bos/eos/pad ids from the trainer spec, the dummy-prefix flag
// from the normalizer spec. The decoder is a minimal hand-written protobuf
// reader for just these fields; every length is checked.
func LoadSentencePiece(path string) (*Vocab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return ParseSentencePiece(data)
}

// ModelProto field numbers (sentencepiece_model.proto).
const (
	spPieces         = 1  // ModelProto.pieces: repeated SentencePiece
	spTrainerSpec    = 2  // ModelProto.trainer_spec
	spNormalizerSpec = 3  // ModelProto.normalizer_spec
	spPiece          = 1  // SentencePiece.piece: string
	spScore          = 2  // SentencePiece.score: float
	spType           = 3  // SentencePiece.type: enum, default NORMAL
	spUnkID          = 40 // TrainerSpec.unk_id, default 0
	spBosID          = 41 // TrainerSpec.bos_id, default 1
	spEosID          = 42 // TrainerSpec.eos_id, default 2
	spPadID          = 43 // TrainerSpec.pad_id, default -1
	spAddDummyPrefix = 3  // NormalizerSpec.add_dummy_prefix, default true
)

// ParseSentencePiece is LoadSentencePiece on the file's contents.
func ParseSentencePiece(data []byte) (*Vocab, error) {
	v := NewVocab(ModelSPM)
	v.Pre = "default"
	unk, bos, eos, pad := int64(0), int64(1), int64(2), int64(-1)
	err := protoFields(data, func(field int, wire int, val uint64, msg []byte) error {
		switch {
		case field == spPieces && wire == wireBytes:
			piece, score, typ := "", float32(0), TypeNormal
			err := protoFields(msg, func(field, wire int, val uint64, b []byte) error {
				switch {
				case field == spPiece && wire == wireBytes:
					piece = string(b)
				case field == spScore && wire == wireFixed32:
					score = math.Float32frombits(uint32(val))
				case field == spType && wire == wireVarint:
					typ = TokenType(int32(val))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(v.Tokens) >= maxVocab {
				return fmt.Errorf("more than %d pieces", maxVocab)
			}
			v.Tokens = append(v.Tokens, piece)
			v.Scores = append(v.Scores, score)
			v.Types = append(v.Types, typ)
		case field == spTrainerSpec && wire == wireBytes:
			return protoFields(msg, func(field, wire int, val uint64, _ []byte) error {
				if wire != wireVarint {
					return nil
				}
				switch field {
				case spUnkID:
					unk = int64(int32(val))
				case spBosID:
					bos = int64(int32(val))
				case spEosID:
					eos = int64(int32(val))
				case spPadID:
					pad = int64(int32(val))
				}
				return nil
			})
		case field == spNormalizerSpec && wire == wireBytes:
			return protoFields(msg, func(field, wire int, val uint64, _ []byte) error {
				if field == spAddDummyPrefix && wire == wireVarint {
					v.AddSpacePrefix = val != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tokenizer: sentencepiece model: %w", err)
	}
	if len(v.Tokens) == 0 {
		return nil, fmt.Errorf("tokenizer: sentencepiece model has no pieces")
	}
	n := int64(len(v.Tokens))
	id := func(x int64) int32 {
		if x < 0 || x >= n {
			return -1
		}
		return int32(x)
	}
	v.UNK, v.BOS, v.EOS, v.PAD = id(unk), id(bos), id(eos), id(pad)
	v.AddBOS = v.BOS >= 0
	ids, err := v.textIndex()
	if err != nil {
		return nil, err
	}
	v.resolveSpecials(ids)
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// protoFields walks the fields of one protobuf message, calling fn with each
// field's number and wire type, and its value: val for varint and fixed
// fields, b for length-delimited ones (a sub-slice of data).
func protoFields(data []byte, fn func(field, wire int, val uint64, b []byte) error) error {
	for len(data) > 0 {
		key, n := binary.Uvarint(data)
		if n <= 0 {
			return fmt.Errorf("bad field key")
		}
		data = data[n:]
		field, wire := int(key>>3), int(key&7)
		if field == 0 || key>>3 > math.MaxInt32 {
			return fmt.Errorf("bad field number %d", key>>3)
		}
		var val uint64
		var b []byte
		switch wire {
		case wireVarint:
			val, n = binary.Uvarint(data)
			if n <= 0 {
				return fmt.Errorf("field %d: bad varint", field)
			}
			data = data[n:]
		case wireFixed64:
			if len(data) < 8 {
				return fmt.Errorf("field %d: truncated", field)
			}
			val, data = binary.LittleEndian.Uint64(data), data[8:]
		case wireFixed32:
			if len(data) < 4 {
				return fmt.Errorf("field %d: truncated", field)
			}
			val, data = uint64(binary.LittleEndian.Uint32(data)), data[4:]
		case wireBytes:
			l, n := binary.Uvarint(data)
			if n <= 0 || l > uint64(len(data)-n) {
				return fmt.Errorf("field %d: bad length", field)
			}
			b, data = data[n:n+int(l)], data[n+int(l):]
		default:
			return fmt.Errorf("field %d: unsupported wire type %d", field, wire)
		}
		if err := fn(field, wire, val, b); err != nil {
			return err
		}
	}
	return nil
}
