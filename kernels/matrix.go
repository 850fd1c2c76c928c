package kernels

import (
	"fmt"

	"kiln/gguf"
	"kiln/quant"
)

// Matrix is a weight matrix as GGUF stores it: Rows rows of Cols elements,
// row-major, each row RowBytes(Cols) bytes of Type's blocks.
//
//	ggml ne[0] = Cols (input features), ne[1] = Rows (output features)
//	row r = Data[r*rowBytes : (r+1)*rowBytes]
type Matrix struct {
	Type       gguf.Type
	Rows, Cols int
	Data       []byte // Rows * Type.RowBytes(Cols) bytes (usually a slice of the mmap)

	// MulMatID marks one expert's slice of a 3-D expert tensor, which
	// llama.cpp multiplies with ggml_mul_mat_id rather than ggml_mul_mat:
	// there each output is one ggml_vec_dot of the weight type, so float
	// weights sum in ggml_vec_dot_f32/f16/bf16's order, not llamafile
	// tinyBLAS's (which serves mul_mat only), and repacked Q4_K in its
	// gemv's order (simd.DotQ4_KQ8_KGemv), not its GEMM's. Other types are
	// unchanged: Q8_0's vec_dot sums as tinyBLAS does, Q4_0's gemv as its
	// GEMM, and Q6_K and the rest use vec_dot for mul_mat as well.
	MulMatID bool

	// Load-time panels of the first Rows/8*8 rows (see Repack); nil when
	// not repacked. A copy of the Matrix shares them.
	packed     []byte
	freePacked func()
}

// Validate reports whether m can be used by MatMul and Row: a supported
// type, positive shape, Cols a whole number of blocks and Data at least
// Rows rows long. Call it once when weights are loaded; the kernels only
// re-check sizes and panic on a violation.
func (m *Matrix) Validate() error {
	if !Supported(m.Type) {
		return fmt.Errorf("kernels: matrix type %s is not supported", m.Type)
	}
	if m.Rows <= 0 || m.Cols <= 0 {
		return fmt.Errorf("kernels: matrix shape %dx%d must be positive", m.Rows, m.Cols)
	}
	rb, err := m.Type.RowBytes(m.Cols)
	if err != nil {
		return fmt.Errorf("kernels: matrix %dx%d %s: %v", m.Rows, m.Cols, m.Type, err)
	}
	if len(m.Data) < m.Rows*rb {
		return fmt.Errorf("kernels: matrix %dx%d %s needs %d bytes, has %d", m.Rows, m.Cols, m.Type, m.Rows*rb, len(m.Data))
	}
	return nil
}

// rowBytes returns the byte size of one row, panicking with the Validate
// error if m is unusable.
func (m *Matrix) rowBytes() int {
	if err := m.Validate(); err != nil {
		panic(err.Error())
	}
	rb, _ := m.Type.RowBytes(m.Cols)
	return rb
}

// Row dequantizes row `row` of m into dst[:m.Cols] (embedding lookup).
// It panics if m is invalid (see Validate), row is out of range or dst is
// shorter than Cols.
func (m *Matrix) Row(row int, dst []float32) {
	rb := m.rowBytes()
	if row < 0 || row >= m.Rows {
		panic(fmt.Sprintf("kernels: Row(%d) of a %d-row matrix", row, m.Rows))
	}
	if len(dst) < m.Cols {
		panic(fmt.Sprintf("kernels: Row: dst has %d elements, need %d", len(dst), m.Cols))
	}
	if err := quant.Dequantize(m.Type, m.Data[row*rb:(row+1)*rb], dst[:m.Cols]); err != nil {
		panic("kernels: Row: " + err.Error()) // unreachable for a valid matrix
	}
}
