//go:build !vmtest

package netns_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testbin"
	"github.com/netagent/netagent/internal/testns"
)

// cliBinary returns the netagent binary, built once per run (testbin).
func cliBinary(t *testing.T) string { return testbin.Netagent(t) }

// cliEnv is a throwaway namespace with a veth pair uplink0/uplink0-peer in
// it (uplink0 plays the physical uplink: netagent does not own it), both
// ends up, and a state directory for netagent.
type cliEnv struct {
	t        *testing.T
	tgt      *netnsx.Target
	bin      string
	stateDir string
}

func cliNewEnv(t *testing.T) *cliEnv {
	t.Helper()
	e := &cliEnv{t: t, tgt: testns.New(t), bin: cliBinary(t), stateDir: t.TempDir()}
	// No duplicate address detection: addresses are final at once, so
	// snapshots of the namespace do not change by themselves.
	e.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	e.ip("link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-peer")
	e.ip("link", "set", "uplink0", "up")
	e.ip("link", "set", "uplink0-peer", "up")
	return e
}

// cliResult is the outcome of one netagent run.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// netagent runs the binary against the namespace: `netagent --state-dir
// <dir> <command> --netns <ns> <args>` (the command's own --netns, which
// every kernel-touching command accepts).
func (e *cliEnv) netagent(command string, args ...string) cliResult {
	e.t.Helper()
	argv := []string{"--state-dir", e.stateDir, command}
	if command != "validate" {
		argv = append(argv, "--netns", e.tgt.Name)
	}
	return e.run(nil, append(argv, args...)...)
}

// mustRun runs netagent and fails the test unless it exits with code.
func (e *cliEnv) mustRun(code int, command string, args ...string) cliResult {
	e.t.Helper()
	res := e.netagent(command, args...)
	if res.code != code {
		e.t.Fatalf("netagent %s %v: want exit %d, got %s", command, args, code, res)
	}
	return res
}

// exec runs a program inside the namespace and returns its output.
func (e *cliEnv) exec(name string, args ...string) string {
	e.t.Helper()
	return testns.Exec(e.t, e.tgt, name, args...)
}

// ip runs ip(8) inside the namespace.
func (e *cliEnv) ip(args ...string) string {
	e.t.Helper()
	return e.exec("ip", args...)
}

// ipJSON runs `ip -j <args>` and decodes the list it prints.
func (e *cliEnv) ipJSON(args ...string) []map[string]any {
	e.t.Helper()
	out := e.ip(append([]string{"-j"}, args...)...)
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		e.t.Fatalf("ip -j %v: %v\n%s", args, err, out)
	}
	return list
}

// link returns the `ip -j -d link show` entry of a link.
func (e *cliEnv) link(name string) map[string]any {
	e.t.Helper()
	list := e.ipJSON("-d", "link", "show", "dev", name)
	if len(list) != 1 {
		e.t.Fatalf("link %s: %v", name, list)
	}
	return list[0]
}

// ifindexes maps every link's name to its index.
func (e *cliEnv) ifindexes() map[string]float64 {
	e.t.Helper()
	out := map[string]float64{}
	for _, l := range e.ipJSON("link", "show") {
		out[l["ifname"].(string)] = l["ifindex"].(float64)
	}
	return out
}

// iptablesCounters matches the packet and byte counters of iptables-save.
var iptablesCounters = regexp.MustCompile(`\[\d+:\d+\]`)

// snapshot is the namespace's addresses, routes (all tables), rules and
// iptables rules of both families, as the kernel's own tools print them
// (iptables-save without its comments and counters).
func (e *cliEnv) snapshot() string {
	e.t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"-j", "addr"}, {"-j", "route", "show", "table", "all"}, {"-j", "-6", "route", "show", "table", "all"},
		{"-j", "rule"}, {"-j", "-6", "rule"},
	} {
		fmt.Fprintf(&b, "ip %v\n%s\n", args, e.ip(args...))
	}
	for _, prog := range []string{"iptables-save", "ip6tables-save"} {
		for _, line := range strings.Split(e.exec(prog), "\n") {
			if !strings.HasPrefix(line, "#") {
				b.WriteString(iptablesCounters.ReplaceAllString(line, "") + "\n")
			}
		}
	}
	return b.String()
}

// stableSnapshot waits until two snapshots in a row are the same (links
// settle for a moment after they come up) and returns it.
func (e *cliEnv) stableSnapshot() string {
	e.t.Helper()
	prev := e.snapshot()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		cur := e.snapshot()
		if cur == prev {
			return cur
		}
		prev = cur
	}
	e.t.Fatal("the namespace never settled")
	return ""
}

// writeIntent writes an intent into a file of the test's temporary
// directory and returns its path.
func (e *cliEnv) writeIntent(name string, in *intent.Intent) string {
	e.t.Helper()
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	return e.writeFile(name, string(data))
}

// writeFile writes a file into the test's temporary directory.
func (e *cliEnv) writeFile(name, content string) string {
	e.t.Helper()
	return takeoverTempFile(e.t, name, content)
}

// cliGateway parses the gateway example, to be edited by a test.
func cliGateway(t *testing.T) *intent.Intent {
	t.Helper()
	data, err := os.ReadFile("../../examples/gateway.json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

const cliGatewayFile = "../../examples/gateway.json"

// cliPlanOps returns the operations `netagent plan --json` lists, as
// "op item" strings, with "(recreate)" appended where it applies.
func (e *cliEnv) planOps(files ...string) []string {
	e.t.Helper()
	res := e.mustRun(0, "plan", append([]string{"--json"}, files...)...)
	var doc struct {
		Operations []struct {
			Op, Item string
			Recreate bool
		}
		Problems []any
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		e.t.Fatalf("plan --json: %v\n%s", err, res.stdout)
	}
	if len(doc.Problems) > 0 {
		e.t.Fatalf("plan reports problems: %v", doc.Problems)
	}
	ops := []string{}
	for _, o := range doc.Operations {
		s := o.Op + " " + o.Item
		if o.Recreate {
			s += " (recreate)"
		}
		ops = append(ops, s)
	}
	return ops
}

// cliWatcher records the netlink notifications of links, addresses,
// routes and permanent neighbor entries in the namespace: every change the
// kernel makes to them, whoever makes it.
type cliWatcher struct {
	t      *testing.T
	events chan string
	done   chan struct{}
}

func (e *cliEnv) watch() *cliWatcher {
	e.t.Helper()
	w := &cliWatcher{t: e.t, events: make(chan string, 4096), done: make(chan struct{})}
	e.t.Cleanup(func() { close(w.done) })
	ns := e.tgt.NsHandle()
	fail := func(err error) { w.events <- "subscription error: " + err.Error() }
	links := make(chan netlink.LinkUpdate, 256)
	addrs := make(chan netlink.AddrUpdate, 256)
	routes := make(chan netlink.RouteUpdate, 256)
	neighs := make(chan netlink.NeighUpdate, 256)
	for _, err := range []error{
		netlink.LinkSubscribeWithOptions(links, w.done, netlink.LinkSubscribeOptions{Namespace: &ns, ErrorCallback: fail}),
		netlink.AddrSubscribeWithOptions(addrs, w.done, netlink.AddrSubscribeOptions{Namespace: &ns, ErrorCallback: fail}),
		netlink.RouteSubscribeWithOptions(routes, w.done, netlink.RouteSubscribeOptions{Namespace: &ns, ErrorCallback: fail}),
		netlink.NeighSubscribeWithOptions(neighs, w.done, netlink.NeighSubscribeOptions{Namespace: &ns, ErrorCallback: fail}),
	} {
		if err != nil {
			e.t.Fatalf("subscribing to netlink: %v", err)
		}
	}
	go cliForward(links, w.events, func(u netlink.LinkUpdate) string {
		return fmt.Sprintf("link %d %s flags %#x", u.Header.Type, u.Attrs().Name, u.IfInfomsg.Flags)
	})
	go cliForward(addrs, w.events, func(u netlink.AddrUpdate) string {
		return fmt.Sprintf("addr new=%v %s index %d", u.NewAddr, u.LinkAddress.String(), u.LinkIndex)
	})
	go cliForward(routes, w.events, func(u netlink.RouteUpdate) string {
		return fmt.Sprintf("route %d %s table %d", u.Type, u.Route.Dst, u.Route.Table)
	})
	go cliForward(neighs, w.events, func(u netlink.NeighUpdate) string {
		if u.State&netlink.NUD_PERMANENT == 0 {
			return "" // traffic, not configuration
		}
		return fmt.Sprintf("neigh %d %s", u.Type, u.IP)
	})
	return w
}

// cliForward describes each update of in on out until in is closed.
func cliForward[T any](in <-chan T, out chan<- string, describe func(T) string) {
	for u := range in {
		if s := describe(u); s != "" {
			out <- s
		}
	}
}

// quiesce drains notifications until none came for idle (links settle
// after they come up), failing after a bound.
func (w *cliWatcher) quiesce(idle time.Duration) {
	w.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-w.events:
		case <-time.After(idle):
			return
		case <-deadline:
			w.t.Fatal("the namespace never went quiet")
		}
	}
}

// collect waits for notifications still in flight and returns those
// received since the last drain.
func (w *cliWatcher) collect(grace time.Duration) []string {
	var got []string
	timeout := time.After(grace)
	for {
		select {
		case ev := <-w.events:
			got = append(got, ev)
		case <-timeout:
			return got
		}
	}
}

// startSeeing starts netagent command in the background; seen is closed
// when a line of its stderr first holds marker (or when it ends without),
// and wait returns its outcome once it ends.
func (e *cliEnv) startSeeing(marker, command string, args ...string) (proc *os.Process, seen <-chan struct{}, wait func() cliResult) {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"--state-dir", e.stateDir, command, "--netns", e.tgt.Name}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout = &out
	pipe, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	saw, copied := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(copied)
		lines := bufio.NewScanner(pipe)
		for lines.Scan() {
			errOut.WriteString(lines.Text() + "\n")
			if saw != nil && strings.Contains(lines.Text(), marker) {
				close(saw)
				saw = nil
			}
		}
		io.Copy(&errOut, pipe) // a line beyond the scanner's bound
		if saw != nil {
			close(saw)
		}
	}()
	return cmd.Process, saw, func() cliResult {
		<-copied
		err := cmd.Wait()
		res := cliResult{stdout: out.String(), stderr: errOut.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			res.code = ee.ExitCode()
		}
		return res
	}
}

// target is the namespace (takeoverNS).
func (e *cliEnv) target() *netnsx.Target { return e.tgt }

// agentRun is netagent's outcome (takeoverNS).
func (e *cliEnv) agentRun(command string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	r := e.netagent(command, args...)
	return r.stdout, r.stderr, r.code
}
