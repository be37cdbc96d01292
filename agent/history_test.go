package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/internal/statefile"
)

// Each change of the documents is a version; an apply expecting another
// version is refused and changes nothing; a rollback takes the place of
// the documents, also across a restart with the same files, until one
// changes.
func TestVersionsAndRollbackOverride(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		withState := func(c *Config) { c.StateDir = dir }
		r := newRig(t, baseDocs(), withState).start()
		if st := r.status(); st.Version != 1 || !strings.HasPrefix(st.Digest, "sha256:") {
			t.Fatalf("after start: version %d digest %q", st.Version, st.Digest)
		}
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if st := r.status(); st.Version != 2 {
			t.Fatalf("after a file change: version %d", st.Version)
		}
		r.k.takeOps()
		stale := 1
		resp := r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(`{"version": 1}`), IfVersion: &stale})
		if !resp.Conflict || resp.Error != (&versions.ConflictError{Current: 2, Expected: 1}).Error() {
			t.Fatalf("stale apply: %+v", resp)
		}
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Fatalf("a refused apply changed the kernel: %v", ops)
		}

		resp = r.call(api.Request{Command: api.CmdRollback})
		if resp.Error != "" || resp.Status.Version != 3 || resp.Status.Override == "" || r.k.has(route2Ref) || !r.k.has(routeRef) {
			t.Fatalf("rollback: %+v", resp)
		}
		list, _ := versions.Open(dir, 0).List()
		if len(list) != 3 || list[2].Source != "rollback 1" || list[2].Digest != list[0].Digest {
			t.Fatalf("history %+v", list)
		}
		r.stop()

		// The same files: the rollback stays in force, no new version.
		r2 := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": twoRoutesDoc}, withState)
		r2.k = r.k
		r2.a.cfg.Kernel = r.k
		r2.start()
		if st := r2.status(); st.Version != 3 || st.Override == "" || r.k.has(route2Ref) {
			t.Fatalf("after a restart: version %d override %q", st.Version, st.Override)
		}
		// A file changes: the documents apply again, as a new version.
		r2.src.set("20-routes.json", `{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if st := r2.status(); st.Version != 4 || st.Override != "" || !r.k.has(route2Ref) || r.k.has(routeRef) {
			t.Fatalf("after a file change: version %d override %q", st.Version, st.Override)
		}
		if resp := r2.call(api.Request{Command: api.CmdRollback, Version: 99}); !strings.Contains(resp.Error, "no such version") {
			t.Fatalf("rollback to a version never made: %+v", resp)
		}
		if err := versions.Check(versions.Open(dir, 0), 4); err != nil || errors.Is(err, versions.ErrConflict) {
			t.Fatal(err)
		}
	})
}

// TestDamagedRollbackOverrideRefusesStart: the record of a rollback in
// force, emptied or cut short, stops the daemon's start naming the file
// (before the fix it was ignored with a log line, and the daemon applied
// the documents the operator had rolled back from).
func TestDamagedRollbackOverrideRefusesStart(t *testing.T) {
	for name, damage := range map[string]func([]byte) []byte{
		"emptied":   func([]byte) []byte { return nil },
		"cut short": func(b []byte) []byte { return b[:len(b)/2] },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				withState := func(c *Config) { c.StateDir = dir }
				r := newRig(t, baseDocs(), withState).start()
				r.src.set("20-routes.json", twoRoutesDoc)
				time.Sleep(DefaultIntentDebounce + time.Millisecond)
				synctest.Wait()
				if resp := r.call(api.Request{Command: api.CmdRollback}); resp.Error != "" || resp.Status.Override == "" {
					t.Fatalf("rollback: %+v", resp)
				}
				r.stop()
				path := filepath.Join(dir, versions.OverrideFile)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, damage(data), 0o600); err != nil {
					t.Fatal(err)
				}
				r2 := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": twoRoutesDoc}, withState)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				err = r2.a.Run(ctx)
				if !errors.Is(err, statefile.ErrDamaged) || !strings.Contains(err.Error(), path) {
					t.Errorf("start over a damaged %s: %v, want %v naming it", versions.OverrideFile, err, statefile.ErrDamaged)
				}
			})
		})
	}
}
