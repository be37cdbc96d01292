//go:build !nofleet

package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/termsafe"
)

// runFleetPush validates FILE as `netagent validate` does, then (member's
// Push) with the documents already in the same directory (every member
// merges them: an object two of them define fails on every host), and
// writes it with a compare-and-swap: on the version --if-version gives,
// or on the version it read just before.
func runFleetPush(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "push")
	fs.BoolVar(&g.asJSON, "json", false, "print what the push did as JSON (member.Pushed) instead of the version alone")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(g, fs, "give one intent file")
	}
	file := fs.Arg(0)
	if c.doc == "" {
		c.doc = filepath.Base(file)
	}
	if err := c.check(true, true); err != nil {
		return usageError(g, fs, err.Error())
	}
	push, items, code := c.validatePush(g, file)
	if push == nil {
		return code
	}
	if c.try {
		env, err := member.EnvelopeWith(push.Data, member.TrialOptions{Timeout: c.trialTimeout, ProbeTimeout: c.probeTimeout,
			Probes: c.probes, ProbesMustPassBefore: c.mustPassBefore}) // checks the --try options
		if err != nil {
			return usageError(g, fs, err.Error())
		}
		push.Data = env
		items += fmt.Sprintf(", on trial for %s with %s", c.trialTimeout, plural.N(len(c.probes), "probe"))
	}
	return c.push(g, fs, push, items)
}

// validatePush validates file with the --with files and returns what to
// push, and what it holds as push prints it; nil and the exit code when
// it is invalid or changed while it was validated.
func (c *fleetConn) validatePush(g *globals, file string) (*member.Push, string, int) {
	before, err := os.ReadFile(file) // the bytes validated, if the file does not change meanwhile
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, "", exitInternal
	}
	intended, parsed, code := loadIntentFiles(g, append([]string{file}, c.with...))
	if intended == nil {
		return nil, "", code
	}
	items := plural.N(intended.Len(), "item")
	if len(c.with) > 0 {
		items += " with the --with files"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, "", exitInternal
	}
	if !bytes.Equal(before, data) {
		fmt.Fprintf(g.stderr, "netagent: %s changed while it was validated; nothing was written\n", file)
		return nil, "", exitInternal
	}
	return &member.Push{Place: c.place(), Doc: c.doc, Data: data, File: file, Parsed: parsed[file], IfVersion: c.ifVersion}, items, exitOK
}

// push writes p (member's Client.Push) and prints what it did.
func (c *fleetConn) push(g *globals, fs *flag.FlagSet, p *member.Push, items string) int {
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	p.BeforeWrite = fleetPushHook
	res, err := c.client.Push(ctx, *p)
	for _, w := range res.Warnings {
		fmt.Fprintf(g.stderr, "netagent: warning: %s\n", w)
	}
	var merge *member.MergeError
	switch {
	case errors.As(err, &merge):
		printIntentErrors(g, merge.Err)
		c.replaceHint(g, p, merge.Docs)
		return exitFailed
	case err != nil:
		return c.fail(g, "push", err)
	case res.Unchanged:
		fmt.Fprintf(g.stderr, "netagent: %s: unchanged at version %s; nothing written\n", res.Source, res.Version)
	default:
		was := "new"
		if res.Replaced != 0 {
			was = "replacing version " + res.Replaced.String()
		}
		fmt.Fprintf(g.stderr, "netagent: pushed %s (%s): version %s, %s\n", res.Source, items, res.Version, was)
	}
	if g.asJSON {
		return jsonCode(writeJSON(g, res))
	}
	fmt.Fprintln(g.stdout, res.Version)
	return exitOK
}

// replaceHint says, after a push refused for conflicting with the
// documents docs of its place, how to push the file as one of them
// instead (--name replaces a document).
func (c *fleetConn) replaceHint(g *globals, p *member.Push, docs []string) {
	where := "--group " + p.Place.Group
	if p.Place.Host != "" {
		where = "--host " + p.Place.Host
	}
	for _, d := range docs {
		fmt.Fprintf(g.stderr, "netagent: hint: to replace %s with %s, push it under that name: netagent fleet push %s --name %s %s\n",
			termsafe.String(c.client.Source(c.client.DocKey(p.Place, d))), termsafe.String(p.File), where, termsafe.String(d), termsafe.String(p.File))
	}
}

// fleetPushHook, when set (by tests), runs between push's read and its
// write: where another pusher's write would make the push's CAS fail.
var fleetPushHook func()

// runFleetDelete removes a document: on the version --if-version gives,
// or on the version it read just before.
func runFleetDelete(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "delete")
	asJSON := fs.Bool("json", false, "print the document deleted as JSON (member.StoredDoc: source, key, version)")
	if code, ok := c.parse(g, fs, args, true); !ok {
		return code
	}
	if c.ifVersion != nil && *c.ifVersion == 0 {
		return usageError(g, fs, "--if-version 0 names a document that does not exist: nothing to delete")
	}
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	v, err := c.client.Delete(ctx, c.place(), c.doc, c.ifVersion)
	if err != nil {
		return c.fail(g, "delete", err)
	}
	key := c.client.DocKey(c.place(), c.doc)
	fmt.Fprintf(g.stderr, "netagent: deleted %s (version %s)\n", c.client.Source(key), v)
	if *asJSON {
		return jsonCode(writeJSON(g, member.DeletedDocOf(c.client.Source(key), key, v)))
	}
	return exitOK
}

// runFleetGet prints a document as stored.
func runFleetGet(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "get")
	asJSON := fs.Bool("json", false, "print the document with its key and version as JSON (member.StoredDoc)")
	if code, ok := c.parse(g, fs, args, true); !ok {
		return code
	}
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	e, err := c.client.Get(ctx, c.place(), c.doc)
	if err != nil {
		return c.fail(g, "get", err)
	}
	fmt.Fprintf(g.stderr, "netagent: %s: version %s\n", c.client.Source(e.Key), e.Version)
	if *asJSON {
		return jsonCode(writeJSON(g, member.StoredDocOf(c.client.Source(e.Key), e)))
	}
	g.stdout.Write(e.Value)
	return exitOK
}

// runFleetList lists the documents of a host, a group or every one.
func runFleetList(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "list")
	asJSON := fs.Bool("json", false, "print the list as JSON")
	if code, ok := c.parse(g, fs, args, false); !ok {
		return code
	}
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	docs, err := c.client.List(ctx, c.place())
	if err != nil {
		return c.fail(g, "list", err)
	}
	if *asJSON {
		if writeJSON(g, docs) != nil {
			return exitInternal
		}
		return exitOK
	}
	fleetListPrint(g, docs)
	return exitOK
}

// fleetListPrint writes the documents as a table.
func fleetListPrint(g *globals, docs []member.ListedDoc) {
	if len(docs) == 0 {
		fmt.Fprintln(g.stdout, "no documents")
		return
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOCUMENT\tVERSION\tBYTES")
	for _, d := range docs {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", d.Source, d.Version, d.Bytes)
	}
	tw.Flush()
}
