package model

import "fmt"

func errKVShape(got, want int) error {
	return fmt.Errorf("model: KV store has %d layers but the model has %d (made for another model?)", got, want)
}
