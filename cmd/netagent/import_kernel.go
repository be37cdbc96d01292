package main

import (
	"context"
	"flag"
	"io"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/oneshot"
)

func init() {
	importSources["kernel"] = &importSource{run: runImportKernel}
}

// runImportKernel is `netagent import kernel [--all] [--ethtool] [--netns NAME]`: what
// the namespace holds, as an intent.
func runImportKernel(g *globals, args []string, _ importer.Options) (*importer.Result, error) {
	fs := flag.NewFlagSet("import kernel", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	k := kernelFlags(g, fs)
	all := fs.Bool("all", false, "include the kernel's own objects (lo in the intent, the rest named in warnings)")
	eth := fs.Bool("ethtool", false, "include each physical interface's ethtool settings at their current values (the kernel does not record which someone changed)")
	if err := fs.Parse(args); err != nil {
		return nil, &importUsageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, &importUsageError{msg: "import kernel takes no files"}
	}
	return oneshot.ImportKernel(context.Background(), k.options(g), oneshot.KernelImport{All: *all, Ethtool: *eth})
}
