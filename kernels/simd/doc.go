// Package simd owns kiln's innermost vector primitives: dot products of one
// quantized weight row against one quantized activation row (ggml block
// layouts), float32/float16/bfloat16 dots, and the small float helpers that
// norms, softmax, attention and residuals are built from. On top of those:
//
//	gemm.go      GEMMs: a block of weight rows x many activation rows through
//	             register-tiled micro-kernels over repacked weight panels
//	             (prefill, batched decode), and 8-row decode kernels for one
//	             activation row; every output has the single-row dot's bits
//	quantact.go  the activation quantizers (Q8_0, Q8_K) in assembly, byte for
//	             byte quant's emulation of llama.cpp's
//	attn.go      attention and SwiGLU primitives with llama.cpp's FMA order
//	             (strided multi-row dots, value accumulation, softmax exp-sum)
//
// The long unrolled assembly of gemm_amd64.s and attn_amd64.s is generated
// by internal/asmgen (go generate); a test keeps the files up to date.
//
// Every primitive has a portable Go version (the reference, and the path on
// CPUs without the fast one) and, on amd64 with AVX2+FMA+F16C, an assembly
// version. Kernel sets (impl.go) are chosen once at start-up from the CPU's
// features: generic, avx2, and two sets that replace the int8 GEMMs and
// the Q8_0, Q5_K, Q6_K and Q4_K decode kernels with VPDPBUSD/VPDPWSSD kernels,
// avxvnni (VEX, 256-bit; gemmvex_dec_amd64.go) and avx512vnni (AVX-512
// F/BW/VL + AVX512-VNNI, gemmvnni.go); the environment variable
// KILN_KERNELS caps the choice (KILN_KERNELS=avx2 on an AVX-512 machine).
// Every set returns the same bits: the VNNI kernels change only how the
// exact integer block sums are computed. Impl reports the set in use,
// ImplReason why; SetImpl and ForceGeneric let tests and benchmarks pin a
// set, so that each fast kernel is checked against the portable one under
// every set the CPU runs.
//
// # Semantics
//
// Every dot a weight type's matrix product uses follows the float
// summation order of llama.cpp's AVX2 CPU kernels for that type and matrix
// shape (internal/llamaorder is the reference; it makes kiln's logits equal
// llama.cpp's): per block an exact integer dot of the quants, then float32
// folds with the block scales in llama.cpp's lanes and chains, fused
// multiply-adds where llama.cpp fuses them. The generic Go code uses fma32,
// an exactly rounded float32 FMA, and explicit float32 conversions
// elsewhere so that Go never fuses on its own; the AVX2 assembly performs
// the same roundings in the same order: all implementations, and the x4,
// GEMM and decode kernels of a type, return the same bits. Batch
// invariance follows: a row's result never depends on which kernel, tile
// or CPU computed it. The integer parts stay exact for every input byte
// (llama.cpp's VPSIGNB trick is not, for activation quants of -128).
// Q4_1, Q5_1 and Q5_K follow ggml_vec_dot_q4_1_q8_1, _q5_1_q8_1 and
// _q5_K_q8_K (AVX2; these types have no tinyBLAS or repacked path on x86):
// an 8-lane FMA chain of the block scales times the lane sums, plus a
// scalar FMA chain of the block minimums (m_w*s_x, or dmin times the exact
// min sum), hsum8(lanes) + that chain. (Until 2026-11 they folded in
// ggml's generic C order, which moved log-probs of 2-layer random models
// by 0.04-0.14 against llama.cpp.) DotQ5_KQ8_Kx4 keeps that order for
// each of its four activation rows (the chains run side by side), and
// GemmQ5_KQ8_K for every output of its panels (gemm_q5k.go).
// Q2_K and Q3_K follow ggml_vec_dot_q2_K_q8_K and _q3_K_q8_K (AVX2, every
// shape): one 8-lane FMA chain (Q2_K's min lanes enter it before each
// super-block's scaled lanes), hsum8; their x4 flavours likewise per row.
//
// Q8_0·Q8_0 (every flavour: single-row, x4, GEMM panels, decode kernel)
// follows llama.cpp's AVX2 order (ggml_vec_dot_q8_0_q8_0 and
// tinyBLAS_Q0_AVX, internal/llamaorder): eight float32 lanes, per block b
// and lane j L_j = fma(float32(dw*dx), float32(I_bj), L_j) with I_bj the
// exact sum over elements 4j..4j+3, result hsum8(L) =
// ((L0+L4)+(L2+L6)) + ((L1+L5)+(L3+L7)); the generic code uses an exactly
// rounded fma32, so again all implementations return the same bits.
//
// Q4_0 follows llama.cpp's AVX2 kernels, whose order depends on
// the weight matrix (internal/llamaorder is the spec). DotQ4_0Q8_0 and all
// its flavours (x4, GemmQ4_0Q8_0's panel and decode kernels) use the
// repacked q4_0_8x8 GEMM's order, for Rows%8 == 0: per block
// acc = fma(float(I_b), dw*dx, acc), dw*dx rounded first. DotQ4_0Q8_0Lanes
// (and x4), for Rows%8 != 0, uses tinyBLAS_Q0_AVX's: 8 lanes, lane j a
// fused chain over the 4-element sums of elements 4j..4j+3 of every block,
// then hsum8. The generic code uses fma32, an exactly rounded float32 FMA,
// so these too are the same bits on every implementation.
//
// Q4_K follows llama.cpp's exact orders, with fused multiply-adds
// (fma32 in the generic code, VFMADD in the assembly), bit for bit on
// every implementation: DotQ4_KQ8_K and its x4, GEMM and decode kernels
// compute the repacked q4_K_8x8 GEMM's order (per 64 elements, exact
// iacc/imin folded by two FMA chains; llama.cpp's choice for Rows%8 == 0),
// DotQ4_KQ8_KVec ggml_vec_dot_q4_K_q8_K's AVX2 lanes (for Rows%8 != 0).
//
// The weight float dots are bit-exact too, in llama.cpp's two orders
// (dotfloat.go spells them out). DotF32Lanes8, DotF16Lanes8, DotBF16Lanes8
// and their x4 flavours: llamafile tinyBLAS's 8 float32 lanes, lane j a
// fused chain over elements k ≡ j (mod 8), then hsum8; llama.cpp's order
// for weight matrices with Rows%4 == 0 and Cols%8 == 0. DotF32, DotF16,
// DotBF16: ggml_vec_dot_f32/f16/bf16 (AVX2 build), its order for other
// matrices: four 8-lane accumulators over steps of 32 (fused for F32/F16,
// rounded products then adds for BF16), a fixed reduction tree, and the
// tail fused in float32 (F32) or summed in float64 (F16, BF16). F16 and
// BF16 elements widen to float32 exactly, so activations must first be
// converted to the weight type, as ggml does. DotF32F16 (attention) and
// SumSquares are not bit-exact across implementations: the generic code
// sums in float64, the AVX2 code in float32 lanes with FMA; tests bound the
// difference by 1e-5 of the sum of |terms|. Element-wise helpers (Axpy, AxpyF16, Scale, Add, Mul) differ
// at most by the FMA's single rounding; Max and the half conversions are
// exact.
//
// # Preconditions
//
// n is a number of elements. For the quantized dots n must be a multiple of
// the weight's block size (32 or 256) and w, x must hold at least n/block
// whole blocks (extra bytes are ignored). Any bytes are accepted and give
// the same bits on every implementation (fuzzed); for the result to be the
// mathematical dot, Q8_K's bsums must be the sums of its quants (every
// quantizer writes them so): the K-quant dots use them for the min and
// offset terms, as ggml does. One exception to "any bytes":
// GemmQ8_0Q8_0 (every m, its m = 1 decode kernel included) needs its
// activation quants in [-127, 127] (its kernels sign-flip x by w with
// VPSIGNB, and -128 negates to itself); kiln's QuantizeActQ8_0 (d =
// amax/127) never writes -128, and the GEMM's tests clamp -128 to -127.
// DotQ8_0Q8_0 and DotQ8_0Q8_0x4 stay exact for every byte. Float slices passed together must
// have equal lengths. These are hot-path calls without an error result:
// callers check shapes once, when weights are loaded, and a violated
// precondition panics with a "simd: ..." message before any memory is read,
// so assembly never reads out of bounds and a bad shape is never a silent
// wrong answer.
//
// # Block layouts (little-endian, ggml-common.h)
//
//	Q8_0  34 B / 32:  | d f16 | qs int8[32]                       |  x = d*q
//	Q8_1  36 B / 32:  | d f16 | s f16 | qs int8[32]               |  s = d*sum(q)
//	Q4_0  18 B / 32:  | d f16 | qs u8[16]                         |  x = d*(nib-8)
//	Q4_1  20 B / 32:  | d f16 | m f16 | qs u8[16]                 |  x = d*nib + m
//	Q5_0  22 B / 32:  | d f16 | qh u8[4] | qs u8[16]              |  x = d*(q5-16)
//	Q5_1  24 B / 32:  | d f16 | m f16 | qh u8[4] | qs u8[16]      |  x = d*q5 + m
//	Q2_K  84 B / 256: | scales u8[16] | qs u8[64] | d f16 | dmin f16
//	Q3_K 110 B / 256: | hmask u8[32] | qs u8[64] | scales u8[12] | d f16
//	Q4_K 144 B / 256: | d f16 | dmin f16 | scales u8[12] | qs u8[128]
//	Q5_K 176 B / 256: | d f16 | dmin f16 | scales u8[12] | qh u8[32] | qs u8[128]
//	Q6_K 210 B / 256: | ql u8[128] | qh u8[64] | scales int8[16] | d f16
//	Q8_K 292 B / 256: | d f32 | qs int8[256] | bsums int16[16]   |  bsums[j] = sum qs[16j:16j+16]
//
// In 32-element blocks with 4-bit quants, byte j holds element j in its low
// nibble and element j+16 in its high nibble:
//
//	qs[j] = (q[j+16] << 4) | q[j]      j = 0..15
//	Q5: bit j of qh (little-endian u32) is bit 4 of q[j], j = 0..31
//
// In Q4_K/Q5_K a 256-element super-block is 8 sub-blocks of 32; each group
// of 64 elements uses 32 qs bytes, low nibbles first:
//
//	elements 64g+l    = qs[32g+l] & 15     (sub-block 2g)
//	elements 64g+32+l = qs[32g+l] >> 4     (sub-block 2g+1)
//	Q5_K: bit 2g of qh[l] is bit 4 of element 64g+l, bit 2g+1 of element 64g+32+l
//	value = d*scale[s]*q - dmin*min[s], 6-bit scale/min packed in scales[12]
//
// In Q6_K each half of 128 elements uses 64 ql bytes and 32 qh bytes:
//
//	q[128h+l]    = ql[64h+l]    & 15 | (qh[32h+l]>>0 & 3) << 4
//	q[128h+l+32] = ql[64h+l+32] & 15 | (qh[32h+l]>>2 & 3) << 4
//	q[128h+l+64] = ql[64h+l]    >> 4 | (qh[32h+l]>>4 & 3) << 4
//	q[128h+l+96] = ql[64h+l+32] >> 4 | (qh[32h+l]>>6 & 3) << 4
//	value = d*scales[i/16]*(q-32)
package simd
