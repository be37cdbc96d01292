package main

import (
	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
)

// import netplan FILE...: netplan's YAML files, merged in netplan's order.
func init() {
	importSources["netplan"] = &importSource{run: func(g *globals, args []string, opts importer.Options) (*importer.Result, error) {
		if len(args) == 0 || args[0] == "--all" {
			return nil, &importUsageError{msg: "give the netplan files (--all is import kernel's)"}
		}
		return netplan.Import(args, opts)
	}}
}
