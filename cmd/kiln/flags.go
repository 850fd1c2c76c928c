package main

import (
	"errors"
	"flag"
	"io"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

// interspersed parses flags that may appear before, between or after
// positional arguments (kiln probs MODEL TEXT --top 5), returning the
// positionals in order. "--" makes the one argument after it positional
// whatever it looks like (kiln run M -- "-n" -n 5: the prompt is "-n", then
// -n 5 is a flag again), so a TEXT that begins with "-" goes after "--"
// and the flags may still follow it; a second "--" quotes the next one. An
// argument that begins with "-" but cannot be a flag is positional without
// "--": one with a space in it ("-5 apples") or a negative number ("-5")
// that names no flag.
//
// A bad flag is a usage error (exit status 2) reported once, by runMain;
// -h prints the command's usage and returns flag.ErrHelp.
func interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	var pos []string
	for len(args) > 0 {
		arg := args[0]
		if arg == "--" {
			if len(args) > 1 {
				pos = append(pos, args[1])
				args = args[2:]
			} else {
				args = args[1:]
			}
			continue
		}
		if len(arg) < 2 || arg[0] != '-' || notAFlag(fs, arg) {
			pos, args = append(pos, arg), args[1:]
			continue
		}
		n := 1 // one flag at a time, with its value when that is the next argument
		if takesValue(fs, arg) && len(args) > 1 {
			n = 2
		}
		err := fs.Parse(args[:n])
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(out)
			usage()
			return nil, err
		}
		if err != nil {
			return nil, usageErrorf("%v (kiln %s -h lists the flags; put a TEXT that begins with '-' after --)", err, fs.Name())
		}
		args = args[n:]
	}
	return pos, nil
}

// flagName is the name in "-name", "--name" or "--name=value".
func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

// takesValue reports whether arg is a defined non-boolean flag without
// "=value", whose value is then the next argument.
func takesValue(fs *flag.FlagSet, arg string) bool {
	f := fs.Lookup(flagName(arg))
	if f == nil || strings.Contains(arg, "=") {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// notAFlag reports whether arg, which the flag package would take for a
// flag, is text: it has white space in it, or it is a number that is not
// the name of a flag (-5, -0.5).
func notAFlag(fs *flag.FlagSet, arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return false
	}
	if strings.IndexFunc(arg, unicode.IsSpace) >= 0 {
		return true
	}
	if fs.Lookup(flagName(arg)) != nil {
		return false
	}
	_, err := strconv.ParseFloat(arg, 64)
	return err == nil
}

// maxThreads bounds --threads: more workers than this only cost time (each
// is a goroutine that every matmul wakes and waits for).
func maxThreads() int { return max(64, 4*runtime.NumCPU()) }

// checkThreads refuses a --threads value outside [0, maxThreads()].
func checkThreads(n int) error {
	if n < 0 || n > maxThreads() {
		return usageErrorf("--threads %d: want 0 (one per core, %d here) up to %d", n, runtime.NumCPU(), maxThreads())
	}
	return nil
}

// maxParallel bounds bench's --parallel (sequences decoded in one batch).
const maxParallel = 1024

// checkParallel refuses a --parallel value outside [1, maxParallel].
func checkParallel(n int) error {
	if n < 1 || n > maxParallel {
		return usageErrorf("--parallel %d: want 1 up to %d sequences", n, maxParallel)
	}
	return nil
}

// checkMaxTokens refuses a -n value that is neither a count nor -1. -n
// means the same in every command: at most N tokens, -1 for no limit (the
// end of generation or a full context); zeroOK says whether 0, an empty
// answer, makes sense for the command.
func checkMaxTokens(n int, zeroOK bool) error {
	switch {
	case n > 0 || n == -1 || (n == 0 && zeroOK):
		return nil
	case n == 0:
		return usageErrorf("-n 0 asks for an empty answer: want a positive count, or -1 for no limit")
	}
	return usageErrorf("-n %d: want a count of tokens, or -1 for no limit", n)
}
