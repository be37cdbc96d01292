//go:build !vmtest

package netns_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// The foreign sentinel: an address and a route on uplink0 that no intent
// names. The switch-over must leave them alone at every step.
const (
	takeoverSentinelAddr  = "198.18.0.1/30"
	takeoverSentinelPeer  = "198.18.0.2"
	takeoverSentinelRoute = "198.18.1.0/24"
)

// takeoverPath is a ping through a namespace the old tool configured: from
// one end (from) to target, over the configuration's own addresses and
// routes, the other end a peer namespace at the far end of a veth.
type takeoverPath struct {
	from   *netnsx.Target
	target netip.Addr
	how    string // for the failure messages
}

// takeoverNewPath adds the foreign sentinel to e and makes the peer
// namespace at the far end of the link that carries in's first address:
// a stand-in NIC (itself, or the port of the bridge that has the
// address), whose peer moves into the peer namespace; or, for an address
// on lo, uplink0. Call it after oracleStandIns and before the old tool
// runs (the hardware is wired before the host boots).
func takeoverNewPath(t *testing.T, e *cliEnv, in *intent.Intent) takeoverPath {
	t.Helper()
	e.ip("addr", "add", takeoverSentinelAddr, "dev", "uplink0")
	e.ip("route", "add", takeoverSentinelRoute, "via", takeoverSentinelPeer, "dev", "uplink0")
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
		return takeoverPath{from: e.tgt, target: own, how: fmt.Sprintf("from %s on %s to the peer's %s", a, ifc.Name, own)}
	}
	far := netip.MustParseAddr("203.0.113.77")
	if a.Addr().Is6() {
		far = netip.MustParseAddr("2001:db8:ffff::77")
	}
	pexec("addr", "add", netip.PrefixFrom(far, far.BitLen()).String(), "dev", "lo", "nodad")
	return takeoverPath{from: e.tgt, target: far, how: fmt.Sprintf("from %s on %s by the default route via %s to %s", a, ifc.Name, gw, far)}
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
	if out, err := exec.Command("ip", "netns", "exec", p.from.Name, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", p.target.String()).CombinedOutput(); err != nil {
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
	pg := &takeoverPing{cmd: exec.Command("ip", "netns", "exec", p.from.Name, "ping", "-n", "-i", "0.01", "-W", "1", p.target.String()),
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
	e     *cliEnv
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  int // lines handed out by until
}

func takeoverStartMonitor(t *testing.T, e *cliEnv) *takeoverMonitor {
	t.Helper()
	m := &takeoverMonitor{t: t, e: e, cmd: exec.Command("ip", "netns", "exec", e.tgt.Name, "ip", "-o", "monitor", "link", "address", "route", "rule")}
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
