package convert

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"kiln/gguf"
)

// batchElems bounds the float32 values held per batch (4 MiB of them), so
// memory stays flat whatever the tensor's size.
const batchElems = 1 << 20

// WriteRows writes rows rows of ne0 values each, encoded as typ, to out in
// row order. fill(r, dst) supplies row r as float32 (len(dst) == ne0). Rows
// of a batch are filled and encoded by GOMAXPROCS goroutines at once, so
// fill must be safe for concurrent calls on different rows; the bytes do
// not depend on how rows are split.
func WriteRows(out io.Writer, typ gguf.Type, ne0, rows int, fill func(r int, dst []float32) error) error {
	rowBytes, err := typ.RowBytes(ne0)
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	if ne0 <= 0 || rows < 0 {
		return fmt.Errorf("convert: %d rows of %d values", rows, ne0)
	}
	perBatch := max(1, batchElems/ne0)
	buf := make([]byte, min(perBatch, rows)*rowBytes)
	workers := max(1, runtime.GOMAXPROCS(0))
	errs := make([]error, workers)
	for first := 0; first < rows; first += perBatch {
		n := min(perBatch, rows-first)
		batch := buf[:n*rowBytes]
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				row := make([]float32, ne0)
				for r := w; r < n; r += workers {
					if err := fill(first+r, row); err != nil {
						errs[w] = err
						return
					}
					if err := Encode(typ, row, batch[r*rowBytes:(r+1)*rowBytes]); err != nil {
						errs[w] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		if _, err := out.Write(batch); err != nil {
			return err
		}
	}
	return nil
}
