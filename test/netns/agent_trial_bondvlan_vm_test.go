//go:build vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// trialBondBefore and trialBondTrial: a trial that changes the bond's mode
// and the VLAN's id, both recreates.
const (
	trialBondBefore = `{"version": 1, "interfaces": [
  {"name": "eth1", "type": "physical", "master": "bond0"},
  {"name": "eth2", "type": "physical", "master": "bond0"},
  {"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "miimon": 100}, "addresses": ["10.1.0.2/24"]},
  {"name": "bond0.10", "type": "vlan", "vlan": {"parent": "bond0", "id": 10}, "addresses": ["10.10.0.2/24", "2001:db8:10::2/64"]}]}`
	trialBondTrial = `{"version": 1, "interfaces": [
  {"name": "eth1", "type": "physical", "master": "bond0"},
  {"name": "eth2", "type": "physical", "master": "bond0"},
  {"name": "bond0", "type": "bond", "bond": {"mode": "802.3ad", "miimon": 100}, "addresses": ["10.1.0.2/24"]},
  {"name": "bond0.10", "type": "vlan", "vlan": {"parent": "bond0", "id": 20}, "addresses": ["10.20.0.2/24"]}]}`
)

// A trial of the one-shot CLI's code (agent/host: BeginTrial, Apply,
// then the revert the CLI runs on its timeout or on `netagent rollback`,
// or Recover after its process died) that changes a bond's mode and a
// VLAN's id: the revert puts back both (the VM has no netagent binary,
// so the test drives the package the binary runs). Read back over
// netlink: the bond's mode and ports, the VLAN's id and parent, the
// addresses; the ifindexes of recreated links may differ.
func TestInVMTrialBondModeVLANIDReverts(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	for _, how := range []string{"timeout", "rollback", "died"} {
		how := how
		t.Run(how, func(t *testing.T) {
			tgt := testns.New(t)
			for _, nic := range []string{"eth1", "eth2"} {
				if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: nic}}); err != nil {
					t.Fatalf("adding dummy %s: %v", nic, err)
				}
			}
			stateDir := t.TempDir()
			log := logrus.New()
			log.SetOutput(testWriter{t})
			rt, err := host.Open(tgt.Name, stateDir, log)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			trialBondApply(t, rt, trialBondBefore)
			before := trialBondSnapshot(t, tgt.NL)
			if !strings.Contains(before, "mode=active-backup") || !strings.Contains(before, "vlan id=10 parent=bond0") {
				t.Fatalf("the intent before the trial is not in the kernel:\n%s", before)
			}

			files := map[string][]byte{"trial.json": []byte(trialBondTrial)}
			intended, err := render.Load(files)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := rt.BeginTrial(host.Trial{Files: files})
			if err != nil {
				t.Fatal(err)
			}
			res, err := rt.Apply(context.Background(), intended, host.ApplyOptions{})
			if err != nil || !res.Converged() {
				t.Fatalf("the trial's apply: %v %v", err, res.Problems)
			}
			during := trialBondSnapshot(t, tgt.NL)
			if !strings.Contains(during, "mode=802.3ad") || !strings.Contains(during, "vlan id=20 parent=bond0") {
				t.Fatalf("the trial is not in the kernel:\n%s", during)
			}

			switch how {
			case "timeout", "rollback":
				reason := map[string]string{"timeout": "not confirmed within 1s", "rollback": "reverted on request (`netagent rollback`)"}[how]
				if _, err := tr.Revert(context.Background(), reason); err != nil {
					t.Fatal(err)
				}
			case "died":
				// The process is gone: its runtime with it, and the record
				// names a pid that no longer runs.
				rt.Close()
				path := filepath.Join(stateDir, host.TrialDir, "trial.json")
				data, err := statefile.LoadRecord(path)
				if err != nil {
					t.Fatal(err)
				}
				var rec map[string]any
				if err := json.Unmarshal(data, &rec); err != nil {
					t.Fatal(err)
				}
				rec["pid"] = 1 << 22
				data, _ = json.Marshal(rec)
				if err := statefile.SaveRecord(path, data, true); err != nil {
					t.Fatal(err)
				}
				rt, err = host.Open(tgt.Name, stateDir, log)
				if err != nil {
					t.Fatal(err)
				}
				rec2, err := rt.Recover(context.Background())
				if err != nil || rec2 == nil {
					t.Fatalf("recover: %+v %v", rec2, err)
				}
			}
			if p, err := host.PendingTrial(stateDir); err != nil || p != nil {
				t.Fatalf("a trial is still pending after the revert: %+v %v", p, err)
			}
			if got := trialBondSnapshot(t, tgt.NL); got != before {
				t.Fatalf("the revert is not exact:\nbefore:\n%s\nafter:\n%s", before, got)
			}
		})
	}
}

// trialBondApply applies an intent, failing unless it converges.
func trialBondApply(t *testing.T, rt *host.Runtime, doc string) {
	t.Helper()
	g, err := render.Load(map[string][]byte{"intent.json": []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Apply(context.Background(), g, host.ApplyOptions{})
	if err != nil || !res.Converged() {
		t.Fatalf("apply: %v %v", err, res.Problems)
	}
}

// trialBondSnapshot: per link (sorted by name), its kind, MTU, up flag,
// master, bond mode, VLAN id and parent (by name), and its addresses
// (sorted), without ifindexes.
func trialBondSnapshot(t *testing.T, h *netlink.Handle) string {
	t.Helper()
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	var lines []string
	for _, l := range links {
		a := l.Attrs()
		line := fmt.Sprintf("%s %s mtu=%d up=%v master=%s mac=%s", a.Name, l.Type(), a.MTU, a.Flags&1 != 0, names[a.MasterIndex], a.HardwareAddr)
		switch v := l.(type) {
		case *netlink.Bond:
			line += fmt.Sprintf(" mode=%s miimon=%d", v.Mode, v.Miimon)
		case *netlink.Vlan:
			line += fmt.Sprintf(" vlan id=%d parent=%s", v.VlanId, names[a.ParentIndex])
		}
		addrs, err := h.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			t.Fatal(err)
		}
		var as []string
		for _, ad := range addrs {
			if ad.IP.IsLinkLocalUnicast() {
				continue
			}
			as = append(as, ad.IPNet.String())
		}
		slices.Sort(as)
		lines = append(lines, line+" addrs="+strings.Join(as, ","))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// testWriter sends the runtime's log to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// trialChildEnv, when set ("try <namespace> <state dir>"), makes the test
// binary a stand-in for `netagent try` (init below): it begins the trial
// of trialBondTrial in the namespace, applies it and exits without
// reverting it, printing how many kill points the apply passed; with
// NETAGENT_TEST_KILL_AFTER it kills itself at that point of the apply.
// With "recover ..." it stands in for `netagent recover`.
const trialChildEnv = "NETAGENT_VMTEST_TRIAL_CHILD"

// trialDocEnv, when set, is the trial's intent instead of trialBondTrial.
const trialDocEnv = "NETAGENT_VMTEST_TRIAL_DOC"

func init() {
	if arg := os.Getenv(trialChildEnv); arg != "" {
		os.Exit(trialChild(arg))
	}
}

func trialChild(arg string) int {
	what, arg, _ := strings.Cut(arg, " ")
	ns, stateDir, _ := strings.Cut(arg, " ")
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "trial child:", err); return 3 }
	rt, err := host.Open(ns, stateDir, logrus.New())
	if err != nil {
		return fail(err)
	}
	if what == "recover" {
		if rec, err := rt.Recover(context.Background()); err != nil || rec == nil {
			return fail(fmt.Errorf("recover: %+v %v", rec, err))
		}
		fmt.Printf("kill points: %d\n", host.KillPoints())
		return 0
	}
	doc := trialBondTrial
	if d := os.Getenv(trialDocEnv); d != "" {
		doc = d
	}
	files := map[string][]byte{"trial.json": []byte(doc)}
	intended, err := render.Load(files)
	if err != nil {
		return fail(err)
	}
	if _, err := rt.BeginTrial(host.Trial{Files: files}); err != nil {
		return fail(err)
	}
	res, err := rt.Apply(context.Background(), intended, host.ApplyOptions{})
	if err != nil || !res.Converged() {
		return fail(fmt.Errorf("apply: %v %v", err, res.Problems))
	}
	fmt.Printf("kill points: %d\n", host.KillPoints())
	return 0
}

// A process running the trial is killed (SIGKILL) at points spread over
// its apply, or ends right after it: Recover, as `netagent recover` runs
// it, puts the bond's mode and the VLAN's id back exactly, also when a
// recover is itself killed at points spread over its revert.
func TestInVMTrialBondModeVLANIDKilled(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	tgt := testns.New(t)
	for _, nic := range []string{"eth1", "eth2"} {
		if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: nic}}); err != nil {
			t.Fatalf("adding dummy %s: %v", nic, err)
		}
	}
	rt, stateDir := trialRuntime(t, tgt.Name)
	trialBondApply(t, rt, trialBondBefore)
	before := trialBondSnapshot(t, tgt.NL)
	child := func(what string, killAfter int) (out string, killed bool) {
		return runTrialChild(t, what, tgt.Name, stateDir, "", killAfter)
	}
	recoverExact := func(what string) {
		t.Helper()
		trialRecoverExact(t, rt, what, before, func() string { return trialBondSnapshot(t, tgt.NL) })
	}
	countPoints := func(what string) int {
		t.Helper()
		return trialChildPoints(t, what, child)
	}
	points := countPoints("try")
	if got := trialBondSnapshot(t, tgt.NL); !strings.Contains(got, "mode=802.3ad") || !strings.Contains(got, "vlan id=20") {
		t.Fatalf("the trial is not in the kernel:\n%s", got)
	}
	recoverExact("after the whole apply")
	ks := spreadVM(1, points, 8)
	for _, k := range ks {
		if _, killed := child("try", k); !killed {
			t.Fatalf("kill point %d of %d: not killed", k, points)
		}
		recoverExact(fmt.Sprintf("killed at point %d of %d", k, points))
	}
	// The recover itself killed, at points spread over its revert, then
	// recovered again.
	child("try", 1<<30)
	recPoints := countPoints("recover")
	if got := trialBondSnapshot(t, tgt.NL); got != before {
		t.Fatalf("recover is not exact:\nbefore:\n%s\nafter:\n%s", before, got)
	}
	rks := spreadVM(1, recPoints, 5)
	for _, k := range rks {
		child("try", 1<<30)
		if _, killed := child("recover", k); !killed {
			t.Fatalf("recover's kill point %d of %d: not killed", k, recPoints)
		}
		recoverExact(fmt.Sprintf("recover killed at point %d of %d", k, recPoints))
	}
	t.Logf("%d kill points of the apply's %d and %d of the revert's %d tried: all exact", len(ks), points, len(rks), recPoints)
}

// trialRuntime opens the runtime of ns on a fresh state directory, its
// log to t.Log, closed when the test ends.
func trialRuntime(t *testing.T, ns string) (*host.Runtime, string) {
	t.Helper()
	stateDir := t.TempDir()
	log := logrus.New()
	log.SetOutput(testWriter{t})
	rt, err := host.Open(ns, stateDir, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, stateDir
}

// trialRecoverExact runs Recover, failing unless it reverts a trial and
// snapshot then shows before.
func trialRecoverExact(t *testing.T, rt *host.Runtime, what, before string, snapshot func() string) {
	t.Helper()
	rec, err := rt.Recover(context.Background())
	if err != nil || rec == nil {
		t.Fatalf("%s: recover: %+v %v", what, rec, err)
	}
	if got := snapshot(); got != before {
		t.Fatalf("%s: recover is not exact:\nbefore:\n%s\nafter:\n%s", what, before, got)
	}
}

// runTrialChild runs the test binary as trialChild (what: "try" or
// "recover") on ns and stateDir, the trial's intent doc (trialBondTrial
// when empty), killing itself after killAfter kill points; killed says
// it died of SIGKILL.
func runTrialChild(t *testing.T, what, ns, stateDir, doc string, killAfter int) (out string, killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), trialChildEnv+"="+what+" "+ns+" "+stateDir, "NETAGENT_TEST_KILL_AFTER="+strconv.Itoa(killAfter))
	if doc != "" {
		cmd.Env = append(cmd.Env, trialDocEnv+"="+doc)
	}
	data, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == -1 {
		return string(data), true
	} else if err != nil {
		t.Fatalf("the trial's process: %v\n%s", err, data)
	}
	return string(data), false
}

// trialChildPoints runs the whole of what (child with no kill) and
// returns how many kill points it passed (at least 2).
func trialChildPoints(t *testing.T, what string, child func(what string, killAfter int) (string, bool)) int {
	t.Helper()
	out, killed := child(what, 1<<30)
	var points int
	if i := strings.LastIndex(out, "kill points:"); i < 0 || killed {
		t.Fatalf("the whole %s: killed=%v %q", what, killed, out)
	} else if _, err := fmt.Sscanf(out[i:], "kill points: %d", &points); err != nil || points < 2 {
		t.Fatalf("the whole %s: %v %q", what, err, out)
	}
	return points
}

// spreadVM returns n points from lo to hi (both included), evenly spread,
// or every point when there are fewer (spread's twin: that one is built
// only outside the VM).
func spreadVM(lo, hi, n int) []int {
	var out []int
	for i := range n {
		out = append(out, lo+(hi-lo)*i/(n-1))
	}
	return slices.Compact(out)
}
