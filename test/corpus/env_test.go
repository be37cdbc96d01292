//go:build !vmtest

package corpus_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testbin"
	"github.com/netagent/netagent/internal/testns"
)

// TestMain removes the netagent binary's directory at the end (testbin).
func TestMain(m *testing.M) { testbin.Main(m) }

// netagentBinary returns the netagent binary, built once per run.
func netagentBinary(t *testing.T) string { return testbin.Netagent(t) }

// env is one case's namespace (and peer namespace), the netagent binary,
// a state directory and the intent file as applied.
type env struct {
	t        *testing.T
	tgt      *netnsx.Target
	peer     *netnsx.Target // nil unless the case asks for one
	bin      string
	stateDir string
	dir      string
	file     string // the intent file applied
}

func newEnv(t *testing.T, peerNS bool) *env {
	t.Helper()
	e := &env{t: t, tgt: testns.New(t), bin: netagentBinary(t), stateDir: t.TempDir(), dir: t.TempDir()}
	if peerNS {
		e.peer = testns.New(t)
	}
	// No duplicate address detection: addresses are final at once, so
	// snapshots do not change by themselves.
	e.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	return e
}

// loadIntent reads a corpus file, writes it (with @PEERNS@ replaced) into
// the case's directory as the file to apply, and returns it validated.
func (e *env) loadIntent(name string) *intent.Intent {
	e.t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		e.t.Fatal(err)
	}
	text := string(data)
	if e.peer != nil {
		text = strings.ReplaceAll(text, "@PEERNS@", e.peer.Name)
	}
	e.file = e.writeFile(name, text)
	in, err := intent.Parse([]byte(text))
	if err != nil {
		e.t.Fatal(err)
	}
	merged, err := intent.Merge(map[string]*intent.Intent{name: in})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := merged.Validate(); err != nil {
		e.t.Fatal(err)
	}
	return merged
}

// addPhysical makes the link a "physical" interface of the intent: a veth
// end named name whose peer (up) is in the peer namespace or beside it.
func (e *env) addPhysical(name string, up bool) {
	e.t.Helper()
	peer := name + "p"
	if len(peer) > 15 {
		peer = peer[len(peer)-15:]
	}
	args := []string{"link", "add", name, "type", "veth", "peer", "name", peer}
	if e.peer != nil {
		args = append(args, "netns", e.peer.Name)
		e.ip(args...)
		testns.Exec(e.t, e.peer, "ip", "link", "set", peer, "up")
	} else {
		e.ip(args...)
		// The peer plays the switch: no IPv6 of its own (a link-local
		// address and routes it would get with its first carrier and keep).
		e.exec("sysctl", "-qw", "net.ipv6.conf."+peer+".disable_ipv6=1")
		e.ip("link", "set", peer, "up")
	}
	if up {
		e.ip("link", "set", name, "up")
	}
}

// placeForeign places objects netagent does not own: a bridge with an
// address, a route, a rule, a permanent neighbour and iptables chains with
// jumps. They are part of every snapshot; the returned function checks
// that netagent's own view of them (as foreign) never changed them.
func (e *env) placeForeign() func() {
	e.t.Helper()
	e.ip("link", "add", "foreign0", "type", "bridge")
	e.ip("link", "set", "foreign0", "up")
	e.ip("addr", "add", "10.97.0.1/24", "dev", "foreign0")
	e.ip("route", "add", "10.99.0.0/16", "via", "10.97.0.254")
	e.ip("rule", "add", "priority", "500", "from", "10.98.0.0/16", "lookup", "50")
	e.ip("neigh", "add", "10.97.0.9", "lladdr", "02:00:00:00:97:09", "dev", "foreign0", "nud", "permanent")
	for _, prog := range []string{"iptables", "ip6tables"} {
		e.exec(prog, "-N", "FOREIGN")
		e.exec(prog, "-A", "FOREIGN", "-i", "foreign0", "-j", "RETURN")
		e.exec(prog, "-I", "INPUT", "-j", "FOREIGN")
		e.exec(prog, "-A", "FORWARD", "-i", "foreign0", "-j", "ACCEPT")
	}
	e.exec("iptables", "-t", "nat", "-A", "POSTROUTING", "-s", "10.97.0.0/24", "-j", "RETURN")
	// With iptables-nft, a table's built-in chains exist from its first
	// rule on and stay when the rules go: give each family's nat table a
	// foreign rule now, so that netagent's first use does not show as a
	// change.
	e.exec("ip6tables", "-t", "nat", "-A", "POSTROUTING", "-s", "fd97::/64", "-j", "RETURN")
	view := func() string {
		return e.ip("link", "show", "foreign0") + e.ip("addr", "show", "dev", "foreign0") +
			e.ip("route", "show", "10.99.0.0/16") + e.ip("rule", "show", "priority", "500") +
			e.ip("neigh", "show", "dev", "foreign0") + e.exec("iptables", "-S", "FOREIGN")
	}
	before := view()
	return func() {
		e.t.Helper()
		if after := view(); after != before {
			e.t.Errorf("foreign objects changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}
}

// result is the outcome of one netagent run.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// netagent runs `netagent --state-dir <dir> <command> --netns <ns> <args>`.
func (e *env) netagent(command string, args ...string) result {
	e.t.Helper()
	argv := append([]string{"--state-dir", e.stateDir, command, "--netns", e.tgt.Name}, args...)
	r := testbin.Run(e.t, e.bin, nil, argv...)
	return result{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
}

// exec runs a program inside the namespace and returns its output.
func (e *env) exec(name string, args ...string) string {
	e.t.Helper()
	return testns.Exec(e.t, e.tgt, name, args...)
}

// try runs a program inside the namespace and reports whether it exited 0.
func (e *env) try(name string, args ...string) bool {
	return exec.Command("ip", append([]string{"netns", "exec", e.tgt.Name, name}, args...)...).Run() == nil
}

func (e *env) ip(args ...string) string {
	e.t.Helper()
	return e.exec("ip", args...)
}

// ipJSON runs `ip -j <args>` and decodes the list it prints.
func (e *env) ipJSON(args ...string) []map[string]any {
	e.t.Helper()
	return decodeList(e.t, e.ip(append([]string{"-j"}, args...)...))
}

func decodeList(t *testing.T, out string) []map[string]any {
	t.Helper()
	var list []map[string]any
	if strings.TrimSpace(out) == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decoding ip -j output: %v\n%s", err, out)
	}
	return list
}

// writeFile writes a file into the case's directory and returns its path.
func (e *env) writeFile(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

var iptablesCounters = regexp.MustCompile(`\[\d+:\d+\]`)

// snapshot is the namespace as the kernel's own tools print it, one object
// a line: links (and the peer namespace's), addresses, routes of every
// table, rules, permanent neighbours and the iptables rules of both
// families (without comments and counters).
func (e *env) snapshot() string {
	e.t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"link"}, {"addr"}, {"-4", "route", "show", "table", "all"}, {"-6", "route", "show", "table", "all"},
		{"-4", "rule"}, {"-6", "rule"}, {"neigh", "show", "nud", "permanent"},
	} {
		for _, obj := range e.ipJSON(args...) {
			if carrierRoute(obj) {
				continue
			}
			withoutCarrier(obj)
			data, _ := json.Marshal(obj)
			fmt.Fprintf(&b, "ip %s: %s\n", strings.Join(args, " "), data)
		}
	}
	if e.peer != nil {
		for _, obj := range decodeList(e.t, testns.Exec(e.t, e.peer, "ip", "-j", "link")) {
			data, _ := json.Marshal(obj)
			fmt.Fprintf(&b, "peer link: %s\n", data)
		}
	}
	// The kernel lists routes and links in the order it holds them, which
	// re-creating an object changes; iptables rules keep their order.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	sort.Strings(lines)
	b.Reset()
	b.WriteString(strings.Join(lines, "\n") + "\n")
	for _, prog := range []string{"iptables-save", "ip6tables-save"} {
		for _, line := range strings.Split(e.exec(prog), "\n") {
			if !strings.HasPrefix(line, "#") && line != "" {
				b.WriteString(prog + ": " + iptablesCounters.ReplaceAllString(line, "") + "\n")
			}
		}
	}
	return b.String()
}

// withoutCarrier removes from an `ip -j link` or `addr` object what
// follows the carrier, which the kernel changes by itself, seconds after
// netagent is done when a bridge with STP starts forwarding: the carrier
// flags, the operational state, IPv6 link-local addresses, an IPv6
// address's "tentative" (its duplicate address detection runs once the
// link has a carrier, and ends by itself); and the qdisc, which a link
// gets when it first comes up and keeps.
func withoutCarrier(obj map[string]any) {
	delete(obj, "qdisc")
	delete(obj, "operstate")
	if flags, ok := obj["flags"].([]any); ok {
		obj["flags"] = slices.DeleteFunc(flags, func(f any) bool {
			return f == "NO-CARRIER" || f == "LOWER_UP" || f == "M-DOWN"
		})
	}
	if addrs, ok := obj["addr_info"].([]any); ok {
		obj["addr_info"] = slices.DeleteFunc(addrs, func(a any) bool {
			m, _ := a.(map[string]any)
			return m["family"] == "inet6" && m["scope"] == "link"
		})
		for _, a := range obj["addr_info"].([]any) {
			if m, ok := a.(map[string]any); ok {
				delete(m, "tentative")
			}
		}
	}
}

// carrierRoute reports whether an `ip -j route` object is an IPv6 route the
// kernel adds when a link gets its carrier (fe80::/64, ff00::/8, the local
// route of a link-local address).
func carrierRoute(obj map[string]any) bool {
	if obj["protocol"] != "kernel" {
		return false
	}
	dst, _ := obj["dst"].(string)
	return strings.HasPrefix(dst, "fe80:") || dst == "ff00::/8"
}

// sysctls reads the intent's sysctl keys that exist now.
func (e *env) sysctls(in *intent.Intent) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	keys := make([]string, 0, len(in.Sysctls))
	for k := range in.Sysctls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := sysctlPath(k)
		if !e.try("test", "-e", path) {
			continue
		}
		out[k] = strings.TrimSpace(e.exec("cat", path))
	}
	return out
}

// sysctlPath is the /proc/sys file of a key in dot form. The interface
// name in net.ipv4.conf.<ifname>.<leaf> (and neigh) may itself hold dots.
func sysctlPath(key string) string {
	parts := strings.Split(key, ".")
	if len(parts) > 5 && (parts[2] == "conf" || parts[2] == "neigh") {
		ifname := strings.Join(parts[3:len(parts)-1], ".")
		parts = append(parts[:3:3], ifname, parts[len(parts)-1])
	}
	return "/proc/sys/" + strings.Join(parts, "/")
}

// carrierSettled reports whether every veth end that is up, and whose peer
// is up, has its carrier: the kernel reports carrier changes a moment
// after the admin change that causes them.
func (e *env) carrierSettled() bool {
	e.t.Helper()
	links := e.ipJSON("link")
	var peerLinks []map[string]any
	if e.peer != nil {
		peerLinks = decodeList(e.t, testns.Exec(e.t, e.peer, "ip", "-j", "link"))
	}
	for _, l := range links {
		flags := anyStrings(l["flags"])
		if !slices.Contains(flags, "UP") || !slices.Contains(flags, "NO-CARRIER") {
			continue
		}
		peers := links
		if _, other := l["link_netnsid"]; other {
			peers = peerLinks
		}
		for _, p := range peers {
			if num(p["ifindex"]) == num(l["link_index"]) && slices.Contains(anyStrings(p["flags"]), "UP") {
				return false
			}
		}
	}
	return true
}
