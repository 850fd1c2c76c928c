// Package quant owns ggml's tensor element formats: half floats (F16, BF16),
// the block-quantized formats (Q4_0 ... Q8_1, the K-quants Q2_K ... Q8_K),
// their sizes and layouts, and conversion to and from float32 bit-exact with
// llama.cpp (ggml/src/ggml-quants.c and, for activations, the x86 AVX2 CPU
// backend ggml-cpu/arch/x86/quants.c).
//
// # What is here
//
//   - F16ToF32 / F32ToF16 / BF16ToF32 / F32ToBF16 and their Row forms.
//   - Dequantize(t, src, dst) and one DequantizeX per format: ggml's
//     dequantize_row_* (to_float), bit for bit.
//   - Quantize(t, src, dst) and one QuantizeX per format: ggml's
//     quantize_row_*_ref, which llama-quantize runs when there is no
//     importance matrix. Outputs are byte-identical.
//   - QuantizeActQ8_0 / QuantizeActQ8_1 / QuantizeActQ8_K: how llama.cpp's CPU
//     backend quantizes activations on x86 AVX2 before integer dot products
//     (different rounding from the _ref quantizers; see activation.go).
//   - Block sizes, byte sizes and field offsets (layout.go) for kernels.
//
// # Invariants
//
//   - Whole blocks only. Per-format functions panic with a "quant: ..."
//     message when len(src)/len(dst) are not matching whole blocks (a
//     programming error, like a short buffer for crypto/cipher); Quantize and
//     Dequantize check the same and return an error instead.
//   - Every byte pattern dequantizes without panicking; every float32 input
//     (NaN and Inf included) quantizes without panicking, to the same bytes as
//     ggml on x86 (garbage in, the same garbage out).
//   - Float arithmetic follows the C code operation by operation in float32.
//     Every product that C adds to something is written float32(a*b) + c: Go
//     may otherwise fuse it into an FMA (GOAMD64=v3, arm64, ppc64, s390x),
//     while ggml-base is compiled without FMA. Keep it that way when editing.
//   - Testing: golden_test.go compares every format, on seven input families,
//     against sha256 sums of llama.cpp's own outputs (testdata/ggmlref runs
//     its shared libraries); run it with GOAMD64=v3 too.
//
// # Block layouts
//
// All multi-byte fields are little-endian; "f16" is an IEEE half. q[i] is
// element i of the block, in the order Dequantize writes it.
//
//	Q4_0 (32 el, 18 B)   | d f16 | qs[16] |
//	    qs[j] = q[j] (low nibble) | q[j+16] << 4        y = (q - 8) * d
//	Q4_1 (32 el, 20 B)   | d f16 | m f16 | qs[16] |     y = q * d + m
//	Q5_0 (32 el, 22 B)   | d f16 | qh u32 | qs[16] |
//	    q[j] = low nibble as Q4_0 | bit j of qh << 4      y = (q - 16) * d
//	Q5_1 (32 el, 24 B)   | d f16 | m f16 | qh u32 | qs[16] |   y = q * d + m
//	Q8_0 (32 el, 34 B)   | d f16 | qs[32] int8 |         y = q * d
//	Q8_1 (32 el, 36 B)   | d f16 | s f16 = d*sum(q) | qs[32] int8 |
//
// K-quants: a super-block of QK_K = 256 elements split into 16 sub-blocks of
// 16 (Q2_K, Q3_K, Q6_K) or 8 of 32 (Q4_K, Q5_K); sub-block scales are
// quantized against the super-block scale d (and mins against dmin).
//
//	Q2_K (84 B)  | scales[16] | qs[64] | d f16 | dmin f16 |
//	    byte offsets      0          16      80       82
//	    scales[s]: low nibble = scale, high nibble = min of sub-block s (16 el)
//	    y = d*scale*q - dmin*min, q 2 bits
//	Q3_K (110 B) | hmask[32] | qs[64] | scales[12] | d f16 |
//	    byte offsets      0         32        96        108
//	    q = low 2 bits from qs | high bit from hmask; y = d*(scale-32)*(q-4)
//	    16 6-bit scales: scale s low 4 bits in scales[s] (s<8) or
//	    scales[s-8]>>4 (s>=8); high 2 bits at scales[8+s%4] >> 2*(s/4)
//	Q4_K (144 B) | d f16 | dmin f16 | scales[12] | qs[128] |
//	    byte offsets  0       2            4          16
//	Q5_K (176 B) | d f16 | dmin f16 | scales[12] | qh[32] | qs[128] |
//	    byte offsets  0       2            4          16       48
//	    8 6-bit (scale, min) pairs, ScaleMinK4(j):
//	      j<4:  scale = scales[j]&63,               min = scales[j+4]&63
//	      j>=4: scale = scales[j+4]&15 | (scales[j-4]>>6)<<4,
//	            min   = scales[j+4]>>4 | (scales[j]>>6)<<4
//	    y = d*scale*q - dmin*min
//	Q6_K (210 B) | ql[128] | qh[64] | scales[16] int8 | d f16 |
//	    byte offsets  0        128        192             208
//	    y = d*scales[s]*(q-32), q 6 bits, s = element/16
//	Q8_K (292 B) | d f32 | qs[256] int8 | bsums[16] int16 |
//	    byte offsets  0        4              260
//	    bsums[s] = sum of qs[16s:16s+16]; y = d*q
//
// Where the bits of element e (0..255) of a K-quant live. Elements come in
// halves of 128 (Q2_K, Q3_K, Q6_K) or quarters of 64 (Q4_K, Q5_K):
//
//	Q2_K/Q3_K  h = e/128, r = e%128, l = r%32, p = r/32 (0..3)
//	           2 low bits: qs[32h + l] >> 2p & 3
//	           Q3_K high bit: hmask[e%32] bit (e/32)     (set = no -4)
//	Q4_K       g = e/64, r = e%64
//	           qs[32g + r%32], low nibble if r<32 else high nibble
//	Q5_K       as Q4_K, plus bit 2g + (r>=32) of qh[r%32] as bit 4
//	Q6_K       h = e/128, r = e%128, l = r%32, p = r/32 (0..3)
//	           low 4 bits: ql[64h + l + 32*(p&1)], low nibble if p<2 else high
//	           high 2 bits: qh[32h + l] >> 2p & 3
//
//	e.g. Q4_K, super-block of 256:
//	  qs:  [ 0 ..  31] low = el   0.. 31  high = el  32.. 63   (sub-blocks 0,1)
//	       [32 ..  63] low = el  64.. 95  high = el  96..127   (sub-blocks 2,3)
//	       [64 ..  95] low = el 128..159  high = el 160..191   (sub-blocks 4,5)
//	       [96 .. 127] low = el 192..223  high = el 224..255   (sub-blocks 6,7)
package quant
