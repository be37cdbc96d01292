package netns_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// The foreign sentinel: an address and a route on uplink0 that no intent
// names. The switch-over must leave them alone at every step.
const (
	takeoverSentinelAddr  = "198.18.0.1/30"
	takeoverSentinelPeer  = "198.18.0.2"
	takeoverSentinelRoute = "198.18.1.0/24"
)

// takeoverNS is the namespace a switch-over takes over, read back as the
// oracle reads it: cliEnv on the host, eniVMEnv in the VM. Either has
// uplink0 (the monitor's mark goes over it, and the foreign sentinel is
// on it).
type takeoverNS interface {
	oracleNS
	target() *netnsx.Target
	// agentRun runs `netagent COMMAND --netns NS ARGS` with the
	// namespace's state directory.
	agentRun(command string, args ...string) (stdout, stderr string, code int)
	writeFile(name, content string) string
}

// takeoverPath is a ping through a namespace the old tool configured: from
// one end (from) to target, over the configuration's own addresses and
// routes, the other end a peer namespace at the far end of a veth.
type takeoverPath struct {
	from   *netnsx.Target
	target netip.Addr
	how    string // for the failure messages
	bind   string // ping -I: the device (a VRF) to send through, if any
}

// ping is the command line of a ping along p with the options given.
func (p takeoverPath) ping(opts ...string) *exec.Cmd {
	argv := append([]string{"netns", "exec", p.from.Name, "ping", "-n"}, opts...)
	if p.bind != "" {
		argv = append(argv, "-I", p.bind)
	}
	return exec.Command("ip", append(argv, p.target.String())...)
}

// takeoverNewPath adds the foreign sentinel to e and makes the peer
// namespace at the far end of the link that carries in's first address:
// a stand-in NIC (itself, or the port of the bridge that has the
// address), whose peer moves into the peer namespace; or, for an address
// on lo, uplink0. Call it after oracleStandIns and before the old tool
// runs (the hardware is wired before the host boots).
func takeoverNewPath(t *testing.T, e takeoverNS, in *intent.Intent) takeoverPath {
	t.Helper()
	takeoverAddSentinel(e)
	ifc, a := takeoverCarrier(t, in)
	p := testns.New(t)
	pexec := func(args ...string) { testns.Exec(t, p, "ip", args...) }
	pexec("link", "set", "lo", "up")
	if ifc.Name == "lo" {
		// The address is the host's own, on lo: the peer reaches it over
		// uplink0 (the sentinel's subnet), as a router would.
		e.ip("link", "set", "uplink0-peer", "netns", p.Name)
		pexec("addr", "add", takeoverSentinelPeer+"/30", "dev", "uplink0-peer")
		pexec("link", "set", "uplink0-peer", "up")
		pexec("route", "add", a.Addr().String(), "via", strings.TrimSuffix(takeoverSentinelAddr, "/30"))
		return takeoverPath{from: p, target: a.Addr(), how: fmt.Sprintf("from the peer over uplink0 to %s on lo", a.Addr())}
	}
	peer := takeoverStandIn(t, in, ifc)
	e.ip("link", "set", peer, "netns", p.Name)
	pexec("link", "set", peer, "up")
	gw, def := takeoverGateway(in, ifc.Name, a)
	own := gw
	if !gw.IsValid() {
		own = takeoverNeighbour(a)
	}
	pexec("addr", "add", netip.PrefixFrom(own, own.BitLen()).String(), "dev", peer, "nodad")
	pexec("route", "add", a.Masked().String(), "dev", peer)
	if !def {
		return takeoverPath{from: e.target(), target: own, how: fmt.Sprintf("from %s on %s to the peer's %s", a, ifc.Name, own)}
	}
	far := netip.MustParseAddr("203.0.113.77")
	if a.Addr().Is6() {
		far = netip.MustParseAddr("2001:db8:ffff::77")
	}
	pexec("addr", "add", netip.PrefixFrom(far, far.BitLen()).String(), "dev", "lo", "nodad")
	return takeoverPath{from: e.target(), target: far, how: fmt.Sprintf("from %s on %s by the default route via %s to %s", a, ifc.Name, gw, far)}
}

// takeoverAddSentinel adds the foreign sentinel to e's uplink0.
func takeoverAddSentinel(e takeoverNS) {
	e.ip("addr", "add", takeoverSentinelAddr, "dev", "uplink0")
	e.ip("route", "add", takeoverSentinelRoute, "via", takeoverSentinelPeer, "dev", "uplink0")
}

// takeoverCarrier is in's first interface with an address (IPv4 first) and
// that address.
func takeoverCarrier(t *testing.T, in *intent.Intent) (intent.Interface, netip.Prefix) {
	t.Helper()
	for _, v4 := range []bool{true, false} {
		for _, ifc := range in.Interfaces {
			for _, s := range ifc.Addresses {
				if a, err := netip.ParsePrefix(s); err == nil && a.Addr().Is4() == v4 {
					return ifc, a
				}
			}
		}
	}
	t.Fatalf("no address in the intent to ping over: %+v", in.Interfaces)
	return intent.Interface{}, netip.Prefix{}
}

// takeoverStandIn is the stand-in peer of the NIC that carries ifc: ifc
// itself, or the first physical port of the bridge ifc.
func takeoverStandIn(t *testing.T, in *intent.Intent, ifc intent.Interface) string {
	t.Helper()
	for i, x := range in.Interfaces {
		if x.Type == intent.LinkPhysical && (x.Name == ifc.Name || x.Master == ifc.Name) {
			return fmt.Sprintf("standin%d", i) // oracleStandIns's name
		}
	}
	t.Fatalf("no stand-in NIC carries %s", ifc.Name)
	return ""
}

// takeoverGateway is the first gateway of in's routes through dev in a's
// family; def: the route is a default route of the main table.
func takeoverGateway(in *intent.Intent, dev string, a netip.Prefix) (gw netip.Addr, def bool) {
	for _, r := range in.Routes {
		via, err := netip.ParseAddr(r.Via)
		if err != nil || via.Is4() != a.Addr().Is4() || (r.Dev != dev && !(r.Dev == "" && a.Masked().Contains(via))) {
			continue
		}
		to := r.To
		return via, (to == "default" || to == "0.0.0.0/0" || to == "::/0") && (r.Table == 0 || r.Table == 254)
	}
	return netip.Addr{}, false
}

// takeoverNeighbour is an address of a's subnet other than a's own.
func takeoverNeighbour(a netip.Prefix) netip.Addr {
	n := a.Masked().Addr().Next()
	for n == a.Addr() || !n.IsValid() {
		n = n.Next()
	}
	return n
}

// check pings target three times: the path works before the test starts.
func (p takeoverPath) check(t *testing.T) {
	t.Helper()
	if out, err := p.ping("-c", "3", "-i", "0.2", "-W", "1").CombinedOutput(); err != nil {
		t.Fatalf("no ping %s: %v\n%s", p.how, err, out)
	}
}

// takeoverPing is a ping running every 10 ms.
type takeoverPing struct {
	cmd  *exec.Cmd
	out  strings.Builder
	done chan struct{}
}

// start starts pinging target every 10 ms until stop.
func (p takeoverPath) start(t *testing.T) *takeoverPing {
	t.Helper()
	pg := &takeoverPing{cmd: p.ping("-i", "0.01", "-W", "1"),
		done: make(chan struct{})}
	pg.cmd.Stdout = &pg.out
	if err := pg.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { pg.cmd.Wait(); close(pg.done) }()
	t.Cleanup(func() {
		if pg.cmd.ProcessState == nil {
			pg.cmd.Process.Kill()
			<-pg.done
		}
	})
	return pg
}

var (
	pingReply = regexp.MustCompile(`icmp_seq=(\d+) `)
	pingSent  = regexp.MustCompile(`(\d+) packets transmitted`)
)

// stop ends the ping (SIGINT, as a user would) and returns how many
// requests it sent and how many of them got no reply. The last request
// may still be in flight at the SIGINT: it is not counted.
func (pg *takeoverPing) stop(t *testing.T) (sent, lost int) {
	t.Helper()
	pg.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-pg.done:
	case <-time.After(5 * time.Second):
		t.Fatal("ping ignored SIGINT")
	}
	out := pg.out.String()
	m := pingSent.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("ping printed no summary:\n%s", out)
	}
	sent, _ = strconv.Atoi(m[1])
	replied := map[int]bool{}
	for _, r := range pingReply.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(r[1])
		replied[n] = true
	}
	for seq := 1; seq < sent; seq++ {
		if !replied[seq] {
			lost++
		}
	}
	return sent - 1, lost
}

// takeoverMonitor is `ip -o monitor link address route rule` in a
// namespace: every change of those the kernel reports, one a line.
type takeoverMonitor struct {
	t     *testing.T
	e     takeoverNS
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  int // lines handed out by until
}

func takeoverStartMonitor(t *testing.T, e takeoverNS) *takeoverMonitor {
	t.Helper()
	m := &takeoverMonitor{t: t, e: e, cmd: exec.Command("ip", "netns", "exec", e.target().Name, "ip", "-o", "monitor", "link", "address", "route", "rule")}
	pipe, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			m.mu.Lock()
			m.lines = append(m.lines, sc.Text())
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() { m.cmd.Process.Kill(); m.cmd.Wait() })
	m.settle() // subscribed, and nothing changes by itself any more
	return m
}

// until marks the namespace (adds and deletes a route of the test's own
// in a table of its own) and returns the lines the monitor printed since
// the last call, up to the mark: the kernel reports changes in order, so
// these are all the changes made before the mark. (Until the monitor has
// subscribed, a mark goes unseen: it is made again.)
func (m *takeoverMonitor) until() []string {
	m.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		m.e.ip("route", "add", takeoverMark+"/32", "dev", "uplink0", "table", "199")
		got, ok := m.upTo("", time.Second)
		m.e.ip("route", "del", takeoverMark+"/32", "dev", "uplink0", "table", "199")
		if ok {
			m.upTo("Deleted ", 10*time.Second)
			return got
		}
	}
	m.t.Fatal("ip monitor never printed its mark")
	return nil
}

// settle waits until the namespace is quiet (no change for half a
// second): a link that just came up still gets its link-local address.
func (m *takeoverMonitor) settle() {
	m.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		if len(m.until()) == 0 {
			return
		}
	}
	m.t.Fatal("the namespace never settled")
}

// takeoverMark is the destination of the monitor's mark route.
const takeoverMark = "198.18.9.9"

// upTo waits at most d for the mark's line (starting with prefix) and
// returns the lines before it not yet returned; ok is false when it did
// not come.
func (m *takeoverMonitor) upTo(prefix string, d time.Duration) (lines []string, ok bool) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		m.mu.Lock()
		i := slices.IndexFunc(m.lines[m.seen:], func(l string) bool {
			return strings.HasPrefix(l, prefix+takeoverMark+" ") && strings.Contains(l, "table 199")
		})
		if i >= 0 {
			got := slices.Clone(m.lines[m.seen : m.seen+i])
			m.seen += i + 1
			m.mu.Unlock()
			return got, true
		}
		m.mu.Unlock()
	}
	return nil, false
}

// takeoverDeletions are the lines of a monitor that report a deletion.
func takeoverDeletions(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, "Deleted ") })
}

// takeoverRuleCopies splits deletions into those of objects and the
// deletions of a rule's old copy after netagent added its own: the kernel
// has no in-place replace for a rule, so adoption adds netagent's copy
// (protocol 211) and then deletes theirs, and a rule that selects the
// same packets is there throughout. events are all the lines, in order.
func takeoverRuleCopies(deletions, events []string) (objects, copies []string) {
	for _, d := range deletions {
		if takeoverCopiedFirst(d, events) {
			copies = append(copies, d)
		} else {
			objects = append(objects, d)
		}
	}
	return objects, copies
}

// takeoverCopiedFirst reports whether d deletes a rule whose copy of
// protocol 211 was added before it.
func takeoverCopiedFirst(d string, events []string) bool {
	rule := takeoverRuleProto.ReplaceAllString(strings.TrimPrefix(d, "Deleted "), "")
	if !takeoverRuleLine.MatchString(rule) {
		return false
	}
	for _, l := range events {
		if l == d {
			return false
		}
		if strings.Contains(l, " proto 211") && takeoverRuleProto.ReplaceAllString(l, "") == rule {
			return true
		}
	}
	return false
}

var (
	takeoverRuleLine  = regexp.MustCompile(`^\d+:\s`)
	takeoverRuleProto = regexp.MustCompile(` proto \S+`)
)

// takeoverKernelOwn reports whether a monitor line is of an object the
// kernel makes and removes by itself (the routes of an address, the local
// table, link-local and multicast entries), not of one the configuration
// names.
func takeoverKernelOwn(line string) bool {
	for _, s := range []string{" proto kernel", " table local ", "fe80:", "ff00::/8", " inet6 fe80", "multicast "} {
		if strings.Contains(line+" ", s) {
			return true
		}
	}
	return false
}

// takeoverOp is an operation of `apply --json` or `plan --json`.
type takeoverOp struct {
	Op, Item, Description string
	Adopt                 string // plan --adopt: "mark only" or "modify"
}

// takeoverTempFile writes a file into a new temporary directory of t's
// (cliEnv's and eniVMEnv's writeFile).
func takeoverTempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// takeoverAgent runs `netagent COMMAND ARGS` on e and returns its
// standard output, failing the test at once unless it exits 0.
func takeoverAgent(t *testing.T, e takeoverNS, command string, args ...string) string {
	t.Helper()
	stdout, stderr, code := e.agentRun(command, args...)
	if code != 0 {
		t.Fatalf("netagent %s %s: exit %d\nstdout:\n%s\nstderr:\n%s", command, strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// takeoverApply runs `netagent apply ARGS` (with --json) on e and returns
// its operations; an exit other than 0 fails the test (what names the
// step) but the test goes on, so that what the apply did is still counted.
func takeoverApply(t *testing.T, e takeoverNS, what string, args ...string) []takeoverOp {
	t.Helper()
	stdout, stderr, code := e.agentRun("apply", args...)
	if code != 0 {
		t.Errorf("%s (netagent apply %s): exit %d\nstdout:\n%s\nstderr:\n%s", what, strings.Join(args, " "), code, stdout, stderr)
	}
	return takeoverOps(t, stdout)
}

// takeoverOps decodes the operations of an apply's or plan's --json output.
func takeoverOps(t *testing.T, stdout string) []takeoverOp {
	t.Helper()
	var doc struct{ Operations []takeoverOp }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	return doc.Operations
}

// takeoverItems are the items of ops whose op is op, sorted.
func takeoverItems(ops []takeoverOp, op string) []string {
	var out []string
	for _, o := range ops {
		if o.Op == op {
			out = append(out, o.Item)
		}
	}
	slices.Sort(out)
	return out
}

// takeoverFigures are what one switch-over measured.
type takeoverFigures struct {
	adopted    int // adoptions plan --adopt listed
	deletions  int // deletions ip monitor saw during apply --adopt
	ruleCopies int // of which a rule's old copy, after netagent's copy
	sent, lost int // pings during apply --adopt
	again      int // operations of the second apply, and kernel events
	removed    int // objects the removal of the intent deleted
	pinned     int // rule priorities the intent took from the kernel
}

func (f takeoverFigures) String() string {
	return fmt.Sprintf("adopted %d, deletions seen %d (and %d rules' old copies), pings lost %d of %d, second apply %d writes, removal deleted %d, rule priorities pinned %d",
		f.adopted, f.deletions, f.ruleCopies, f.lost, f.sent, f.again, f.removed, f.pinned)
}

// takeoverTakeOver is the switch-over of a namespace the old tool (or the
// administrator) configured: import SOURCE ARGS, plan --adopt lists only
// adoptions, apply --adopt under ip monitor and a ping along path loses
// nothing and leaves the kernel as it was, a second apply writes nothing.
// It returns the figures, the items adopted and the monitor.
func takeoverTakeOver(t *testing.T, e takeoverNS, path takeoverPath, auto bool, source string, args ...string) (f takeoverFigures, adopted []string, mon *takeoverMonitor) {
	t.Helper()
	path.check(t)
	mon = takeoverStartMonitor(t, e) // and the namespace settled
	before := oracleView(e, auto)
	file := filepath.Join(t.TempDir(), "imported.json")
	takeoverAgent(t, e, "import", append([]string{source, "--out", file}, args...)...)
	if auto {
		f.pinned = takeoverKernelPriorities(t, e, file)
	}
	adopted, f.adopted = takeoverPlanOnlyAdoptions(t, e, file)
	if events := mon.until(); len(events) > 0 {
		t.Errorf("plan --adopt changed the kernel:\n%s", strings.Join(events, "\n"))
	}

	ping := path.start(t)
	time.Sleep(300 * time.Millisecond)
	ops := takeoverApply(t, e, "apply --adopt", "--adopt", "--json", file)
	time.Sleep(300 * time.Millisecond)
	f.sent, f.lost = ping.stop(t)
	events := mon.until()
	dels, copies := takeoverRuleCopies(takeoverDeletions(events), events)
	f.deletions, f.ruleCopies = len(dels), len(copies)
	if f.deletions > 0 || f.lost > 0 {
		t.Errorf("apply --adopt: %d deletions, %d of %d pings lost (%s):\n%s\nall events:\n%s",
			f.deletions, f.lost, f.sent, path.how, strings.Join(dels, "\n"), strings.Join(events, "\n"))
	}
	if f.sent < 20 {
		t.Errorf("only %d pings during the apply", f.sent)
	}
	if !slices.Equal(takeoverItems(ops, "create"), adopted) || len(ops) != len(adopted) {
		t.Errorf("apply --adopt ran %v, want only the adoptions plan --adopt listed: %v", ops, adopted)
	}
	if diff := lineDiff(before, oracleView(e, auto)); diff != "" {
		t.Errorf("apply --adopt changed the kernel (-: before, +: after):\n%s", diff)
	}
	f.again = takeoverSecondApply(t, e, mon, file)
	return f, adopted, mon
}

// takeoverKernelPriorities is docs/migrating.md's fix, in step 2, for
// rules the old file gave no priority (see autoPriorities): the kernel
// numbered them in the order the old tool added them, which the import
// cannot know, so the intent takes each such rule's priority from the
// kernel's rule of the same source and table. It returns how many it
// changed.
func takeoverKernelPriorities(t *testing.T, e takeoverNS, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, r := range in.Rules {
		if r.Priority <= 32700 || r.Priority >= 32766 {
			continue
		}
		for _, k := range e.ipJSON("rule", "show") {
			p, _ := k["priority"].(float64)
			if fmt.Sprintf("%v/%v", k["src"], k["srclen"]) == r.From && fmt.Sprint(k["table"]) == fmt.Sprint(r.Table) && uint32(p) != r.Priority {
				in.Rules[i].Priority = uint32(p)
				n++
			}
		}
	}
	if data, err = importer.Encode(in); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

// takeoverPlanOnlyAdoptions checks that plan --adopt lists adoptions
// only, at least one: each line "adopt (mark only) ITEM" in the text, and
// "adopt": "mark only" in the JSON; but for sysctls and a bridge's VLANs,
// which carry no mark: one may be written if the kernel already holds its
// value. It returns
// the items of every operation, sorted, and how many are adoptions.
func takeoverPlanOnlyAdoptions(t *testing.T, e takeoverNS, file string) (items []string, adoptions int) {
	t.Helper()
	text := takeoverAgent(t, e, "plan", "--adopt", file)
	n := 0
	for _, l := range strings.Split(text, "\n") {
		op, ok := takeoverPlanOp(l)
		switch {
		case !ok || strings.HasPrefix(op, "create sysctl/") || strings.HasPrefix(op, "create bridge-vlans/"):
		case strings.HasPrefix(op, "adopt (mark only) "):
			n++
		default:
			t.Errorf("plan --adopt lists an operation that is not an adoption: %q\n%s", l, text)
		}
	}
	for _, o := range takeoverOps(t, takeoverAgent(t, e, "plan", "--adopt", "--json", file)) {
		switch {
		case o.Adopt == "mark only":
			adoptions++
		case !takeoverSameSysctl(e, o) && !takeoverSameBridgeVLANs(t, e, o):
			t.Errorf("plan --adopt --json: %s %s adopt %q, want only adoptions, mark only", o.Op, o.Item, o.Adopt)
		}
		items = append(items, o.Item)
	}
	slices.Sort(items)
	if n == 0 || n != adoptions || strings.Contains(text, "!") {
		t.Errorf("plan --adopt: %d adoptions, %d in the JSON (want some, the same, and no problem):\n%s", n, adoptions, text)
	}
	return items, adoptions
}

// takeoverSameSysctl reports whether o writes a sysctl the value the
// kernel holds already ("sysctl KEY = VALUE").
func takeoverSameSysctl(e takeoverNS, o takeoverOp) bool {
	key, val, ok := strings.Cut(strings.TrimPrefix(o.Description, "sysctl "), " = ")
	return ok && o.Op == "create" && strings.HasPrefix(o.Item, "sysctl/") &&
		strings.TrimSpace(e.exec("sysctl", "-n", key)) == val
}

// takeoverSameBridgeVLANs reports whether o writes a bridge member's
// VLANs as the kernel holds them already (`bridge -j vlan show`): a
// bridge's VLANs carry no mark of their own (the bridge's is theirs), so
// adopting the bridge creates them, in place.
func takeoverSameBridgeVLANs(t *testing.T, e takeoverNS, o takeoverOp) bool {
	t.Helper()
	port, ok := strings.CutPrefix(o.Item, items.TypeBridgeVLANs+"/")
	if !ok || o.Op != "create" {
		return false
	}
	var members []struct {
		Vlans []struct {
			Vlan, VlanEnd int
			Flags         []string
		}
	}
	out := e.exec("bridge", "-j", "vlan", "show", "dev", port)
	if err := json.Unmarshal([]byte(out), &members); err != nil {
		t.Fatalf("bridge -j vlan show dev %s: %v\n%s", port, err, out)
	}
	found := map[uint16]items.VLANFlags{}
	for _, m := range members {
		for _, v := range m.Vlans {
			for vid := v.Vlan; vid <= max(v.Vlan, v.VlanEnd); vid++ {
				found[uint16(vid)] = items.VLANFlags{PVID: slices.Contains(v.Flags, "PVID"), Untagged: slices.Contains(v.Flags, "Egress Untagged")}
			}
		}
	}
	_, vlans, _ := strings.Cut(o.Description, ": ")
	return vlans == items.CanonicalVLANs(found).String()
}

// takeoverPlanOp is the operation of one line of plan's text ("  3. create
// address/..."); ok is false for other lines.
func takeoverPlanOp(line string) (string, bool) {
	num, rest, ok := strings.Cut(strings.TrimSpace(line), ". ")
	if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
		return "", false
	}
	return rest, true
}

// takeoverSecondApply checks that apply without --adopt, right after, has
// nothing to do: no operation, no kernel event. It returns how many of
// either it saw.
func takeoverSecondApply(t *testing.T, e takeoverNS, mon *takeoverMonitor, file string) int {
	t.Helper()
	ops := takeoverApply(t, e, "the second apply", "--json", file)
	events := mon.until()
	if len(ops)+len(events) > 0 {
		t.Errorf("the second apply wrote: operations %v, kernel events:\n%s", ops, strings.Join(events, "\n"))
	}
	return len(ops) + len(events)
}

// takeoverRemoval applies an intent without objects and checks that it
// deletes exactly the adopted objects: its delete operations are the
// adoptions but for the NICs (never deleted), none of the configuration's
// links, addresses, routes and rules is left, and the kernel deleted
// nothing of the test's own (the foreign sentinel on uplink0, the
// stand-ins). It returns how many objects were deleted.
func takeoverRemoval(t *testing.T, e takeoverNS, mon *takeoverMonitor, in *intent.Intent, adopted []string) int {
	t.Helper()
	ops := takeoverApply(t, e, "the empty intent", "--json", e.writeFile("empty.json", `{"version": 1}`))
	deleted := takeoverItems(ops, "delete")
	want := slices.DeleteFunc(slices.Clone(adopted), func(item string) bool { return takeoverIsNIC(in, item) })
	if !slices.Equal(deleted, want) || len(deleted) != len(ops) {
		t.Errorf("the empty intent ran %v\nwant the deletion of exactly the adopted %v", ops, want)
	}
	for _, l := range takeoverDeletions(mon.until()) {
		if takeoverTestOwn.MatchString(l) {
			t.Errorf("the empty intent deleted an object it never adopted: %s", l)
		}
	}
	left := oracleView(e, false)
	for _, l := range strings.Split(left, "\n") {
		if takeoverOfConfiguration(in, l) {
			t.Errorf("after the removal the kernel still has %q", l)
		}
	}
	takeoverSentinelStays(t, e)
	return len(deleted)
}

// takeoverTestOwn matches a monitor line of the test's own objects: the
// foreign sentinel, uplink0, the stand-ins' peers.
var takeoverTestOwn = regexp.MustCompile(`198\.18\.|^Deleted \d+: (uplink0|standin)|dev uplink0`)

// takeoverIsNIC reports whether an item is one of in's NICs (interface/NAME
// of a physical interface), which no intent deletes.
func takeoverIsNIC(in *intent.Intent, item string) bool {
	for _, ifc := range in.Interfaces {
		if item == "interface/"+ifc.Name && ifc.Type == "physical" {
			return true
		}
	}
	return false
}

// takeoverOfConfiguration reports whether a line of oracleView is an
// address, a route or a rule of in's, or a link in creates.
func takeoverOfConfiguration(in *intent.Intent, line string) bool {
	for _, ifc := range in.Interfaces {
		if ifc.Type != "physical" && strings.HasPrefix(line, "link "+ifc.Name+" ") {
			return true
		}
		for _, a := range ifc.Addresses {
			if line == "addr "+ifc.Name+" "+a {
				return true
			}
		}
	}
	for _, r := range in.Routes {
		if strings.HasPrefix(line, "route ") && strings.Contains(line, " via="+r.Via+" ") && r.Via != "" {
			return true
		}
	}
	for _, r := range in.Rules {
		if strings.HasPrefix(line, "rule ") && strings.Contains(line, fmt.Sprintf(" table=%d", r.Table)) {
			return true
		}
	}
	return false
}

// takeoverSentinelStays checks that the foreign address and route on uplink0
// are still there.
func takeoverSentinelStays(t *testing.T, e takeoverNS) {
	t.Helper()
	if !strings.Contains(e.ip("addr", "show", "dev", "uplink0"), takeoverSentinelAddr) ||
		!strings.Contains(e.ip("route", "show", takeoverSentinelRoute), "via "+takeoverSentinelPeer) {
		t.Errorf("the foreign address %s or route %s on uplink0 is gone:\n%s\n%s", takeoverSentinelAddr, takeoverSentinelRoute,
			e.ip("addr"), e.ip("route"))
	}
}
