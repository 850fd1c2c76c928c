// Command kiln is an LLM inference engine: run, serve, inspect and benchmark
// GGUF models.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "kiln: no subcommands yet")
	os.Exit(2)
}
