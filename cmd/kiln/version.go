package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"kiln/kernels/simd"
)

func init() {
	register("version", "print kiln's version, commit, Go version and kernel set", runVersion)
}

func runVersion(args []string, stdout, _ io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprintln(stdout, "usage: kiln version (or kiln --version)")
		return nil
	}
	if len(args) > 0 {
		return usageErrorf("takes no arguments, got %d", len(args))
	}
	writeVersion(stdout)
	return nil
}

// writeVersion prints one line: the module version ("(devel)" for a build
// from a checkout), the commit and its time when the build recorded them
// (go build in a git work tree does; go test and go run do not), a "+dirty"
// mark for uncommitted changes, the Go version, the OS/arch and the SIMD
// kernel set this machine runs.
func writeVersion(w io.Writer) {
	version, rev := "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		var at, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			rev = fmt.Sprintf(" commit %.12s%s %s", rev, dirty, at)
		}
	}
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(w, "kiln %s%s %s %s/%s kernels %s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH, simd.Impl())
}
