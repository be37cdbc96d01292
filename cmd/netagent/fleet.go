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
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

func init() {
	register(&command{
		name:    "fleet",
		summary: "push intent documents to hosts and groups in etcd, and read the fleet's status (push, delete, get, list, status)",
		usage:   "push|delete|get|list|status [options] [FILE]",
		run:     runFleet,
	})
}

// fleetSub is one subcommand of fleet.
type fleetSub struct {
	summary, usage string
	run            func(g *globals, args []string) int
}

// fleetSubs are the subcommands (set in init: their functions use it).
var fleetSubs map[string]fleetSub

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
		fmt.Fprintln(g.stderr, "netagent fleet: which subcommand? push, delete, get, list or status")
		fleetUsage(g.stderr)
		return exitUsage
	}
	sub, ok := fleetSubs[args[i]]
	if !ok {
		fmt.Fprintf(g.stderr, "netagent fleet: unknown subcommand %q: push, delete, get, list or status\n", args[i])
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
	for _, name := range []string{"push", "delete", "get", "list", "status"} {
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
	// ifVersion is --if-version, when ifVersionGiven.
	ifVersion      store.Version
	ifVersionGiven bool
	// try, trialTimeout and probes are push --try's.
	try          bool
	trialTimeout time.Duration
	probes       []string
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
			fmt.Fprint(fs.Output(), fleetExitHelp)
		}
	}
	c := &fleetConn{}
	fs.StringVar(&c.endpoints, "etcd-endpoints", "", "etcd client `URLs`, comma-separated (required)")
	fs.StringVar(&c.prefix, "etcd-prefix", fleet.DefaultPrefix, "the fleet's key `PREFIX` in etcd")
	fs.StringVar(&c.ca, "etcd-ca", "", "CA certificate `FILE` (PEM) that verifies the etcd servers")
	fs.StringVar(&c.cert, "etcd-cert", "", "client certificate `FILE` (PEM) for etcd")
	fs.StringVar(&c.key, "etcd-key", "", "the client certificate's key `FILE` (PEM)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "give up when etcd has not answered within this long (exit 3)")
	if sub == "status" {
		return fs, c
	}
	fs.StringVar(&c.host, "host", "", "the document is this `HOST`'s: PREFIX/hosts/HOST/DOC")
	fs.StringVar(&c.group, "group", "", "the document is this `GROUP`'s, for every member: PREFIX/groups/GROUP/DOC")
	if sub == "list" {
		return fs, c
	}
	fs.StringVar(&c.doc, "name", "", "the document's `NAME` (push: default the file's base name)")
	if sub == "push" || sub == "" {
		fs.Func("with", "validate the file together with this intent `FILE` too (a document the members merge with it, such as the host's own when pushing to a group), without pushing it; repeatable",
			func(v string) error { c.with = append(c.with, v); return nil })
	}
	if sub == "push" || sub == "" {
		fs.BoolVar(&c.try, "try", false, "push the document as a trial: each member applies it, confirms it when its --probe pass, and reverts to its previous version after --trial-timeout otherwise (fleet status shows the trial per host)")
		fs.DurationVar(&c.trialTimeout, "trial-timeout", member.DefaultTrialTimeout, "with --try: how long a member waits for the trial to converge and its probes to pass")
		fs.Func("probe", "with --try: a `PROBE` each member runs after applying the trial (ping:HOST or tcp:HOST:PORT, see `go doc agent/probe`); repeatable",
			func(v string) error { c.probes = append(c.probes, v); return nil })
	}
	if sub == "push" || sub == "delete" || sub == "" {
		fs.Func("if-version", "write only if the document's store version is `N` (0: it must not exist); otherwise exit 5",
			func(v string) error {
				var n int64
				if _, err := fmt.Sscan(v, &n); err != nil || n < 0 || fmt.Sprint(n) != v {
					return fmt.Errorf("not a version: %q", v)
				}
				c.ifVersion, c.ifVersionGiven = store.Version(n), true
				return nil
			})
	}
	return fs, c
}

// fleetExitHelp adds what the exit codes mean for fleet.
const fleetExitHelp = `
for fleet: 1 an invalid intent (nothing written), a document not found, or (status) a host not
Ready, stale or without a status; 3 etcd unreachable; 5 the document's version is not the one
expected (--if-version, or another pusher wrote between push's read and its write)
`

// check validates the connection options and, when needDoc, the place
// (exactly one of --host and --group) and the document's name.
func (c *fleetConn) check(needPlace, needDoc bool) error {
	if c.endpoints == "" {
		return errors.New("--etcd-endpoints is required")
	}
	if len(c.endpointList()) == 0 {
		return fmt.Errorf("--etcd-endpoints %q: no URL", c.endpoints)
	}
	if (c.cert == "") != (c.key == "") {
		return errors.New("--etcd-cert and --etcd-key go together")
	}
	if c.timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if c.host != "" && c.group != "" {
		return errors.New("give --host or --group, not both")
	}
	if needPlace && c.host == "" && c.group == "" {
		return errors.New("give --host HOST or --group GROUP")
	}
	if c.host != "" {
		if err := fleet.CheckName("host", c.host); err != nil {
			return err
		}
	}
	if c.group != "" {
		if err := fleet.CheckName("group", c.group); err != nil {
			return err
		}
	}
	if needDoc {
		if err := fleet.CheckName("document", c.doc); err != nil {
			return err
		}
	}
	return nil
}

func (c *fleetConn) endpointList() []string {
	var eps []string
	for _, e := range strings.Split(c.endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	return eps
}

func (c *fleetConn) layout() fleet.Layout { return fleet.Layout{Prefix: c.prefix} }

// dir is the directory of the place (--host or --group).
func (c *fleetConn) dir() string {
	if c.host != "" {
		return c.layout().Host(c.host)
	}
	return c.layout().Group(c.group)
}

// docKey is the key of the named document.
func (c *fleetConn) docKey() string { return c.dir() + "/" + c.doc }

// parse parses the arguments of fleet subcommand fs and checks c. With
// needDoc the document is named (--name or the one argument) and so is
// its place; without, no argument is taken. On a usage error it prints it
// and returns its exit code and false.
func (c *fleetConn) parse(g *globals, fs *flag.FlagSet, args []string, needDoc bool) (int, bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return code, false
	}
	if needDoc {
		if msg, ok := fleetDocArg(fs.Args(), c); !ok {
			return usageError(g, fs, msg), false
		}
	} else if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments"), false
	}
	if err := c.check(needDoc, needDoc); err != nil {
		return usageError(g, fs, err.Error()), false
	}
	return exitOK, true
}

// fleetDocArg takes the document's name from the one argument, when
// --name is not given; it returns a usage message and false otherwise.
func fleetDocArg(args []string, c *fleetConn) (string, bool) {
	switch {
	case len(args) == 0 && c.doc != "":
		return "", true
	case len(args) == 1 && c.doc == "":
		c.doc = args[0]
		return "", true
	case len(args) == 0:
		return "give the document's name: --name DOC", false
	}
	return "give the document's name once: --name DOC or DOC", false
}

// open connects to etcd (lazily: the first operation finds out whether
// it answers) and returns a context bounded by --timeout; done cancels
// it and closes the store. A configuration etcd refuses is a usage error
// of fs: open prints it and returns its exit code and false.
func (c *fleetConn) open(g *globals, fs *flag.FlagSet) (st *etcd.Store, ctx context.Context, done func(), code int, ok bool) {
	st, err := etcd.New(etcd.Config{Endpoints: c.endpointList(), CAFile: c.ca, CertFile: c.cert, KeyFile: c.key,
		DialTimeout: c.timeout, RequestTimeout: c.timeout})
	if err != nil {
		return nil, nil, nil, usageError(g, fs, err.Error()), false
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	return st, ctx, func() { cancel(); st.Close() }, exitOK, true
}

// fail prints a store error and returns its exit code: exitInternal for
// an unreachable etcd (naming the endpoints), exitConflict for a
// compare-and-swap refused, exitFailed for a document not found.
func (c *fleetConn) fail(g *globals, verb string, err error) int {
	var cas *store.CASError
	switch {
	case errors.As(err, &cas):
		stored := "it does not exist"
		if cas.Stored != store.NoVersion {
			stored = "it is at version " + cas.Stored.String()
		}
		expected := "not to exist"
		if cas.Expected != store.NoVersion {
			expected = "at version " + cas.Expected.String()
		}
		fmt.Fprintf(g.stderr, "netagent: fleet %s: %s changed: expected it %s, but %s (someone else wrote it); nothing was written\n",
			verb, c.source(cas.Key), expected, stored)
		return exitConflict
	case errors.Is(err, store.ErrNotFound):
		fmt.Fprintf(g.stderr, "netagent: fleet %s: %v\n", verb, err)
		return exitFailed
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		fmt.Fprintf(g.stderr, "netagent: fleet %s: the document is larger than etcd takes in one request (its --max-request-bytes, 1.5 MiB by default): split it into several documents; nothing was written (%v)\n", verb, err)
		return exitFailed
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(g.stderr, "netagent: fleet %s: etcd at %s unreachable within %v: %v\n", verb, strings.Join(c.endpointList(), ", "), c.timeout, err)
		return exitInternal
	}
	fmt.Fprintf(g.stderr, "netagent: fleet %s: etcd at %s: %v\n", verb, strings.Join(c.endpointList(), ", "), err)
	return exitInternal
}

// source names a key as the daemon does (hosts/h1/base.json), or as it is.
func (c *fleetConn) source(key string) string {
	if s := c.layout().Source(key); s != "" {
		return s
	}
	return key
}
