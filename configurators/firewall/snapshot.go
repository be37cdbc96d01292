package firewall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// SaveTables returns what iptables-save prints in t's namespace, per
// family, with the programs the configurator uses; a family without its
// programs is left out. It writes nothing.
func SaveTables(ctx context.Context, t *netnsx.Target) (map[items.Family]string, error) {
	out := map[items.Family]string{}
	for _, fam := range families {
		_, prefix, err := familyCommands(fam)
		if err != nil {
			return nil, err
		}
		cmds, err := findCommands(prefix)
		if err != nil {
			continue
		}
		b, err := nsRunner{t}.run(ctx, nil, cmds.save)
		if err != nil {
			return nil, fmt.Errorf("saving the %s tables: %w", fam, err)
		}
		out[fam] = string(b)
	}
	return out, nil
}

// Load replaces the fake's tables by what an iptables-save printed
// (SaveTables); the chains' policies and counters are dropped, as the
// fake has none. It is not counted as a restore.
func (f *FakeIPTables) Load(save string) error {
	var b strings.Builder
	for line := range strings.Lines(save) {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		b.WriteString(line + "\n")
	}
	f.tables = map[string]*tableView{}
	if b.Len() == 0 {
		return nil
	}
	err := f.restore(context.Background(), []byte(b.String()))
	f.restores = f.restores[:len(f.restores)-1]
	return err
}

// MaxSysctlValue bounds one sysctl value ReadSysctls keeps.
const MaxSysctlValue = 4096

// ReadSysctls reads every readable file under /proc/sys/net of t's
// namespace (path → value without its trailing newline), at most max of
// them; the write-only and unreadable ones and longer values are left
// out. It writes nothing.
func ReadSysctls(t *netnsx.Target, max int) (map[string]string, error) {
	out := map[string]string{}
	err := t.Do(func() error {
		return filepath.WalkDir("/proc/sys/net", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if len(out) >= max {
				return fmt.Errorf("more than %d files under /proc/sys/net", max)
			}
			if info, err := d.Info(); err != nil || info.Mode().Perm()&0o444 == 0 {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil || len(b) > MaxSysctlValue {
				return nil
			}
			out[path] = strings.TrimRight(string(b), "\n")
			return nil
		})
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading /proc/sys/net: %w", err)
	}
	return out, nil
}
