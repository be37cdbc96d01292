package main

import (
	"context"
	"os"

	"github.com/netagent/netagent/agent/oneshot"
)

func init() {
	register(&command{
		name:    "snapshot",
		summary: "write the namespace's whole state (links, l3, iptables, sysctls, netagent's records) as one JSON document, for plan --against; changes nothing",
		usage:   "[--netns NAME] [--out FILE]",
		run:     runSnapshot,
	})
}

func runSnapshot(g *globals, args []string) int {
	fs := newFlagSet(g, "snapshot", "")
	k := kernelFlags(g, fs)
	out := fs.String("out", "", "write the snapshot to `FILE` (default: standard output)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "snapshot takes no files")
	}
	d, err := oneshot.Snapshot(context.Background(), k.options(g))
	if err != nil {
		return printError(g, "", err)
	}
	if *out == "" {
		if err := d.Write(g.stdout); err != nil {
			return printError(g, "", err)
		}
		return exitOK
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return printError(g, "", err)
	}
	if err := d.Write(f); err != nil {
		f.Close()
		return printError(g, "", err)
	}
	if err := f.Close(); err != nil {
		return printError(g, "", err)
	}
	return exitOK
}
