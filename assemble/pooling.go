package assemble

// PoolingType is the GGUF's <arch>.pooling_type (llama.cpp's enum: 0 none,
// 1 mean, 2 cls, 3 last, 4 rank), for /v1/embeddings; false when the
// model is not a GGUF or the key is absent (decoder models rarely set it).
func (a *Assembly) PoolingType() (int, bool) {
	if a.file == nil {
		return 0, false
	}
	v, ok := a.file.Int(a.file.Architecture() + ".pooling_type")
	return int(v), ok
}
