//go:build nofleet

package main

// A build without the fleet (build tag nofleet, docs/binary-size.md):
// fleet.go and its subcommands' files are left out, and with them the
// etcd client, gRPC and protobuf's registries (agent/member/etcd.go); the
// command fleet stays, to say so. run's --etcd-endpoints is refused in
// storeOpts.check.

import (
	"fmt"

	"github.com/netagent/netagent/agent/member"
)

func init() {
	register(&command{
		name:    "fleet",
		summary: "not in this build: " + member.ErrNoFleet.Error(),
		usage:   "...",
		run: func(g *globals, _ []string) int {
			if g.collect != nil {
				return exitOK
			}
			fmt.Fprintf(g.stderr, "netagent fleet: %v\n", member.ErrNoFleet)
			return exitUsage
		},
	})
}

// fleetExitHelp: no fleet, no exit codes of its own.
const fleetExitHelp = ""
