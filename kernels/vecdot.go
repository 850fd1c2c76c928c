package kernels

import (
	"unsafe"

	"kiln/gguf"
	"kiln/kernels/simd"
	"kiln/quant"
)

// vecDot describes how MatMul multiplies one weight type: activation rows
// are first converted to the weight's vec_dot_type (ggml's name for it, see
// type_traits_cpu in ggml-cpu.c), then each output is one dot of a weight
// row against a converted activation row.
//
//	weight type              vec_dot_type   conversion of x
//	F32                      F32            none (x is used as is)
//	F16                      F16            round to nearest even half
//	BF16                     BF16           round to nearest even bfloat16
//	Q4_0, Q5_0, Q8_0         Q8_0           quant.QuantizeActQ8_0 (per 32: d = amax/127)
//	Q4_1, Q5_1               Q8_1           quant.QuantizeActQ8_1 (adds s = d*sum(q))
//	Q2_K..Q6_K               Q8_K           quant.QuantizeActQ8_K (per 256, f32 d, bsums)
//
// The activation quantizers are llama.cpp's x86 AVX2 ones, bit for bit.
type vecDot struct {
	act gguf.Type // vec_dot_type: the layout activations are converted to
	// convert writes x (n floats) in act's layout into dst; nil for F32.
	convert func(x []float32, dst []byte)
	// dot returns the dot of n elements of weight row w and activation row x.
	dot func(n int, w, x []byte) float32
	// dot4, when not nil, is dot for the four activation rows at x,
	// x[stride:], x[2*stride:], x[3*stride:] in one pass over w (weights
	// unpacked once), each lane bit-identical to dot: batched MatMul may mix
	// the two without changing any result.
	dot4 func(n int, w, x []byte, stride int, out *[4]float32)
	// rows4, when not nil, is dot for the four weight rows at w,
	// w[stride:], w[2*stride:], w[3*stride:] against one activation row x,
	// each lane bit-identical to dot: it gives single-row MatMuls (decode)
	// four independent chains where one dot is a single latency-bound one.
	rows4 func(n int, x, w []byte, stride int, out *[4]float32)
	// gemm, when not nil, multiplies a block of weight rows by all m
	// activation rows at once (simd's register-tiled GEMM) from activations
	// prepared once per call; each output has dot's bits.
	gemm *gemmDot
}

// gemmDot is one weight type's GEMM: the prepared activation form (from
// the act layout; nil act: the act rows are used as they are) and the
// product.
type gemmDot struct {
	actBytes func(n int) int
	act      func(n int, x, dst []byte)
	run      func(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte)
	// minRows is the batch from which the GEMM (which repacks weight
	// panels once per call) beats the 4-row dots; a single row (decode)
	// always goes through run (8-row decode kernels or the single-row dot).
	minRows int
	// load, when not nil, is the type's load-time layout (Repack).
	load *loadLayout
}

// loadLayout is a weight type's load-time layout (Repack): whole panels of
// rows rows, written by pack into bytes(n, rows) bytes, multiplied by gemm
// from the panel bytes of the first row on (row r of a panel boundary at
// bytes(n, r): the raw rows' size for every layout but Q4_K experts').
type loadLayout struct {
	rows  int
	bytes func(n, rows int) int
	pack  func(n int, w []byte, wStride, rows int, dst []byte)
	gemm  func(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte)
}

// Measured on TinyLlama rows (kernels/simd BenchmarkGemm vs
// BenchmarkDotQuantX4, kernels BenchmarkMatMul m=4): Q8_0/Q4_0 panels pay
// off from 2 rows, Q4_K's from about 4 (in llama.cpp's order: 43 vs 54 ns
// per output at m=4), Q6_K's (a costlier repack) from about 16-32:
// GemmQ6_KQ8_K itself runs the x4 dots below 32 rows on AVX2, and its
// AVX-512 VNNI panels from 16 (1.2x the x4 dots at m=16, 1.3x at 24).
// Q5_K's panels pay from 8 rows on every set (GemmQ5_KQ8_K; below, the x4
// dots, as before it had panels).
var (
	gemmQ8_0 = &gemmDot{simd.GemmActQ8_0Q8_0Bytes, simd.GemmActQ8_0Q8_0, simd.GemmQ8_0Q8_0, 2,
		&loadLayout{8, simd.PackedQ8_0Bytes, simd.PackQ8_0, simd.GemmQ8_0Packed}}
	gemmQ4_0 = &gemmDot{simd.GemmActQ4_0Q8_0Bytes, simd.GemmActQ4_0Q8_0, simd.GemmQ4_0Q8_0, 2,
		&loadLayout{16, simd.PackedQ4_0Bytes, simd.PackQ4_0, simd.GemmQ4_0Packed}}
	gemmQ4_K = &gemmDot{nil, nil, simd.GemmQ4_KQ8_K, 4, // reads Q8_K rows as they are
		&loadLayout{8, simd.PackedQ4_KBytes, simd.PackQ4_K, simd.GemmQ4_KPacked}}
	gemmQ6_K = &gemmDot{nil, nil, simd.GemmQ6_KQ8_K, 16, nil}
	gemmQ5_K = &gemmDot{nil, nil, simd.GemmQ5_KQ8_K, 8, nil} // its own thresholds inside
)

// vecDots maps each weight type MatMul supports to its kernel.
//
// The entries are the orders llama.cpp uses for the weight matrices of real
// models (Rows a multiple of 8, Cols of 32); vecDotFor switches to the
// orders it uses for other shapes.
var vecDots = map[gguf.Type]vecDot{
	gguf.TypeF32:  {act: gguf.TypeF32, dot: dotF32L8, dot4: dotF32L8x4, rows4: dotF32L8r4},
	gguf.TypeF16:  {act: gguf.TypeF16, convert: convertF16, dot: dotF16L8, dot4: dotF16L8x4, rows4: dotF16L8r4},
	gguf.TypeBF16: {act: gguf.TypeBF16, convert: convertBF16, dot: dotBF16L8, dot4: dotBF16L8x4, rows4: dotBF16L8r4},
	gguf.TypeQ8_0: {act: gguf.TypeQ8_0, convert: quantizeActQ8_0, dot: simd.DotQ8_0Q8_0, dot4: simd.DotQ8_0Q8_0x4, gemm: gemmQ8_0},
	gguf.TypeQ4_0: {act: gguf.TypeQ8_0, convert: quantizeActQ8_0, dot: simd.DotQ4_0Q8_0, dot4: simd.DotQ4_0Q8_0x4, gemm: gemmQ4_0},
	gguf.TypeQ5_0: {act: gguf.TypeQ8_0, convert: quantizeActQ8_0, dot: simd.DotQ5_0Q8_0},
	gguf.TypeQ4_1: {act: gguf.TypeQ8_1, convert: quant.QuantizeActQ8_1, dot: simd.DotQ4_1Q8_1},
	gguf.TypeQ5_1: {act: gguf.TypeQ8_1, convert: quant.QuantizeActQ8_1, dot: simd.DotQ5_1Q8_1},
	gguf.TypeQ2_K: {act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ2_KQ8_K, dot4: simd.DotQ2_KQ8_Kx4},
	gguf.TypeQ3_K: {act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ3_KQ8_K, dot4: simd.DotQ3_KQ8_Kx4},
	gguf.TypeQ4_K: {act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ4_KQ8_K, dot4: simd.DotQ4_KQ8_Kx4, gemm: gemmQ4_K},
	gguf.TypeQ5_K: {act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ5_KQ8_K, dot4: simd.DotQ5_KQ8_Kx4, gemm: gemmQ5_K},
	gguf.TypeQ6_K: {act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ6_KQ8_K, dot4: simd.DotQ6_KQ8_Kx4, gemm: gemmQ6_K},
}

// vecDotsOdd are llama.cpp's orders for matrices whose shape its fast
// paths decline: float weights with Rows%4 != 0 or Cols%8 != 0 (llamafile's
// tinyBLAS) go through ggml_vec_dot_f32/f16/bf16; Q4_0 and Q4_K with
// Rows%8 != 0 are not repacked into q4_0_8x8 / q4_K_8x8 and go through
// tinyBLAS_Q0_AVX's and ggml_vec_dot_q4_K_q8_K's lanes.
var vecDotsOdd = map[gguf.Type]vecDot{
	gguf.TypeQ4_0: {act: gguf.TypeQ8_0, convert: quantizeActQ8_0, dot: simd.DotQ4_0Q8_0Lanes, dot4: simd.DotQ4_0Q8_0Lanesx4},
	gguf.TypeQ4_K: {act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ4_KQ8_KVec},
	gguf.TypeF32:  {act: gguf.TypeF32, dot: dotF32},
	gguf.TypeF16:  {act: gguf.TypeF16, convert: convertF16, dot: dotF16},
	gguf.TypeBF16: {act: gguf.TypeBF16, convert: convertBF16, dot: dotBF16},
}

// vecDotFor returns the kernel for w, in the summation order llama.cpp's
// CPU backend uses for a matrix of w's type and shape (for batches of
// more than one row; kiln uses it for every batch, so that results do not
// depend on the batch). An expert matrix (MulMatID) takes mul_mat_id's
// orders.
func vecDotFor(w *Matrix) vecDot {
	switch w.Type {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		if w.MulMatID || w.Rows%4 != 0 || w.Cols%8 != 0 {
			return vecDotsOdd[w.Type]
		}
	case gguf.TypeQ4_0, gguf.TypeQ4_K:
		if w.Rows%8 != 0 {
			return vecDotsOdd[w.Type]
		}
		if w.MulMatID && w.Type == gguf.TypeQ4_K {
			return vecDotQ4_KGemv
		}
	}
	return vecDots[w.Type]
}

// vecDotQ4_KGemv is a repacked Q4_K expert's order: llama.cpp's
// mul_mat_id multiplies each routed row with ggml_gemv_q4_K_8x8_q8_K,
// whose super-block folding differs from its GEMM's. Its GEMM
// (simd.GemmQ4_KGemvQ8_K) keeps that fold: per-call panels of 8 or 16
// expert rows unpacked once for all the rows of the expert's group, the
// 8-row gemv kernels for a single row (decode), the same bits as
// simd.DotQ4_KQ8_KGemv. Its load-time layout (simd.PackQ4_KG: 16-row
// panels, the quants by lane and the scales unpacked, 2.8% over the raw
// size) is multiplied in place on the avx512vnni set, decode included.
var vecDotQ4_KGemv = vecDot{act: gguf.TypeQ8_K, convert: quantizeActQ8_K, dot: simd.DotQ4_KQ8_KGemv, dot4: simd.DotQ4_KQ8_KGemvx4, gemm: gemmQ4_KGemv}

// gemmQ4_KGemv is vecDotQ4_KGemv's GEMM. Its panels pay off from 2 rows
// (MoEFFN kernel benchmark, AVX-512 VNNI: see BENCHMARKS.md, session 9).
var gemmQ4_KGemv = &gemmDot{nil, nil, simd.GemmQ4_KGemvQ8_K, 2,
	&loadLayout{16, simd.PackedQ4_KGBytes, simd.PackQ4_KG, simd.GemmQ4_KGemvPacked}}

// Supported reports whether MatMul and Matrix.Row handle weights of type t.
func Supported(t gguf.Type) bool {
	_, ok := vecDots[t]
	return ok
}

// The float dots see weight and activation bytes as float32, f16 or bf16
// elements. GGUF data is little-endian, as are the CPUs kiln runs on.

func dotF32(n int, w, x []byte) float32  { return simd.DotF32(f32s(w, n), f32s(x, n)) }
func dotF16(n int, w, x []byte) float32  { return simd.DotF16(u16s(w, n), u16s(x, n)) }
func dotBF16(n int, w, x []byte) float32 { return simd.DotBF16(u16s(w, n), u16s(x, n)) }

func dotF32L8(n int, w, x []byte) float32  { return simd.DotF32Lanes8(f32s(w, n), f32s(x, n)) }
func dotF16L8(n int, w, x []byte) float32  { return simd.DotF16Lanes8(u16s(w, n), u16s(x, n)) }
func dotBF16L8(n int, w, x []byte) float32 { return simd.DotBF16Lanes8(u16s(w, n), u16s(x, n)) }

// The x4 flavours: strides are in bytes here, in elements in simd.
func dotF32L8x4(n int, w, x []byte, stride int, out *[4]float32) {
	simd.DotF32Lanes8x4(n, f32s(w, n), f32s(x, len(x)/4), stride/4, out)
}
func dotF16L8x4(n int, w, x []byte, stride int, out *[4]float32) {
	simd.DotF16Lanes8x4(n, u16s(w, n), u16s(x, len(x)/2), stride/2, out)
}
func dotBF16L8x4(n int, w, x []byte, stride int, out *[4]float32) {
	simd.DotBF16Lanes8x4(n, u16s(w, n), u16s(x, len(x)/2), stride/2, out)
}

// The rows4 flavours swap the roles: each product w[k]*x[k] is the same
// in either order, so four weight rows against one activation row are the
// x4 call with the activation in the weight's place.
func dotF32L8r4(n int, x, w []byte, stride int, out *[4]float32) {
	simd.DotF32Lanes8x4(n, f32s(x, n), f32s(w, len(w)/4), stride/4, out)
}
func dotF16L8r4(n int, x, w []byte, stride int, out *[4]float32) {
	simd.DotF16Lanes8x4(n, u16s(x, n), u16s(w, len(w)/2), stride/2, out)
}
func dotBF16L8r4(n int, x, w []byte, stride int, out *[4]float32) {
	simd.DotBF16Lanes8x4(n, u16s(x, n), u16s(w, len(w)/2), stride/2, out)
}

// quantizeActQ8_0 is quant.QuantizeActQ8_0 (llama.cpp's AVX2
// quantize_row_q8_0), through simd's assembly twin where there is one.
func quantizeActQ8_0(x []float32, dst []byte) {
	if !simd.QuantizeActQ8_0(x, dst) {
		quant.QuantizeActQ8_0(x, dst)
	}
}

// quantizeActQ8_K is quant.QuantizeActQ8_K, through simd's assembly twin
// where there is one.
func quantizeActQ8_K(x []float32, dst []byte) {
	if !simd.QuantizeActQ8_K(x, dst) {
		quant.QuantizeActQ8_K(x, dst)
	}
}

// convertF16 rounds x to halves (nearest even), ggml's F16 from_float.
func convertF16(x []float32, dst []byte) { simd.F32ToF16Row(x, u16s(dst, len(x))) }

// convertBF16 rounds x to bfloat16 (nearest even), ggml's BF16 from_float.
func convertBF16(x []float32, dst []byte) { quant.F32ToBF16Row(x, u16s(dst, len(x))) }

// f32s views the first n float32s of b (len(b) >= 4n) without copying.
func f32s(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	_ = b[4*n-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

// u16s views the first n uint16s of b (len(b) >= 2n) without copying.
func u16s(b []byte, n int) []uint16 {
	if n == 0 {
		return nil
	}
	_ = b[2*n-1]
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
}

// bytesOfF32 views x as bytes without copying.
func bytesOfF32(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}
