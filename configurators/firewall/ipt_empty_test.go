package firewall

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// The probe answers "no table" exactly while the family has none in the
// namespace, for either variant, and only then does save skip the
// program: a chain made by someone else (here with iptables itself) is
// saved and read as before.
func TestTablesProbeSkipsOnlyAnEmptyFamily(t *testing.T) {
	eachVariant(t, func(t *testing.T, variant, prog string) {
		tgt := testns.New(t)
		v4 := probeOf(t, tgt, items.FamilyIPv4, variant)
		v6 := probeOf(t, tgt, items.FamilyIPv6, variant)
		for fam, p := range map[string]tablesProbe{"IPv4": v4, "IPv6": v6} {
			if none, err := p(); err != nil || !none {
				t.Fatalf("%s in a new namespace: none=%v, %v; want no table", fam, none, err)
			}
		}
		testns.Exec(t, tgt, prog, "-t", "filter", "-N", "someone-elses")
		if none, err := v4(); err != nil || none {
			t.Errorf("IPv4 with a chain: none=%v, %v; want a table", none, err)
		}
		if none, err := v6(); err != nil || !none {
			t.Errorf("IPv6 without: none=%v, %v; want no table", none, err)
		}

		b, err := newExecBackend(tgt, items.FamilyIPv4)
		if err != nil {
			t.Fatal(err)
		}
		eb := b.(*execBackend)
		eb.saveCmd = mustLook(t, "iptables-"+variant+"-save")
		eb.noTables = v4
		tables, err := eb.save(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v := tables["filter"]; v == nil || !hasChain(v, "someone-elses") {
			t.Errorf("save with a table: %v; want filter with the chain", tables)
		}
	})
}

// probeOf returns the probe of the variant's save program.
func probeOf(t *testing.T, tgt *netnsx.Target, fam items.Family, variant string) tablesProbe {
	t.Helper()
	prefix := "iptables"
	if fam == items.FamilyIPv6 {
		prefix = "ip6tables"
	}
	p := newTablesProbe(tgt, fam, mustLook(t, prefix+"-"+variant+"-save"))
	if p == nil {
		t.Fatalf("no probe for %s-%s-save", prefix, variant)
	}
	return p
}

func mustLook(t *testing.T, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// variantOf reads the variant from what the program's path resolves to,
// and says nothing for a name that tells neither.
func TestVariantOf(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, target string) string {
		p := filepath.Join(dir, name)
		if target == "" {
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("xtables-nft-multi", "")
	mk("xtables-legacy-multi", "")
	mk("busybox", "")
	for path, want := range map[string]string{
		mk("iptables-save", "xtables-nft-multi"):            "nft",
		mk("ip6tables-legacy-save", "xtables-legacy-multi"): "legacy",
		mk("iptables-other-save", "busybox"):                "",
		filepath.Join(dir, "missing"):                       "",
	} {
		if got := variantOf(path); got != want {
			t.Errorf("variantOf(%s) = %q, want %q", filepath.Base(path), got, want)
		}
	}
}

func hasChain(v *tableView, chain string) bool {
	_, ok := v.rules(chain)
	return ok
}

// eachVariant runs f as a subtest for iptables-nft and iptables-legacy,
// given the program's name: a variant not installed fails under CI (the
// setup script installs both) and is skipped elsewhere.
func eachVariant(t *testing.T, f func(t *testing.T, variant, prog string)) {
	for _, variant := range []string{"nft", "legacy"} {
		t.Run(variant, func(t *testing.T) {
			prog := "iptables-" + variant
			if _, err := exec.LookPath(prog); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s: %v (the setup script installs iptables)", prog, err)
				}
				t.Skipf("%s: %v", prog, err)
			}
			f(t, variant, prog)
		})
	}
}
