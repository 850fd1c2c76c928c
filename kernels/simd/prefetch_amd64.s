//go:build amd64 && !purego

#include "textflag.h"

// func prefetchAVX2(p *byte, n int)
// One PREFETCHT0 per 64-byte line of [p, p+n), four lines per iteration.
// Prefetches never fault, so a last partial group may run past the end.
TEXT ·prefetchAVX2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	ADDQ $255, CX
	SHRQ $8, CX

pfloop:
	PREFETCHT0 (SI)
	PREFETCHT0 64(SI)
	PREFETCHT0 128(SI)
	PREFETCHT0 192(SI)
	ADDQ       $256, SI
	DECQ       CX
	JNZ        pfloop
	RET
