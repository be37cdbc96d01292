package main

import (
	"fmt"

	"github.com/netagent/netagent/internal/suggest"
)

func init() {
	register(&command{
		name:    "help",
		summary: "list the commands, or print a command's arguments and options; `help exit-codes`: what each exit code means",
		usage:   "[COMMAND | fleet SUBCOMMAND | exit-codes]",
		run:     runHelp,
	})
}

// runHelp prints the usage on stdout: netagent's, or a command's (which
// `netagent COMMAND --help` prints too), or a fleet subcommand's.
func runHelp(g *globals, args []string) int {
	fs := newFlagSet(g, "help", "[COMMAND | fleet SUBCOMMAND | exit-codes]")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch fs.NArg() {
	case 0:
		top, _ := topFlags(g)
		usage(g.stdout, top)
		return exitOK
	case 1:
	case 2: // fleet's subcommands: help fleet push
		if sub, ok := fleetSubs[fs.Arg(1)]; ok && fs.Arg(0) == "fleet" {
			return sub.run(g, []string{"--help"})
		}
		fallthrough
	default:
		return usageError(g, fs, "at most one command (or fleet and one of its subcommands)")
	}
	if fs.Arg(0) == "exit-codes" {
		fmt.Fprint(g.stdout, "exit codes:\n"+exitCodesHelp+fleetExitHelp)
		return exitOK
	}
	c, ok := commands[fs.Arg(0)]
	if !ok {
		return unknownCommand(g, fs.Arg(0))
	}
	return c.run(g, []string{"--help"})
}

// unknownCommand reports a command name that is none, with the closest
// one when it is close enough to be a typo.
func unknownCommand(g *globals, name string) int {
	msg := fmt.Sprintf("netagent: unknown command %q", name)
	if s := suggest.Closest(name, commandNames()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	fmt.Fprintln(g.stderr, msg)
	fmt.Fprintln(g.stderr, "Run 'netagent help' for the list of commands.")
	return exitUsage
}
