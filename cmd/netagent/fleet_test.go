//go:build !nofleet

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/internal/testbin"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

const (
	fleetBase   = `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 1500}]}`
	fleetRoutes = `{"version": 1, "routes": [{"to": "203.0.113.0/24", "type": "blackhole"}]}`
)

// fleetEnv is an etcd of one test and a client of it.
type fleetEnv struct {
	srv  *etcdtest.Server
	st   *etcd.Store
	args []string // --etcd-endpoints, --etcd-prefix (and the TLS files)
}

func newFleetEnv(t *testing.T, opts etcdtest.Options) *fleetEnv {
	t.Helper()
	srv := etcdtest.Start(t, opts)
	cfg := etcd.Config{Endpoints: srv.Endpoints()}
	args := []string{"--etcd-endpoints", srv.ClientURL, "--etcd-prefix", "/fleet"}
	if srv.TLS != nil {
		cfg.CAFile, cfg.CertFile, cfg.KeyFile = srv.TLS.CAFile, srv.TLS.CertFile, srv.TLS.KeyFile
		args = append(args, "--etcd-ca", srv.TLS.CAFile, "--etcd-cert", srv.TLS.CertFile, "--etcd-key", srv.TLS.KeyFile)
	}
	st, err := etcd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fleetEnv{srv: srv, st: st, args: args}
}

// fleet runs `netagent fleet SUB ARGS... <connection options>`.
func (e *fleetEnv) fleet(sub string, args ...string) (int, string, string) {
	return runCLI(append(append([]string{"fleet", sub}, args...), e.args...)...)
}

// keys returns every key under the prefix and its value.
func (e *fleetEnv) keys(t *testing.T) map[string]string {
	t.Helper()
	entries, _, err := e.st.List(context.Background(), "/fleet")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, en := range entries {
		m[en.Key] = string(en.Value)
	}
	return m
}

func (e *fleetEnv) read(t *testing.T, key string) store.Entry {
	t.Helper()
	en, err := e.st.Read(context.Background(), key)
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return en
}

// A push to a host and one to a group land on their keys as the files
// are; the printed version is the store's; a push of the same bytes
// writes nothing; get and list read them back; delete removes one.
func TestFleetPushHostAndGroup(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	routes := writeIntent(t, "routes.json", fleetRoutes)

	code, out, errOut := e.fleet("push", "--host", "h1", base)
	if code != exitOK {
		t.Fatalf("push --host h1: exit %d\n%s", code, errOut)
	}
	en := e.read(t, "/fleet/hosts/h1/base.json")
	if string(en.Value) != fleetBase || strings.TrimSpace(out) != en.Version.String() {
		t.Errorf("push --host h1: printed %q, stored %q at %s", out, en.Value, en.Version)
	}
	if !strings.Contains(errOut, "pushed hosts/h1/base.json (1 item): version "+en.Version.String()+", new") {
		t.Errorf("push: stderr %q", errOut)
	}

	// Options anywhere, --name for the document.
	code, out, errOut = runCLI(append([]string{"fleet", "--group", "edge-eu", "push", routes, "--name", "20-routes.json"}, e.args...)...)
	if code != exitOK {
		t.Fatalf("push --group edge-eu: exit %d\n%s", code, errOut)
	}
	gen := e.read(t, "/fleet/groups/edge-eu/20-routes.json")
	if string(gen.Value) != fleetRoutes || strings.TrimSpace(out) != gen.Version.String() {
		t.Errorf("push --group: printed %q, stored %q at %s", out, gen.Value, gen.Version)
	}
	if got := e.keys(t); len(got) != 2 {
		t.Errorf("keys after two pushes: %v", got)
	}

	// The same bytes again: nothing written, the same version printed.
	code, out, errOut = e.fleet("push", "--host", "h1", base)
	if code != exitOK || strings.TrimSpace(out) != en.Version.String() || !strings.Contains(errOut, "unchanged") {
		t.Errorf("push again: exit %d, %q\n%s", code, out, errOut)
	}
	if again := e.read(t, "/fleet/hosts/h1/base.json"); again.Version != en.Version {
		t.Errorf("push of the same bytes wrote version %s", again.Version)
	}

	// A new content replaces the version read.
	os.WriteFile(base, []byte(strings.Replace(fleetBase, "1500", "9000", 1)), 0o644)
	code, out, errOut = e.fleet("push", "--host", "h1", base)
	v2 := e.read(t, "/fleet/hosts/h1/base.json")
	if code != exitOK || strings.TrimSpace(out) != v2.Version.String() || v2.Version <= en.Version ||
		!strings.Contains(errOut, "replacing version "+en.Version.String()) {
		t.Errorf("push of a change: exit %d, %q, stored at %s\n%s", code, out, v2.Version, errOut)
	}

	code, out, errOut = e.fleet("get", "--group", "edge-eu", "20-routes.json")
	if code != exitOK || out != fleetRoutes || !strings.Contains(errOut, "version "+gen.Version.String()) {
		t.Errorf("get: exit %d, %q\n%s", code, out, errOut)
	}
	code, out, _ = e.fleet("list")
	if code != exitOK || !strings.Contains(out, "hosts/h1/base.json") || !strings.Contains(out, "groups/edge-eu/20-routes.json") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, out, _ = e.fleet("list", "--json", "--host", "h1")
	var docs []member.ListedDoc
	if code != exitOK || json.Unmarshal([]byte(out), &docs) != nil || len(docs) != 1 ||
		docs[0] != (member.ListedDoc{Source: "hosts/h1/base.json", Key: "/fleet/hosts/h1/base.json", Version: int64(v2.Version), Bytes: len(fleetBase)}) {
		t.Errorf("list --json --host h1: exit %d\n%s", code, out)
	}

	// delete: with a stale --if-version refused, without it removed.
	if code, _, errOut := e.fleet("delete", "--host", "h1", "--name", "base.json", "--if-version", en.Version.String()); code != exitConflict ||
		!strings.Contains(errOut, "hosts/h1/base.json changed: expected it at version "+en.Version.String()+", but it is at version "+v2.Version.String()) {
		t.Errorf("delete --if-version stale: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := e.fleet("delete", "--host", "h1", "base.json"); code != exitOK {
		t.Errorf("delete: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := e.fleet("delete", "--host", "h1", "base.json"); code != exitFailed || !strings.Contains(errOut, "not found") {
		t.Errorf("delete of a deleted document: exit %d\n%s", code, errOut)
	}
	if got := e.keys(t); len(got) != 1 {
		t.Errorf("keys after the delete: %v", got)
	}
}

// A document larger than etcd takes (1.5 MiB by default) is refused with
// the limit named, exit 1, nothing written.
func TestFleetPushTooLarge(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	var b strings.Builder
	b.WriteString(`{"version": 1, "routes": [`)
	for i := range 40000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"to": "10.%d.%d.0/24", "type": "blackhole"}`, i/256, i%256)
	}
	b.WriteString("]}")
	big := writeIntent(t, "big.json", b.String())
	code, _, errOut := e.fleet("push", "--group", "edge", big)
	if code != exitFailed || !strings.Contains(errOut, "larger than etcd takes in one request") {
		t.Errorf("push of %d bytes: exit %d\n%s", b.Len(), code, errOut)
	}
	if got := e.keys(t); len(got) != 0 {
		t.Errorf("keys: %v", got)
	}
}

// --if-version N writes only on version N; 0 only when the document does
// not exist.
func TestFleetPushIfVersion(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	code, out, errOut := e.fleet("push", "--host", "h1", "--if-version", "0", base)
	if code != exitOK {
		t.Fatalf("--if-version 0 on nothing: exit %d\n%s", code, errOut)
	}
	v1 := strings.TrimSpace(out)
	os.WriteFile(base, []byte(fleetBase+" "), 0o644)
	code, _, errOut = e.fleet("push", "--host", "h1", "--if-version", "0", base)
	if code != exitConflict || !strings.Contains(errOut, "hosts/h1/base.json changed: expected it not to exist, but it is at version "+v1) ||
		!strings.Contains(errOut, "nothing was written") {
		t.Errorf("--if-version 0 on an existing document: exit %d\n%s", code, errOut)
	}
	if en := e.read(t, "/fleet/hosts/h1/base.json"); en.Version.String() != v1 || string(en.Value) != fleetBase {
		t.Errorf("a refused push changed the document: %q at %s", en.Value, en.Version)
	}
	if code, _, errOut := e.fleet("push", "--host", "h1", "--if-version", v1, base); code != exitOK {
		t.Errorf("--if-version %s (current): exit %d\n%s", v1, code, errOut)
	}
}

// An invalid file, or one that conflicts with another document of its
// directory, is refused with the JSON path and nothing is written.
func TestFleetPushInvalidWritesNothing(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	bad := writeIntent(t, "bad.json", `{"version": 1, "interfaces": [{"name": "v", "type": "vlan", "vlan": {"parent": "eth9", "id": 5000}}]}`)
	code, out, errOut := e.fleet("push", "--group", "edge", bad)
	if code != exitFailed || out != "" || !strings.Contains(errOut, bad+": interfaces[0].vlan.id: 5000 is out of range 1-4094") ||
		!strings.Contains(errOut, "nothing was changed") {
		t.Errorf("push of an invalid file: exit %d %q\n%s", code, out, errOut)
	}
	if got := e.keys(t); len(got) != 0 {
		t.Errorf("an invalid push wrote %v", got)
	}

	// eth0 defined by a document already in the group, and by the file.
	base := writeIntent(t, "base.json", fleetBase)
	if code, _, errOut := e.fleet("push", "--group", "edge", base); code != exitOK {
		t.Fatalf("push: exit %d\n%s", code, errOut)
	}
	dup := writeIntent(t, "dup.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`)
	code, _, errOut = e.fleet("push", "--group", "edge", dup)
	if code != exitFailed || !strings.Contains(errOut, dup+`: interfaces[0]: interface "eth0" is also defined at interfaces[0] in groups/edge/base.json`) {
		t.Errorf("push of a conflicting document: exit %d\n%s", code, errOut)
	}
	// Another host's documents do not count.
	if code, _, errOut := e.fleet("push", "--host", "h1", dup); code != exitOK {
		t.Errorf("push to a host: exit %d\n%s", code, errOut)
	}
	if got := e.keys(t); len(got) != 2 {
		t.Errorf("keys: %v", got)
	}

	// A route through an interface another document defines: valid with
	// --with that document, which is not pushed.
	route := writeIntent(t, "route.json", `{"version": 1, "routes": [{"to": "default", "via": "192.0.2.1", "dev": "eth0"}]}`)
	if code, _, errOut := e.fleet("push", "--group", "edge-routes", route); code != exitFailed || !strings.Contains(errOut, route+": routes[0].dev") {
		t.Errorf("push of a route through an undefined interface: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := e.fleet("push", "--group", "edge-routes", "--with", base, route); code != exitOK {
		t.Errorf("push --with: exit %d\n%s", code, errOut)
	}
	if got := e.keys(t); len(got) != 3 || got["/fleet/groups/edge-routes/route.json"] == "" {
		t.Errorf("keys: %v", got)
	}
}

// Two pushers expecting the same version race (two processes of the
// built binary): exactly one wins, the other exits 5 saying so, and the
// stored document is the winner's.
func TestFleetPushRace(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	bin := testbin.Netagent(t)
	base := writeIntent(t, "base.json", fleetBase)
	code, out, errOut := e.fleet("push", "--group", "edge", base)
	if code != exitOK {
		t.Fatalf("push: exit %d\n%s", code, errOut)
	}
	version := strings.TrimSpace(out)
	for round := range 5 {
		files := [2]string{
			writeIntent(t, "base.json", strings.Replace(fleetBase, "1500", strconv.Itoa(2000+2*round), 1)),
			writeIntent(t, "base.json", strings.Replace(fleetBase, "1500", strconv.Itoa(2001+2*round), 1)),
		}
		var cmds [2]*exec.Cmd
		var outs, errs [2]bytes.Buffer
		for i := range cmds {
			cmds[i] = exec.Command(bin, append([]string{"fleet", "push", "--group", "edge", "--if-version", version, files[i]}, e.args...)...)
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &errs[i]
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		var codes [2]int
		for i, c := range cmds {
			err := c.Wait()
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
		}
		winner := -1
		switch codes {
		case [2]int{exitOK, exitConflict}:
			winner = 0
		case [2]int{exitConflict, exitOK}:
			winner = 1
		default:
			t.Fatalf("round %d: exit codes %v, want one 0 and one 5\n%s\n%s", round, codes, errs[0].String(), errs[1].String())
		}
		loser := 1 - winner
		newVersion := strings.TrimSpace(outs[winner].String())
		if want := "changed: expected it at version " + version + ", but it is at version " + newVersion; !strings.Contains(errs[loser].String(), want) {
			t.Errorf("round %d: the loser says %q, want %q", round, errs[loser].String(), want)
		}
		wantData, _ := os.ReadFile(files[winner])
		if en := e.read(t, "/fleet/groups/edge/base.json"); en.Version.String() != newVersion || !bytes.Equal(en.Value, wantData) {
			t.Errorf("round %d: stored %q at %s, want the winner's at %s", round, en.Value, en.Version, newVersion)
		}
		version = newVersion
	}
}

// Without --if-version, a push replaces only the version it read: another
// pusher's write between its read and its write makes it fail (exit 5)
// rather than overwrite a document it never saw.
func TestFleetPushLostRace(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	if code, _, errOut := e.fleet("push", "--host", "h1", base); code != exitOK {
		t.Fatalf("push: exit %d\n%s", code, errOut)
	}
	read := e.read(t, "/fleet/hosts/h1/base.json")
	other := strings.Replace(fleetBase, "1500", "1400", 1)
	var theirs store.Version
	fleetPushHook = func() {
		v, err := e.st.WriteCAS(context.Background(), read.Key, []byte(other), read.Version)
		if err != nil {
			t.Error(err)
		}
		theirs = v
	}
	defer func() { fleetPushHook = nil }()
	os.WriteFile(base, []byte(strings.Replace(fleetBase, "1500", "9000", 1)), 0o644)
	code, out, errOut := e.fleet("push", "--host", "h1", base)
	want := fmt.Sprintf("hosts/h1/base.json changed: expected it at version %s, but it is at version %s (someone else wrote it); nothing was written", read.Version, theirs)
	if code != exitConflict || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("push that lost a race: exit %d %q, want %d and %q\n%s", code, out, exitConflict, want, errOut)
	}
	if en := e.read(t, read.Key); string(en.Value) != other || en.Version != theirs {
		t.Errorf("stored %q at %s, want the other pusher's at %s", en.Value, en.Version, theirs)
	}
}

// fleetWriteStatus writes a host's status as a daemon would (without the
// lease: the test is the writer).
func fleetWriteStatus(t *testing.T, e *fleetEnv, s fleet.Status) {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	key := fleet.Layout{Prefix: "/fleet"}.Status(s.Host)
	cur, err := e.st.Read(context.Background(), key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := e.st.WriteCAS(context.Background(), key, data, cur.Version); err != nil {
		t.Fatal(err)
	}
}

// fleet status: a line per host (Ready, not Ready and Degraded with its
// condition's message, a pending trial, a stale status, a host with
// documents and no status, hosts current with their documents or behind
// them), exit 1 while one is not Ready or current, 0 when all are; --json
// lists the statuses as written.
func TestFleetStatus(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	if code, out, errOut := e.fleet("status"); code != exitOK || !strings.Contains(out, "no hosts") {
		t.Errorf("status of an empty fleet: exit %d\n%s%s", code, out, errOut)
	}
	push := func(args ...string) int64 {
		t.Helper()
		code, out, errOut := e.fleet("push", args...)
		v, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if code != exitOK || err != nil {
			t.Fatalf("push %v: exit %d\n%s", args, code, errOut)
		}
		return v
	}
	base := writeIntent(t, "base.json", fleetBase)
	routes := writeIntent(t, "routes.json", fleetRoutes)
	push("--host", "h4", base)
	edge := push("--group", "edge", base)
	coreA := push("--group", "core", "--name", "a.json", base)
	push("--group", "core", "--name", "b.json", routes)

	now := time.Now().UTC()
	digest := "sha256:0123456789abcdef0123"
	fleetWriteStatus(t, e, fleet.Status{Host: "h1", Version: 3, Digest: digest, Ready: true, Updated: now,
		Revisions: map[string]int64{"groups/edge/base.json": edge}})
	fleetWriteStatus(t, e, fleet.Status{Host: "h2", Version: 2, Digest: digest, Ready: false, Degraded: true, Updated: now,
		Conditions: []fleet.Condition{{Type: "Degraded", Status: true, Reason: "SourceUnreachable", Message: "intent source unreachable"}},
		Trial:      &fleet.Trial{Source: "groups/edge/base.json", Revision: 42, State: "pending"}})
	fleetWriteStatus(t, e, fleet.Status{Host: "h3", Version: 3, Digest: digest, Ready: true, Updated: now.Add(-10 * time.Minute)})
	fleetWriteStatus(t, e, fleet.Status{Host: "h5", Version: 3, Digest: digest, Ready: true, Updated: now,
		Revisions: map[string]int64{"groups/edge/base.json": edge - 1}})
	fleetWriteStatus(t, e, fleet.Status{Host: "h6", Version: 3, Digest: digest, Ready: true, Updated: now,
		Revisions: map[string]int64{"groups/core/a.json": coreA, "hosts/h6/old.json": 2}})
	// Written ten minutes ago under a lease: live while it exists.
	fleetWriteStatus(t, e, fleet.Status{Host: "h7", Version: 3, Digest: digest, Ready: true, Updated: now.Add(-10 * time.Minute), Lease: "15s"})
	code, out, errOut := e.fleet("status")
	if code != exitFailed {
		t.Errorf("status with hosts not Ready: exit %d, want %d\n%s", code, exitFailed, errOut)
	}
	lines := strings.Split(out, "\n")
	want := [][]string{
		{"HOST", "VERSION", "READY", "DEGRADED", "DOCUMENTS", "TRIAL", "LAST SEEN", "MESSAGE"},
		{"h1", "3 (0123456789ab)", "True", "False", "current", "-", "s ago"},
		{"h2", "2 (", "False", "True", "pending groups/edge/base.json@42", "Degraded: intent source unreachable"},
		{"h3", "stale", "10m0s ago", "stale: last written 10m0s ago"},
		{"h4", "no status"},
		{"h5", "True", "1 behind", fmt.Sprintf("behind: groups/edge/base.json %d < %d", edge-1, edge)},
		{"h6", "True", "2 behind", "behind: groups/core/b.json new, hosts/h6/old.json deleted"},
		{"h7", "True", "< 15s ago"},
		{"2 of 7 hosts ready and current"},
	}
	if len(lines) < len(want) {
		t.Fatalf("status:\n%s", out)
	}
	for i, words := range want {
		for _, w := range words {
			if !strings.Contains(lines[i], w) {
				t.Errorf("status line %d lacks %q:\n%s", i, w, out)
			}
		}
	}

	code, out, _ = e.fleet("status", "--json")
	var list []fleet.Status
	if code != exitFailed || json.Unmarshal([]byte(out), &list) != nil || len(list) != 6 || list[1].Host != "h2" || list[5].Lease != "15s" ||
		list[1].Trial == nil || list[1].Conditions[0].Message != "intent source unreachable" {
		t.Errorf("status --json: exit %d\n%s", code, out)
	}

	// Every host Ready, fresh and current: exit 0.
	for _, h := range []string{"h2", "h3", "h4", "h5", "h6"} {
		fleetWriteStatus(t, e, fleet.Status{Host: h, Version: 3, Digest: digest, Ready: true, Updated: now})
	}
	if code, out, errOut := e.fleet("status"); code != exitOK || !strings.Contains(out, "7 of 7 hosts ready and current") {
		t.Errorf("status, all Ready: exit %d\n%s%s", code, out, errOut)
	}
	// --stale says what stale is; a leased status is never stale.
	if code, out, _ := e.fleet("status", "--stale", "1ns"); code != exitFailed || !strings.Contains(out, "1 of 7 hosts ready") {
		t.Errorf("status --stale 1ns: exit %d\n%s", code, out)
	}
}

// A TLS etcd that requires a client certificate: with --etcd-ca,
// --etcd-cert and --etcd-key the push and the status work; without the
// client certificate nothing is written and the exit code is 3, naming
// the endpoint.
func TestFleetTLS(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{TLS: true})
	base := writeIntent(t, "base.json", fleetBase)
	if code, _, errOut := e.fleet("push", "--host", "h1", base); code != exitOK {
		t.Fatalf("push over TLS: exit %d\n%s", code, errOut)
	}
	if got := e.keys(t); got["/fleet/hosts/h1/base.json"] != fleetBase {
		t.Errorf("keys: %v", got)
	}
	fleetWriteStatus(t, e, fleet.Status{Host: "h1", Ready: true, Updated: time.Now()})
	if code, out, errOut := e.fleet("status"); code != exitOK || !strings.Contains(out, "1 of 1 hosts ready and current") {
		t.Errorf("status over TLS: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut := runCLI("fleet", "push", "--host", "h2", base, "--etcd-endpoints", e.srv.ClientURL,
		"--etcd-ca", e.srv.TLS.CAFile, "--timeout", "2s")
	if code != exitInternal || !strings.Contains(errOut, "etcd at "+e.srv.ClientURL+" unreachable") {
		t.Errorf("push without a client certificate: exit %d\n%s", code, errOut)
	}
	if got := e.keys(t); len(got) != 2 {
		t.Errorf("keys: %v", got)
	}
}

// etcd unreachable: exit 3 naming the endpoints, within --timeout.
func TestFleetUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s", l.Addr())
	l.Close() // nothing listens there now
	base := writeIntent(t, "base.json", fleetBase)
	for _, args := range [][]string{
		{"push", "--host", "h1", base},
		{"status"},
		{"delete", "--group", "g", "base.json"},
	} {
		code, _, errOut := runCLI(append(append([]string{"fleet"}, args...), "--etcd-endpoints", url+",http://127.0.0.1:1", "--timeout", "1s")...)
		if code != exitInternal || !strings.Contains(errOut, "etcd at "+url+", http://127.0.0.1:1 unreachable within 1s") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}

// Bad command lines: exit 2, nothing contacted.
func TestFleetUsage(t *testing.T) {
	base := writeIntent(t, "base.json", fleetBase)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet"}, "which subcommand"},
		{[]string{"fleet", "pusj"}, `unknown subcommand "pusj"`},
		{[]string{"fleet", "push", "--host", "h1", base}, "--etcd-endpoints is required"},
		{[]string{"fleet", "push", "--etcd-endpoints", "http://x", base}, "give --host HOST or --group GROUP"},
		{[]string{"fleet", "push", "--etcd-endpoints", "http://x", "--host", "a", "--group", "b", base}, "not both"},
		{[]string{"fleet", "push", "--etcd-endpoints", "http://x", "--host", "a/b", base}, `host name "a/b" contains a slash`},
		{[]string{"fleet", "push", "--etcd-endpoints", "http://x", "--host", "a", "--if-version", "-1", base}, "not a version"},
		{[]string{"fleet", "push", "--etcd-endpoints", "http://x", "--host", "a"}, "give one intent file"},
		{[]string{"fleet", "delete", "--etcd-endpoints", "http://x", "--host", "a", "--if-version", "0", "d"}, "nothing to delete"},
		{[]string{"fleet", "delete", "--etcd-endpoints", "http://x", "--host", "a"}, "give the document's name"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, want %d and %q\n%s", c.args, code, exitUsage, c.want, errOut)
		}
	}
	if code, out, _ := runCLI("help", "fleet"); code != exitOK || !strings.Contains(out, "push    --host H|--group G") {
		t.Errorf("help fleet: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI("fleet", "status", "--help"); code != exitOK || !strings.Contains(out, "--stale DURATION") {
		t.Errorf("fleet status --help: exit %d\n%s", code, out)
	}
}

// fleet status prints the hosts' names and reasons escaped (termsafe_test.go
// has the other commands').
func TestFleetStatusEscapesNames(t *testing.T) {
	rows := []member.HostRow{{Host: "h1\x1b[2J", Bad: evilReason, Status: &fleet.Status{Host: "h1", Version: 1,
		Revisions:  map[string]int64{"hosts/h1/" + evilFile: 3},
		Conditions: []fleet.Condition{{Type: "Ready", Message: evilFile + " " + evilItem}},
		Trial:      &fleet.Trial{State: "reverted", Source: "hosts/h1/x.json", Reason: evilReason}}}}
	var out bytes.Buffer
	fleetStatusPrint(&out, rows, time.Now())
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\u009b", "\nnetagent"} {
		if strings.Contains(out.String(), raw) {
			t.Errorf("fleet status: printed %q raw:\n%s", raw, out.String())
		}
	}
	if !strings.Contains(out.String(), `h1\x1b[2J`) || !strings.Contains(out.String(), `\u202etxt`) {
		t.Errorf("fleet status: the names are not escaped:\n%s", out.String())
	}
}
