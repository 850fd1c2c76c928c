package engine

import "kiln/model"

// kvType is the element type of the engine's KV stores (the target's and
// the draft's): F32 when F32KV says so, else KVType.
func (c *Config) kvType() model.KVType {
	if c.F32KV {
		return model.KVF32
	}
	return c.KVType
}

// KVStoreType is the element type the engine's KV stores use (kvType, for
// callers sizing a pool before New).
func (c Config) KVStoreType() model.KVType { return c.kvType() }
