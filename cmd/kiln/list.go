package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"kiln/hub"
)

func init() {
	register("list", "list the models downloaded from Hugging Face", runList)
	register("rm", "delete downloaded models from the cache", runRm)
}

func runList(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stdout)
	paths := fs.Bool("paths", false, "add a column with each file's local path")
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln list [--paths]\n  Lists the files in $KILN_HOME (default ~/.cache/kiln): reference, size, when downloaded.\n")
		fs.PrintDefaults()
	}
	pos, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErrorf("list takes no arguments, got %q", pos)
	}
	c, err := hub.New(hub.Options{})
	if err != nil {
		return err
	}
	list, err := c.List()
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(stderr, "no models in %s ('kiln pull hf:OWNER/REPO:QUANT' downloads one)\n", c.Home())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	header := "REF\tSIZE\tMODIFIED"
	if *paths {
		header += "\tPATH"
	}
	fmt.Fprintln(tw, header)
	var total int64
	for _, m := range list {
		line := fmt.Sprintf("%s\t%s\t%s", m.Ref, hub.FormatBytes(m.Size), m.Downloaded.Local().Format("2006-01-02 15:04"))
		if *paths {
			line += "\t" + m.Path
		}
		fmt.Fprintln(tw, line)
		total += m.Size
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(list) > 1 {
		fmt.Fprintf(stderr, "%d files, %s in %s\n", len(list), hub.FormatBytes(total), c.Home())
	}
	return nil
}

func runRm(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rm", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: kiln rm REF...\n  REF as 'kiln list' shows it (hf:OWNER/REPO/FILE), or hf:OWNER/REPO:QUANT\n  picking among that repository's cached files. A partial download goes too.\n")
		fs.PrintDefaults()
	}
	refs, err := interspersed(fs, args)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return usageErrorf("want at least one REF ('kiln list' shows them)")
	}
	for _, r := range refs {
		if _, err := hub.ParseRef(r); err != nil {
			return usageErrorf("%v", err)
		}
	}
	c, err := hub.New(hub.Options{})
	if err != nil {
		return err
	}
	var total int64
	for _, r := range refs {
		rm, err := c.Remove(r)
		if err != nil {
			return err
		}
		total += rm.Freed
		fmt.Fprintf(stdout, "removed %s (%s freed)\n", rm.Ref, hub.FormatBytes(rm.Freed))
	}
	if len(refs) > 1 {
		fmt.Fprintf(stdout, "%s freed in all\n", hub.FormatBytes(total))
	}
	return nil
}
