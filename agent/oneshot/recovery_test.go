package oneshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An emptied links.json (a needed record) stops Recover, named, and is
// left; a damaged lease (a cache) is only named. AcceptDamaged sets both
// aside, saying what each held, and Recover is then clean. (The CLI's
// words: cmd/netagent TestRecoverAcceptDamaged.)
func TestRecoverDamagedRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	links, lease := filepath.Join(dir, "links.json"), filepath.Join(dir, "dhcp4-wan0.json")
	damage(t, links, nil)                                   // emptied
	damage(t, lease, []byte(`{"interface": "wan0", "addr`)) // cut short
	o := &Options{StateDir: dir, Command: "recover"}
	res, err := Recover(context.Background(), o, RecoverOptions{})
	if err != nil || !res.Stopped || len(res.Damaged) != 2 || len(res.SetAside) != 0 {
		t.Fatalf("recover over damaged records: %+v, %v; want stopped naming both", res, err)
	}
	if data, err := os.ReadFile(links); err != nil || len(data) != 0 {
		t.Errorf("recover without AcceptDamaged changed %s: %q, %v", links, data, err)
	}
	res, err = Recover(context.Background(), o, RecoverOptions{AcceptDamaged: true})
	if err != nil || res.Stopped || len(res.SetAside) != 2 {
		t.Fatalf("accept damaged: %+v, %v", res, err)
	}
	for _, d := range res.SetAside {
		if d.Damaged.Path == links && !strings.Contains(d.Lost, "the settings NICs had") {
			t.Errorf("%s set aside saying it held %q", links, d.Lost)
		}
		if !strings.HasPrefix(d.To, d.Damaged.Path+".damaged-") {
			t.Errorf("%s set aside as %s", d.Damaged.Path, d.To)
		}
	}
	if res, err := Recover(context.Background(), o, RecoverOptions{}); err != nil || len(res.Damaged) != 0 || res.Stopped || res.Recovery != nil {
		t.Errorf("recover after AcceptDamaged: %+v, %v", res, err)
	}
}

// --all: one state directory per namespace under the root, "host" for
// the host's; files and a missing root are none.
func TestStateTargets(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"host", "na-a"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "stray"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := StateTargets(root)
	if err != nil || len(got) != 2 || got[0] != (StateTarget{"", filepath.Join(root, "host")}) || got[1].Netns != "na-a" {
		t.Fatalf("%+v, %v", got, err)
	}
	if got, err := StateTargets(filepath.Join(root, "none")); err != nil || len(got) != 0 {
		t.Fatalf("a missing root: %+v, %v", got, err)
	}
}

// damage leaves path holding data, a record that is not whole.
func damage(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
