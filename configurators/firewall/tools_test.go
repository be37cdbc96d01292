package firewall

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// pathWith makes a directory holding links to the named programs (found on
// the current PATH), and makes it the whole PATH for the test.
func pathWith(t *testing.T, programs ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, p := range programs {
		target, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// toolsEnv registers the firewall configurators of a fresh namespace with
// the PATH as it is now.
func toolsEnv(t *testing.T, tgt *netnsx.Target) (*reconciler.TypeRegistry, string) {
	t.Helper()
	dir := t.TempDir()
	reg := &reconciler.TypeRegistry{}
	if err := Register(reg, tgt, dir); err != nil {
		t.Fatalf("registering without iptables: %v", err)
	}
	return reg, dir
}

func toolsChain(fam items.Family, name string) *items.IptablesChain {
	return &items.IptablesChain{Family: fam, Table: "filter", Chain: name, JumpFrom: "FORWARD",
		Rules: [][]string{{"-j", "ACCEPT"}}}
}

// applyItems reconciles an empty namespace towards want.
func applyItems(t *testing.T, reg *reconciler.TypeRegistry, tgt *netnsx.Target, dir string, want ...dg.Item) reconciler.Status {
	t.Helper()
	cur, err := ReadBack(tgt, dir, nil)
	if err != nil {
		t.Fatalf("read-back: %v", err)
	}
	return reconciler.New(reg).Reconcile(context.Background(), dg.New("current", cur...), dg.New("intended", want...))
}

// itemErr returns the last error of an item after a reconcile.
func itemErr(st reconciler.Status, item dg.Item) error {
	_, s, _ := st.NewCurrentState.Lookup(dg.Ref(item))
	return s.LastErr
}

// TestNoIptablesOnPath: with no iptables program at all, the firewall
// configurators still register, read-back skips the chains, sysctls work,
// and a chain fails as its own item, naming itself and the missing program.
func TestNoIptablesOnPath(t *testing.T) {
	tgt := testns.New(t)
	t.Setenv("PATH", t.TempDir())
	err := MissingTools()
	if !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), "iptables-restore not found") ||
		!strings.Contains(err.Error(), "ip6tables-restore not found") {
		t.Errorf("MissingTools() = %v", err)
	}
	reg, dir := toolsEnv(t, tgt)
	v4, v6 := toolsChain(items.FamilyIPv4, "NA-V4"), toolsChain(items.FamilyIPv6, "NA-V6")
	fwd := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}
	st := applyItems(t, reg, tgt, dir, v4, v6, fwd)
	for _, c := range []struct {
		ch   *items.IptablesChain
		prog string
	}{{v4, "iptables-restore"}, {v6, "ip6tables-restore"}} {
		err := itemErr(st, c.ch)
		if !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), c.prog+" not found") ||
			!strings.Contains(err.Error(), c.ch.Name()) {
			t.Errorf("chain %s: %v, want %s not found, naming the chain", c.ch.Name(), err, c.prog)
		}
	}
	if err := itemErr(st, fwd); err != nil {
		t.Errorf("sysctl without iptables: %v", err)
	}
	// The configurator's own calls, one by one, too.
	c, err := newChainConfigurator(tgt, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), v4); !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), v4.Name()) {
		t.Errorf("Create: %v", err)
	}
	if err := c.Delete(context.Background(), v4); !errors.Is(err, ErrNoTools) {
		t.Errorf("Delete: %v", err)
	}
}

// TestOnlyIptablesOnPath: with the IPv4 programs only, IPv4 chains work
// and IPv6 ones fail as items; with the nf_tables variant's names only
// (iptables-nft...), IPv4 chains work too.
func TestOnlyIptablesOnPath(t *testing.T) {
	for _, variant := range []string{"iptables", "iptables-nft"} {
		t.Run(variant, func(t *testing.T) {
			tgt := testns.New(t)
			pathWith(t, variant, variant+"-save", variant+"-restore")
			err := MissingTools()
			if !errors.Is(err, ErrNoTools) || strings.Contains(err.Error(), "iptables-restore not found (no iptables,") {
				t.Errorf("MissingTools() = %v, want only ip6tables missing", err)
			}
			reg, dir := toolsEnv(t, tgt)
			v4, v6 := toolsChain(items.FamilyIPv4, "NA-V4"), toolsChain(items.FamilyIPv6, "NA-V6")
			st := applyItems(t, reg, tgt, dir, v4, v6)
			if err := itemErr(st, v4); err != nil {
				t.Errorf("ipv4 chain with %s: %v", variant, err)
			}
			if err := itemErr(st, v6); !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), "ip6tables-restore not found") {
				t.Errorf("ipv6 chain: %v", err)
			}
			cur, err := ReadBack(tgt, dir, nil)
			if err != nil || len(cur) != 1 || dg.Ref(cur[0]) != dg.Ref(v4) {
				t.Errorf("read-back: %v %v, want the ipv4 chain", cur, err)
			}
		})
	}
}

// TestNsRunnerStream: a program's output streamed from inside the
// namespace arrives whole, in order, also with input; a program that fails is an error
// naming it, with its standard error; an error of consume is returned
// after the program ran to its end.
func TestNsRunnerStream(t *testing.T) {
	tgt := testns.New(t)
	r := nsRunner{tgt}
	ctx := context.Background()
	var got []byte
	if err := r.stream(ctx, nil, func(b []byte) error { got = append(got, b...); return nil }, "seq", "1", "100000"); err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command("seq", "1", "100000").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("streamed %d bytes, want %d", len(got), len(want))
	}
	got = nil
	if err := r.stream(ctx, want, func(b []byte) error { got = append(got, b...); return nil }, "cat"); err != nil || string(got) != string(want) {
		t.Errorf("cat of %d bytes of input: %d bytes, %v", len(want), len(got), err)
	}
	got = nil
	if err := r.stream(ctx, nil, func(b []byte) error { got = append(got, b...); return nil }, "cat", "/proc/net/dev"); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(got)), "\n"); len(lines) != 3 || !strings.Contains(lines[2], "lo:") {
		t.Errorf("/proc/net/dev in the namespace:\n%s\nwant lo only", got)
	}
	if err := r.stream(ctx, nil, func([]byte) error { return nil }, "ls", "/nonexistent-na"); err == nil ||
		!strings.Contains(err.Error(), "ls") || !strings.Contains(err.Error(), "nonexistent-na") {
		t.Errorf("failing program: %v", err)
	}
	stop := errors.New("stop")
	calls := 0
	if err := r.stream(ctx, nil, func([]byte) error { calls++; return stop }, "seq", "1", "100000"); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("consume failing: %v after %d calls, want stop after 1", err, calls)
	}
}
