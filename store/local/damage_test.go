package local_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

// A value file that is not the one its log line names (cut short,
// emptied, replaced by another revision's) is reported, through Read,
// List and a reopened store, and after a compaction too: never taken for
// the value. Before, the value file was read as it stood: an emptied one
// was an empty document, another revision's was taken as this one's.
func TestDamagedValueFileIsReported(t *testing.T) {
	ctx := context.Background()
	big := func(c byte) []byte { return bytes.Repeat([]byte{c}, 8192) } // > InlineMax: a value file
	for name, damage := range map[string]func(t *testing.T, dir string, v1, v2 store.Version){
		"emptied": func(t *testing.T, dir string, v1, _ store.Version) {
			writeFile(t, valuePath(dir, v1), nil)
		},
		"cut short": func(t *testing.T, dir string, v1, _ store.Version) {
			writeFile(t, valuePath(dir, v1), big('a')[:4096])
		},
		"another revision's": func(t *testing.T, dir string, v1, v2 store.Version) {
			data, err := os.ReadFile(valuePath(dir, v2))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, valuePath(dir, v1), data)
		},
	} {
		t.Run(name, func(t *testing.T) {
			for _, compact := range []bool{false, true} {
				dir := t.TempDir()
				s := open(t, dir, local.Options{NoFSNotify: true})
				v1, err := s.WriteCAS(ctx, "docs/a", big('a'), 0)
				if err != nil {
					t.Fatal(err)
				}
				v2, err := s.WriteCAS(ctx, "docs/b", big('b'), 0)
				if err != nil {
					t.Fatal(err)
				}
				if compact {
					if err := s.Compact(ctx, v2); err != nil {
						t.Fatal(err)
					}
				}
				damage(t, dir, v1, v2)
				if e, err := s.Read(ctx, "docs/a"); !errors.Is(err, local.ErrDamaged) {
					t.Errorf("compacted %v: Read of a damaged value: %d bytes, %v; want ErrDamaged", compact, len(e.Value), err)
				}
				if _, _, err := s.List(ctx, "docs/"); !errors.Is(err, local.ErrDamaged) {
					t.Errorf("compacted %v: List over a damaged value: %v; want ErrDamaged", compact, err)
				}
				r := open(t, dir, local.Options{NoFSNotify: true})
				if e, err := r.Read(ctx, "docs/a"); !errors.Is(err, local.ErrDamaged) {
					t.Errorf("compacted %v: Read after a reopen: %d bytes, %v; want ErrDamaged", compact, len(e.Value), err)
				}
				if e, err := r.Read(ctx, "docs/b"); err != nil || !bytes.Equal(e.Value, big('b')) {
					t.Errorf("compacted %v: the whole value next to it: %d bytes, %v", compact, len(e.Value), err)
				}
			}
		})
	}
}

// A value file replaced by a symbolic link is refused, never read
// through.
func TestValueFileLinkIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, local.Options{NoFSNotify: true})
	v, err := s.WriteCAS(ctx, "docs/a", bytes.Repeat([]byte("x"), 8192), 0)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	writeFile(t, other, bytes.Repeat([]byte("x"), 8192))
	os.Remove(valuePath(dir, v))
	if err := os.Symlink(other, valuePath(dir, v)); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Read(ctx, "docs/a"); err == nil {
		t.Errorf("Read through a link: %d bytes, nil error; want a refusal", len(e.Value))
	}
}

func valuePath(dir string, v store.Version) string {
	return filepath.Join(dir, local.ValuesDir, fmt.Sprintf("%016d", v))
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
