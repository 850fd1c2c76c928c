// Command kiln is an LLM inference engine: run, serve, inspect and benchmark
// GGUF models. Each subcommand lives in its own file and registers itself in
// commands from an init function.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"kiln/kernels/simd"
)

// command is one subcommand: run gets the arguments after the subcommand's
// name and writes its result to stdout.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands is filled by init functions in the subcommand files.
var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) error) {
	if _, dup := commands[name]; dup {
		panic("kiln: subcommand registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

// errUsage marks an error caused by bad command-line input (exit status 2).
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kiln <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'kiln <command> -h' for a command's flags, 'kiln --version' for the build.")
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain dispatches to a subcommand and maps its error to an exit status.
func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout) // asked for: stdout, exit 0
		return 0
	case "-version", "--version":
		writeVersion(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kiln: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := simd.EnvError(); err != nil {
		fmt.Fprintf(stderr, "kiln: %v\n", err)
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "kiln %s: %s\n", args[0], strings.TrimPrefix(err.Error(), "usage: "))
		return 2
	default:
		fmt.Fprintf(stderr, "kiln %s: %v\n", args[0], err)
		return 1
	}
}

// usageErrorf returns an error that makes kiln exit with status 2.
func usageErrorf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}
