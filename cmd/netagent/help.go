package main

import (
	"flag"
	"fmt"
	"strings"
)

func init() {
	register(&command{
		name:    "help",
		summary: "list the commands, or print a command's arguments and options",
		usage:   "[COMMAND | fleet SUBCOMMAND]",
		run:     runHelp,
	})
}

// runHelp prints the usage on stdout: netagent's, or a command's (which
// `netagent COMMAND --help` prints too), or a fleet subcommand's.
func runHelp(g *globals, args []string) int {
	fs := newFlagSet(g, "help", "[COMMAND | fleet SUBCOMMAND]")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch fs.NArg() {
	case 0:
		top := flag.NewFlagSet("netagent", flag.ContinueOnError)
		defineGlobals(g, top, globalNames...)
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
	if s := closestCommand(name); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	fmt.Fprintln(g.stderr, msg)
	fmt.Fprintln(g.stderr, "Run 'netagent help' for the list of commands.")
	return exitUsage
}

// closestCommand returns the command name nearest to name: the one that
// starts with it, when only one does, or the one at the smallest edit
// distance (a letter missing, added, changed or two swapped count one)
// if that is at most a third of its length (at least 1); "" when none is.
func closestCommand(name string) string {
	var prefixed []string
	best, bestD := "", 0
	for _, n := range commandNames() {
		if name != "" && strings.HasPrefix(n, name) {
			prefixed = append(prefixed, n)
		}
		if d := editDistance(name, n); best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	if bestD <= max(1, len(best)/3) {
		return best
	}
	return ""
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent letters.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
