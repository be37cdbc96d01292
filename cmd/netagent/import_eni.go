package main

import (
	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/eni"
)

// The eni source: `netagent import eni FILE`, ifupdown's
// /etc/network/interfaces.
func init() {
	importSources["eni"] = &importSource{run: runImportENI}
}

func runImportENI(_ *globals, args []string, opts importer.Options) (*importer.Result, error) {
	if len(args) != 1 || args[0] == "--all" {
		return nil, &importUsageError{msg: "want exactly one FILE (import eni FILE)"}
	}
	return eni.Import(args[0], opts)
}
