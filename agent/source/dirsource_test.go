package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func TestDirSourceLoadsOnlyIntentFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", "A")
	write(".a.json.swp", "swap")
	write("notes.txt", "txt")
	write("b.json~", "backup")
	os.Mkdir(filepath.Join(dir, "d.json"), 0o700)
	os.Symlink("a.json", filepath.Join(dir, "link.json"))
	os.Symlink("missing", filepath.Join(dir, "dangling.json"))
	got, err := NewDirSource(dir, logrus.New()).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["a.json"]) != "A" || string(got["link.json"]) != "A" {
		t.Errorf("Load: %q", got)
	}
}

func TestDirSourceLoadFailsForAMissingDirectory(t *testing.T) {
	if _, err := NewDirSource(filepath.Join(t.TempDir(), "nope"), logrus.New()).Load(); err == nil {
		t.Error("no error for a missing directory")
	}
}

// TestDirSourceSeesRenames: a tool that writes a temporary file and
// renames it over the intent file (as editors and config management do)
// must be seen, although the watched file's inode is replaced.
func TestDirSourceSeesRenames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	os.WriteFile(path, []byte("one"), 0o600)
	src := NewDirSource(dir, logrus.New())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan string)
	go src.Watch(ctx, changed)
	waitChange := func(what string) {
		t.Helper()
		select {
		case name := <-changed:
			if name != src.Name() {
				t.Fatalf("change from %q", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported for %s", what)
		}
	}
	waitChange("the start of the watch")
	for i, text := range []string{"two", "three"} {
		tmp := filepath.Join(dir, ".a.json.tmp")
		os.WriteFile(tmp, []byte(text), 0o600)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		waitChange("rename " + text)
		drainChange(changed)
		got, _ := src.Load()
		if string(got["a.json"]) != text {
			t.Errorf("after rename %d: %q", i, got["a.json"])
		}
	}
	os.Remove(path)
	waitChange("a removal")
}

// drainChange takes the change that may still be pending from the same burst.
func drainChange(changed chan string) {
	select {
	case <-changed:
	case <-time.After(100 * time.Millisecond):
	}
}

// nobody is the uid and gid of "a user other than root".
const nobody = 65534

// strictTree is an intent directory in a temporary directory, with a place
// for link targets outside it, all owned by root with safe modes.
type strictTree struct {
	t              *testing.T
	root, dir, far string
}

func newStrictTree(t *testing.T) *strictTree {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: chown")
	}
	root := t.TempDir()
	st := &strictTree{t: t, root: root, dir: filepath.Join(root, "intents"), far: filepath.Join(root, "elsewhere", "net")}
	for _, d := range []string{st.dir, st.far} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func (st *strictTree) write(path, text string, mode os.FileMode) {
	st.t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		st.t.Fatal(err)
	}
	st.chmod(path, mode)
}

func (st *strictTree) chmod(path string, mode os.FileMode) {
	st.t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		st.t.Fatal(err)
	}
}

func (st *strictTree) chown(path string, uid, gid int) {
	st.t.Helper()
	if err := os.Lchown(path, uid, gid); err != nil {
		st.t.Fatal(err)
	}
}

func (st *strictTree) symlink(target, link string) {
	st.t.Helper()
	if err := os.Symlink(target, link); err != nil {
		st.t.Fatal(err)
	}
}

// TestDirSourceRefusesFilesOthersCanWrite: every way a user other than
// root could change what the root daemon applies is refused, naming the
// file and the reason (as sshd's StrictModes); safe files next to it are
// read.
func TestDirSourceRefusesFilesOthersCanWrite(t *testing.T) {
	cases := []struct {
		name  string
		setup func(st *strictTree) // makes bad.json (and good.json is there)
		why   string               // in the refusal
		all   bool                 // good.json is refused too
	}{
		{"world-writable file", func(st *strictTree) {
			st.write(filepath.Join(st.dir, "bad.json"), "B", 0o666)
		}, "bad.json is writable by group and others (mode 0666)", false},
		{"group-writable file of a non-root group", func(st *strictTree) {
			p := filepath.Join(st.dir, "bad.json")
			st.write(p, "B", 0o664)
			st.chown(p, 0, nobody)
		}, "bad.json is writable by its group (mode 0664)", false},
		{"file owned by a non-root user", func(st *strictTree) {
			p := filepath.Join(st.dir, "bad.json")
			st.write(p, "B", 0o644)
			st.chown(p, nobody, nobody)
		}, "bad.json is owned by uid 65534, not by root", false},
		{"world-writable intent directory", func(st *strictTree) {
			st.write(filepath.Join(st.dir, "bad.json"), "B", 0o644)
			st.chmod(st.dir, 0o777)
		}, "intents is writable by group and others (mode 0777)", true},
		{"sticky world-writable intent directory", func(st *strictTree) {
			st.write(filepath.Join(st.dir, "bad.json"), "B", 0o644)
			st.chmod(st.dir, 0o777|os.ModeSticky)
		}, "intents is writable by group and others (mode 0777)", true},
		{"intent directory owned by a non-root user", func(st *strictTree) {
			st.write(filepath.Join(st.dir, "bad.json"), "B", 0o644)
			st.chown(st.dir, nobody, nobody)
		}, "intents is owned by uid 65534", true},
		{"writable directory above the intent directory", func(st *strictTree) {
			st.write(filepath.Join(st.dir, "bad.json"), "B", 0o644)
			st.chmod(st.root, 0o777)
		}, "is writable by group and others (mode 0777)", true},
		{"link to a world-writable file", func(st *strictTree) {
			target := filepath.Join(st.far, "b.json")
			st.write(target, "B", 0o666)
			st.symlink(target, filepath.Join(st.dir, "bad.json"))
		}, "net/b.json is writable by group and others", false},
		{"link to a file in a writable directory", func(st *strictTree) {
			target := filepath.Join(st.far, "b.json")
			st.write(target, "B", 0o644)
			st.chmod(st.far, 0o775)
			st.symlink(target, filepath.Join(st.dir, "bad.json"))
		}, "net is writable by its group (mode 0775)", false},
		{"link to a file in a sticky world-writable directory", func(st *strictTree) {
			target := filepath.Join(st.far, "b.json")
			st.write(target, "B", 0o644)
			st.chmod(st.far, 0o777|os.ModeSticky)
			st.symlink(target, filepath.Join(st.dir, "bad.json"))
		}, "net is writable by group and others (mode 0777)", false},
		{"link through a link a non-root user owns", func(st *strictTree) {
			target := filepath.Join(st.far, "b.json")
			st.write(target, "B", 0o644)
			hop := filepath.Join(st.far, "hop.json")
			st.symlink(target, hop)
			st.chown(hop, nobody, nobody)
			st.symlink(hop, filepath.Join(st.dir, "bad.json"))
		}, "hop.json is owned by uid 65534", false},
		{"link through a directory a non-root user owns", func(st *strictTree) {
			evil := filepath.Join(st.root, "evil")
			if err := os.Mkdir(evil, 0o755); err != nil {
				t.Fatal(err)
			}
			st.write(filepath.Join(evil, "b.json"), "B", 0o644)
			st.chown(evil, nobody, nobody)
			st.symlink("../evil/b.json", filepath.Join(st.dir, "bad.json"))
		}, "evil is owned by uid 65534", false},
		{"link to a directory a non-root user owns, then a file", func(st *strictTree) {
			evil := filepath.Join(st.root, "evil")
			if err := os.Mkdir(evil, 0o755); err != nil {
				t.Fatal(err)
			}
			st.write(filepath.Join(evil, "b.json"), "B", 0o644)
			st.chown(evil, nobody, nobody)
			st.symlink(evil, filepath.Join(st.far, "d"))
			st.symlink(filepath.Join(st.far, "d", "b.json"), filepath.Join(st.dir, "bad.json"))
		}, "evil is owned by uid 65534", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newStrictTree(t)
			st.write(filepath.Join(st.dir, "good.json"), "G", 0o644)
			c.setup(st)
			got, err := NewDirSource(st.dir, logrus.New()).Load()
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Load: %v (docs %q), want a RefusedError", err, got)
			}
			why := refused.Docs["bad.json"]
			if why == nil || !strings.Contains(why.Error(), c.why) || !strings.Contains(why.Error(), "must be owned by root") {
				t.Errorf("refusal of bad.json: %v, want %q", why, c.why)
			}
			if _, read := got["bad.json"]; read {
				t.Error("bad.json was read")
			}
			if c.all {
				if len(got) != 0 || refused.Docs["good.json"] == nil {
					t.Errorf("with an unsafe directory, read %q and refused %v", got, refused.Docs)
				}
				return
			}
			if string(got["good.json"]) != "G" || len(refused.Docs) != 1 {
				t.Errorf("the safe file: read %q, refused %v", got, refused.Docs)
			}
		})
	}
}

// TestDirSourceFollowsSafeLinks: links to files root controls are read,
// wherever the target is, also through a sticky directory above it and a
// relative link; the intent directory may be reached through a link.
func TestDirSourceFollowsSafeLinks(t *testing.T) {
	st := newStrictTree(t)
	st.chmod(filepath.Dir(st.far), 0o777|os.ModeSticky) // like /tmp, above the target's directory
	st.write(filepath.Join(st.far, "b.json"), "B", 0o600)
	st.symlink(filepath.Join(st.far, "b.json"), filepath.Join(st.dir, "abs.json"))
	st.symlink("../elsewhere/net/b.json", filepath.Join(st.dir, "rel.json"))
	st.write(filepath.Join(st.dir, "own.json"), "O", 0o640)
	dirLink := filepath.Join(st.root, "etc-netagent")
	st.symlink(st.dir, dirLink)
	got, err := NewDirSource(dirLink, logrus.New()).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got["abs.json"]) != "B" || string(got["rel.json"]) != "B" || string(got["own.json"]) != "O" {
		t.Errorf("Load: %q", got)
	}
}

// TestDirSourceWatchesLinkTargets: an edit of the target of a link that
// points out of the directory (rename-based, as editors save) is seen, and
// so is a change of its mode.
func TestDirSourceWatchesLinkTargets(t *testing.T) {
	st := newStrictTree(t)
	target := filepath.Join(st.far, "b.json")
	st.write(target, "one", 0o644)
	st.symlink(target, filepath.Join(st.dir, "b.json"))
	src := NewDirSource(st.dir, logrus.New())
	if got, err := src.Load(); err != nil || string(got["b.json"]) != "one" {
		t.Fatalf("Load: %q %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan string)
	go src.Watch(ctx, changed)
	waitChange := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported for %s", what)
		}
	}
	waitChange("the start of the watch")
	drainChange(changed)
	tmp := filepath.Join(st.far, ".b.json.tmp")
	st.write(tmp, "two", 0o644)
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	waitChange("an edit of the link's target")
	drainChange(changed)
	if got, err := src.Load(); err != nil || string(got["b.json"]) != "two" {
		t.Errorf("after the edit: %q %v", got, err)
	}
	st.chmod(target, 0o666)
	waitChange("a chmod of the link's target")
	drainChange(changed)
	var refused *RefusedError
	if got, err := src.Load(); !errors.As(err, &refused) || len(got) != 0 {
		t.Errorf("after the chmod: %q %v", got, err)
	}
	st.chmod(target, 0o644) // the refused target made safe again
	waitChange("the refused target made safe")
	if got, err := src.Load(); err != nil || string(got["b.json"]) != "two" {
		t.Errorf("after the target was made safe: %q %v", got, err)
	}
}

// TestDirSourceTellsRenamesFromWrites: a file renamed into place is
// reported as settled (complete); the temporary file's own events are not
// changes; an in-place write and a removal are ordinary changes, which
// the loop gives the quiet period.
func TestDirSourceTellsRenamesFromWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	os.WriteFile(path, []byte("one"), 0o600)
	src := NewDirSource(dir, logrus.New())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed, settled := make(chan string), make(chan string)
	go src.WatchSettled(ctx, changed, settled)
	wait := func(wantSettled bool, what string) {
		t.Helper()
		select {
		case <-changed:
			if wantSettled {
				t.Fatalf("%s reported as an ordinary change", what)
			}
		case <-settled:
			if !wantSettled {
				t.Fatalf("%s reported as settled", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported for %s", what)
		}
	}
	wait(false, "the start of the watch")
	tmp := filepath.Join(dir, ".a.json.tmp")
	os.WriteFile(tmp, []byte("two"), 0o600)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wait(true, "a rename into place")
	if err := os.WriteFile(path, []byte("three"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait(false, "an in-place write")
	drainChange(changed)
	os.Remove(path)
	wait(false, "a removal")
}
