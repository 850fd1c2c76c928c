package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kiln/hub"
)

func init() {
	register("pull", "download a model from Hugging Face", runPull)
}

func runPull(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	fs.SetOutput(stdout)
	revision := fs.String("revision", "", "branch, tag or commit to download from (default main)")
	quiet := fs.Bool("quiet", false, "no progress display")
	fs.Usage = func() {
		io.WriteString(fs.Output(), `usage: kiln pull REF... [--revision R] [--quiet]
  REF is hf:OWNER/REPO/FILE.gguf, hf:OWNER/REPO:QUANT (e.g. :Q4_K_M) or hf:OWNER/REPO.
  Downloads into $KILN_HOME (default ~/.cache/kiln), resuming a partial
  download, and prints each file's local path. A cached file is checked
  against the hub and downloaded again only if it changed.
  Environment: HF_TOKEN (gated and private repositories), KILN_HF_ENDPOINT
  or HF_ENDPOINT (a mirror), KILN_HOME.
`)
		fs.PrintDefaults()
	}
	refs, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return usageErrorf("want at least one REF (hf:OWNER/REPO/FILE.gguf or hf:OWNER/REPO:QUANT)")
	}
	for _, r := range refs {
		if _, err := hub.ParseRef(r); err != nil {
			return usageErrorf("%v", err)
		}
	}
	opts := hubOptions(stderr)
	opts.Revision = *revision
	if *quiet {
		opts.Progress = nil
	}
	c, err := hub.New(opts)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, r := range refs {
		m, fresh, err := c.Pull(ctx, r)
		if err != nil {
			return err
		}
		how := "up to date"
		if fresh {
			how = "downloaded"
		}
		check := "sha256 " + m.SHA256
		if m.Verified {
			check += " (verified)"
		} else {
			check += " (the hub published no checksum)"
		}
		fmt.Fprintf(stderr, "%s %s: %s, %s\n", how, m.Ref, hub.FormatBytes(m.Size), check)
		fmt.Fprintln(stdout, m.Path)
	}
	return nil
}

// hubOptions are the hub settings of every subcommand: the environment
// (HF_TOKEN, KILN_HF_ENDPOINT/HF_ENDPOINT, KILN_HOME) and a progress display
// on stderr, redrawn in place when stderr is a terminal.
func hubOptions(stderr io.Writer) hub.Options {
	return hub.Options{Progress: stderr, Terminal: isTerminal(stderr)}
}

// resolveModel turns a MODEL argument into a local file: a path is returned
// as it is, an hf: reference is downloaded into the cache unless already
// there (progress on stderr; Ctrl-C stops it, keeping the partial download
// for the next run). Subcommands that open a model call it first, so
// `kiln run hf:OWNER/REPO:Q4_K_M` works.
func resolveModel(arg string, stderr io.Writer) (string, error) {
	if !hub.IsRef(arg) {
		return arg, nil
	}
	if _, err := hub.ParseRef(arg); err != nil {
		return "", usageErrorf("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return hub.Resolve(ctx, arg, hubOptions(stderr))
}

// isTerminal reports whether w is a character device (a terminal) that
// understands "\r" and erase-line; TERM=dumb says it does not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
