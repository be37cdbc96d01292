//go:build !nofleet

package main

// `netagent fleet`: the operator's side of a fleet (package fleet's key
// layout in etcd). push, delete, get and list write and read the intent
// documents of hosts and groups; status reads the hosts' statuses. Every
// subcommand takes the connection options (fleetConnFlags) and options
// anywhere, as every command does; the subcommand is the first argument
// that is no option.
//
// Writes are compare-and-swap on the document's store version: of two
// pushers expecting the same version exactly one wins, the other ends
// with exitConflict and nothing written.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
)

func init() {
	register(&command{
		name:    "fleet",
		summary: "push intent documents to hosts and groups in etcd, read the fleet's status and the hosts' snapshots, roll documents out in waves (push, delete, get, list, status, snapshot, rollout, controller)",
		usage:   "push|delete|get|list|status [options] [FILE]",
		run:     runFleet,
	})
}

func init() {
	fleetSubs = map[string]fleetSub{
		"push":   {"validate an intent file, then write it as a host's or a group's document (compare-and-swap); print the new store version", "--host H|--group G [--name DOC] [--if-version N] [--with FILE]... FILE", runFleetPush},
		"delete": {"remove a host's or a group's document (compare-and-swap)", "--host H|--group G [--if-version N] --name DOC", runFleetDelete},
		"get":    {"print a host's or a group's document as stored; its version on stderr", "--host H|--group G --name DOC", runFleetGet},
		"list":   {"list the documents of a host, a group, or the whole fleet, with their store versions", "[--host H|--group G] [--json]", runFleetList},
		"status": {"a table of the hosts' statuses: version converged, Ready, Degraded, trial, last seen", "[--json] [--stale D]", runFleetStatus},
	}
}

func runFleet(g *globals, args []string) int {
	if g.collect != nil { // completion: every subcommand's options
		fs, _ := fleetFlagSet(g, "")
		fs.Bool("json", false, "")
		parseFlags(fs, nil)
		return exitOK
	}
	fs, _ := fleetFlagSet(g, "")
	fs.Bool("json", false, "")
	i := fleetSubIndex(fs, args)
	if i < 0 {
		if _, _, help := splitArgs(fs, args); help {
			fleetUsage(g.stdout)
			return exitOK
		}
		fmt.Fprintln(g.stderr, "netagent fleet: which subcommand? push, delete, get, list, status, snapshot, rollout or controller")
		fleetUsage(g.stderr)
		return exitUsage
	}
	sub, ok := fleetSubs[args[i]]
	if !ok {
		fmt.Fprintf(g.stderr, "netagent fleet: unknown subcommand %q: push, delete, get, list, status, snapshot, rollout or controller\n", args[i])
		return exitUsage
	}
	return sub.run(g, append(slices.Clone(args[:i]), args[i+1:]...))
}

// fleetSubIndex returns the index in args of the first argument that is
// no option nor an option's value, as splitArgs reads them; -1 if none.
func fleetSubIndex(fs *flag.FlagSet, args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) {
			i++
		}
	}
	return -1
}

func fleetUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: netagent fleet SUBCOMMAND [options] [FILE]\n\n%s\n\nsubcommands:\n", commands["fleet"].summary)
	for _, name := range []string{"push", "delete", "get", "list", "status", "snapshot", "rollout", "controller"} {
		s := fleetSubs[name]
		fmt.Fprintf(w, "  %-7s %s\n          %s\n", name, s.usage, s.summary)
	}
	fmt.Fprintln(w, "\n`netagent fleet SUBCOMMAND --help` lists its options.")
}

// fleetConn are the options every fleet subcommand takes to reach etcd,
// and the document's place for those that name one.
type fleetConn struct {
	endpoints        string
	prefix           string
	ca, cert, key    string
	timeout          time.Duration
	host, group, doc string
	// with are push's --with files: validated with the pushed one.
	with []string
	// ifVersion is --if-version (nil: not given).
	ifVersion *int64
	// try, trialTimeout, probeTimeout, probes and mustPassBefore are
	// push --try's.
	try            bool
	trialTimeout   time.Duration
	probeTimeout   time.Duration
	probes         []string
	mustPassBefore bool
	// client is the connection open opened.
	client *member.Client
}

// fleetFlagSet makes the flag set of a fleet subcommand (sub "" for the
// union of them all) with the connection and place options.
func fleetFlagSet(g *globals, sub string) (*flag.FlagSet, *fleetConn) {
	name := strings.TrimSpace("fleet " + sub)
	synopsis := ""
	if s, ok := fleetSubs[sub]; ok {
		synopsis = s.usage
	}
	fs := newFlagSet(g, name, synopsis)
	if s, ok := fleetSubs[sub]; ok {
		fs.Usage = func() {
			fmt.Fprintf(fs.Output(), "%s\n\n", s.summary)
			commandUsage(fs.Output(), fs, name, synopsis)
		}
	}
	c := &fleetConn{}
	c.connFlags(fs)
	if sub != "status" && sub != "snapshot" {
		c.placeFlags(fs, sub)
	}
	return fs, c
}

// connFlags are the options that reach etcd.
func (c *fleetConn) connFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.endpoints, "etcd-endpoints", "", "etcd client `URLs`, comma-separated (required)")
	fs.StringVar(&c.prefix, "etcd-prefix", fleet.DefaultPrefix, "the fleet's key `PREFIX` in etcd")
	fs.StringVar(&c.ca, "etcd-ca", "", "CA certificate `FILE` (PEM) that verifies the etcd servers")
	fs.StringVar(&c.cert, "etcd-cert", "", "client certificate `FILE` (PEM) for etcd")
	fs.StringVar(&c.key, "etcd-key", "", "the client certificate's key `FILE` (PEM)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "give up when etcd has not answered within this long (exit 3)")
}

// placeFlags are the options that name a document and, for push and
// delete, how it is written.
func (c *fleetConn) placeFlags(fs *flag.FlagSet, sub string) {
	fs.StringVar(&c.host, "host", "", "the document is this `HOST`'s: PREFIX/hosts/HOST/DOC")
	fs.StringVar(&c.group, "group", "", "the document is this `GROUP`'s, for every member: PREFIX/groups/GROUP/DOC")
	if sub == "list" {
		return
	}
	fs.StringVar(&c.doc, "name", "", "the document's `NAME` (push: default the file's base name)")
	if sub == "push" || sub == "" {
		c.pushFlags(fs)
	}
	if sub == "push" || sub == "delete" || sub == "" {
		fs.Func("if-version", "write only if the document's store version is `N` (0: it must not exist); otherwise exit 5",
			func(v string) error {
				var n int64
				if _, err := fmt.Sscan(v, &n); err != nil || n < 0 || fmt.Sprint(n) != v {
					return fmt.Errorf("not a version: %q", v)
				}
				c.ifVersion = &n
				return nil
			})
	}
}

// pushFlags are push's own options: --with and --try's.
func (c *fleetConn) pushFlags(fs *flag.FlagSet) {
	fs.Func("with", "validate the file together with this intent `FILE` too (a document the members merge with it, such as the host's own when pushing to a group), without pushing it; repeatable",
		func(v string) error { c.with = append(c.with, v); return nil })
	fs.BoolVar(&c.try, "try", false, "push the document as a trial: each member applies it, watches its --probe until --trial-timeout and confirms it then (without probes: once it converged), and reverts to its previous version when a probe fails or it does not converge (fleet status shows the trial per host)")
	fs.DurationVar(&c.trialTimeout, "trial-timeout", member.DefaultTrialTimeout, "with --try: how long a member waits for the trial to converge and its probes to pass")
	fs.Func("probe", "with --try: a `PROBE` each member runs after applying the trial (ping:HOST, tcp:HOST:PORT, dns:NAME[@SERVER], http(s)://URL or arping:ADDR@DEV, see `go doc agent/probe`); repeatable",
		func(v string) error { c.probes = append(c.probes, v); return nil })
	fs.DurationVar(&c.probeTimeout, "probe-timeout", 0, "with --try: how long each member's probes may take to pass once it converged to the trial (default 10s, at most --trial-timeout)")
	fs.BoolVar(&c.mustPassBefore, "probe-must-pass-before", false, "with --try: a member whose probe fails before the change reverts the trial without applying it (without: that probe is reported in its fleet status and does not count)")
}

// fleetExitHelp adds what the exit codes mean for fleet.
const fleetExitHelp = `
for fleet: 1 an invalid intent (nothing written), a document not found, or (status) a host not
Ready, stale or without a status; 3 etcd unreachable; 5 the document's version is not the one
expected (--if-version, or another pusher wrote between push's read and its write)
`

// check validates the connection options (member.CheckConn) and the
// place (member.Place.Check; with needPlace exactly one of --host and
// --group) and, when needDoc, the document's name.
func (c *fleetConn) check(needPlace, needDoc bool) error {
	if err := member.CheckConn(c.endpoints, c.conn()); err != nil {
		return err
	}
	if err := c.place().Check(needPlace); err != nil {
		return err
	}
	if needDoc {
		return fleet.CheckName("document", c.doc)
	}
	return nil
}

// conn is the connection the options give.
func (c *fleetConn) conn() member.Conn {
	return member.Conn{Endpoints: member.Endpoints(c.endpoints), Prefix: c.prefix,
		CAFile: c.ca, CertFile: c.cert, KeyFile: c.key, Timeout: c.timeout}
}

// place is the document's place (--host or --group).
func (c *fleetConn) place() member.Place { return member.Place{Host: c.host, Group: c.group} }

// parse parses the arguments of fleet subcommand fs and checks c. With
// needDoc the document is named (--name or the one argument) and so is
// its place; without, no argument is taken. On a usage error it prints it
// and returns its exit code and false.
func (c *fleetConn) parse(g *globals, fs *flag.FlagSet, args []string, needDoc bool) (int, bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return code, false
	}
	if needDoc {
		doc, err := member.DocName(c.doc, fs.Args())
		if err != nil {
			return usageError(g, fs, err.Error()), false
		}
		c.doc = doc
	} else if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments"), false
	}
	if err := c.check(needDoc, needDoc); err != nil {
		return usageError(g, fs, err.Error()), false
	}
	return exitOK, true
}

// open connects to etcd (member.Dial: lazily, the first operation finds
// out whether it answers) into c.client and returns a context bounded by
// --timeout; done cancels it and closes the connection. A configuration
// etcd refuses is a usage error of fs: open prints it and returns its exit
// code and false.
func (c *fleetConn) open(g *globals, fs *flag.FlagSet) (ctx context.Context, done func(), code int, ok bool) {
	client, err := member.Dial(c.conn())
	if err != nil {
		return nil, nil, usageError(g, fs, err.Error()), false
	}
	c.client = client
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	return ctx, func() { cancel(); client.Close() }, exitOK, true
}

// fail prints a store error and returns its exit code (member.Explain):
// exitInternal for an unreachable etcd (naming the endpoints),
// exitConflict for a compare-and-swap refused, exitFailed for a document
// not found or too large.
func (c *fleetConn) fail(g *globals, verb string, err error) int {
	kind, msg := c.client.Explain(err)
	fmt.Fprintf(g.stderr, "netagent: fleet %s: %s\n", verb, msg)
	switch kind {
	case member.FailConflict:
		return exitConflict
	case member.FailInvalid:
		return exitFailed
	}
	return exitInternal
}
