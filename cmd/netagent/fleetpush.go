package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

// runFleetPush validates FILE as `netagent validate` does, then with the
// documents already in the same directory (every member merges them: an
// object two of them define fails on every host), and writes it with a
// compare-and-swap: on the version --if-version gives, or on the version
// it read just before.
func runFleetPush(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "push")
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
	before, err := os.ReadFile(file) // the bytes validated, if the file does not change meanwhile
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	intended, parsed, code := loadIntentFiles(g, append([]string{file}, c.with...))
	if intended == nil {
		return code
	}
	items := fmt.Sprintf("%d items", intended.Len())
	if len(c.with) > 0 {
		items += " with the --with files"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	if !bytes.Equal(before, data) {
		fmt.Fprintf(g.stderr, "netagent: %s changed while it was validated; nothing was written\n", file)
		return exitInternal
	}
	if c.try {
		if data, err = c.trialEnvelope(data); err != nil {
			return usageError(g, fs, err.Error())
		}
		items += fmt.Sprintf(", on trial for %s with %d probes", c.trialTimeout, len(c.probes))
	}
	st, ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	key := c.docKey()
	cur, siblings, err := fleetReadDir(ctx, st, c.dir(), key)
	if err != nil {
		return c.fail(g, "push", err)
	}
	if code := fleetCheckMerge(g, file, parsed[file], siblings, c); code != exitOK {
		return code
	}
	expect := cur.Version
	if c.ifVersionGiven {
		expect = c.ifVersion
	}
	if expect == cur.Version && cur.Version != store.NoVersion && bytes.Equal(cur.Value, data) {
		fmt.Fprintf(g.stderr, "netagent: %s: unchanged at version %s; nothing written\n", c.source(key), cur.Version)
		fmt.Fprintln(g.stdout, cur.Version)
		return exitOK
	}
	if fleetPushHook != nil {
		fleetPushHook()
	}
	v, err := st.WriteCAS(ctx, key, data, expect)
	if err != nil {
		return c.fail(g, "push", err)
	}
	was := "new"
	if expect != store.NoVersion {
		was = "replacing version " + expect.String()
	}
	fmt.Fprintf(g.stderr, "netagent: pushed %s (%s): version %s, %s\n", c.source(key), items, v, was)
	fmt.Fprintln(g.stdout, v)
	return exitOK
}

// trialEnvelope wraps the intent data in a trial envelope (push --try):
// each member applies it on trial and confirms it when its probes pass
// (agent/storetrial.go).
func (c *fleetConn) trialEnvelope(data []byte) ([]byte, error) {
	if c.trialTimeout <= 0 {
		return nil, errors.New("--trial-timeout must be positive")
	}
	for _, spec := range c.probes {
		if _, err := probe.Parse(spec); err != nil {
			return nil, fmt.Errorf("--probe %s: %w", spec, err)
		}
	}
	compact := &bytes.Buffer{}
	if err := json.Compact(compact, data); err != nil {
		return nil, err
	}
	return json.Marshal(member.TrialEnvelope{
		Trial:  member.TrialSpec{Timeout: c.trialTimeout.String(), Probes: c.probes},
		Intent: compact.Bytes(),
	})
}

// fleetPushHook, when set (by tests), runs between push's read and its
// write: where another pusher's write would make the push's CAS fail.
var fleetPushHook func()

// fleetReadDir lists dir at one revision and returns key's entry (Version
// NoVersion when it does not exist) and the other documents of dir.
func fleetReadDir(ctx context.Context, st *etcd.Store, dir, key string) (cur store.Entry, others []store.Entry, err error) {
	entries, _, err := st.List(ctx, dir)
	if err != nil {
		return cur, nil, err
	}
	for _, e := range entries {
		switch {
		case e.Key == key:
			cur = e
		case !strings.Contains(strings.TrimPrefix(e.Key, dir+"/"), "/"): // a document, not below one
			others = append(others, e)
		}
	}
	return cur, others, nil
}

// fleetCheckMerge merges the pushed file with the other documents of its
// directory, as every member of the host or group will: an object two of
// them define (intent.Merge's conflicts) fails on every member, so it is
// an invalid intent here (exit 1), nothing written. The other documents
// are named by their source (hosts/h1/other.json). References between
// documents are not checked here (members merge more documents than one
// directory); a stored document that does not parse is reported, not
// held against the push.
func fleetCheckMerge(g *globals, file string, pushed *intent.Intent, others []store.Entry, c *fleetConn) int {
	if len(others) == 0 {
		return exitOK
	}
	files := map[string]*intent.Intent{file: pushed}
	for _, e := range others {
		src := c.source(e.Key)
		raw := e.Value
		if env, _, err := member.ParseTrialEnvelope(raw); err == nil {
			raw = env.Intent // a trial: its members merge its intent
		}
		in, err := intent.Parse(raw)
		if err != nil {
			fmt.Fprintf(g.stderr, "netagent: warning: %s in etcd is invalid itself (its hosts reject it): %v\n", src, err)
			continue
		}
		files[src] = in
	}
	if _, err := intent.Merge(files); err != nil {
		printIntentErrors(g, err)
		return exitFailed
	}
	return exitOK
}

// runFleetDelete removes a document: on the version --if-version gives,
// or on the version it read just before.
func runFleetDelete(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "delete")
	if code, ok := c.parse(g, fs, args, true); !ok {
		return code
	}
	if c.ifVersionGiven && c.ifVersion == store.NoVersion {
		return usageError(g, fs, "--if-version 0 names a document that does not exist: nothing to delete")
	}
	st, ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	key := c.docKey()
	expect := c.ifVersion
	if !c.ifVersionGiven {
		cur, err := st.Read(ctx, key)
		if err != nil {
			return c.fail(g, "delete", err)
		}
		expect = cur.Version
	}
	if err := st.DeleteCAS(ctx, key, expect); err != nil {
		return c.fail(g, "delete", err)
	}
	fmt.Fprintf(g.stderr, "netagent: deleted %s (version %s)\n", c.source(key), expect)
	return exitOK
}

// runFleetGet prints a document as stored.
func runFleetGet(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "get")
	if code, ok := c.parse(g, fs, args, true); !ok {
		return code
	}
	st, ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	e, err := st.Read(ctx, c.docKey())
	if err != nil {
		return c.fail(g, "get", err)
	}
	fmt.Fprintf(g.stderr, "netagent: %s: version %s\n", c.source(e.Key), e.Version)
	g.stdout.Write(e.Value)
	return exitOK
}

// fleetDoc is a document as `fleet list --json` prints it.
type fleetDoc struct {
	Source  string `json:"source"`
	Key     string `json:"key"`
	Version int64  `json:"version"`
	Bytes   int    `json:"bytes"`
}

// runFleetList lists the documents of a host, a group or every one.
func runFleetList(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "list")
	asJSON := fs.Bool("json", false, "print the list as JSON")
	if code, ok := c.parse(g, fs, args, false); !ok {
		return code
	}
	st, ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	dirs := []string{c.layout().Hosts(), c.layout().Groups()}
	if c.host != "" || c.group != "" {
		dirs = []string{c.dir()}
	}
	docs := []fleetDoc{}
	for _, dir := range dirs {
		entries, _, err := st.List(ctx, dir)
		if err != nil {
			return c.fail(g, "list", err)
		}
		for _, e := range entries {
			docs = append(docs, fleetDoc{Source: c.source(e.Key), Key: e.Key, Version: int64(e.Version), Bytes: len(e.Value)})
		}
	}
	if *asJSON {
		if writeJSON(g, docs) != nil {
			return exitInternal
		}
		return exitOK
	}
	if len(docs) == 0 {
		fmt.Fprintln(g.stdout, "no documents")
		return exitOK
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOCUMENT\tVERSION\tBYTES")
	for _, d := range docs {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", d.Source, d.Version, d.Bytes)
	}
	tw.Flush()
	return exitOK
}
