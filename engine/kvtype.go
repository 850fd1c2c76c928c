package engine

import "kiln/kernels"

// kvType is the element type of the engine's KV stores (the target's and
// the draft's): F32 when F32KV says so, else KVType.
func (c *Config) kvType() kernels.KVType {
	if c.F32KV {
		return kernels.KVF32
	}
	return c.KVType
}

// KVStoreType is the element type the engine's KV stores use (kvType, for
// callers sizing a pool before New).
func (c Config) KVStoreType() kernels.KVType { return c.kvType() }
