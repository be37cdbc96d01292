package main

import "fmt"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func init() {
	register(&command{
		name:    "version",
		summary: "print the version",
		run: func(g *globals, _ []string) int {
			fmt.Fprintln(g.stdout, "netagent", version)
			return exitOK
		},
	})
}
