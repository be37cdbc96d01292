package oneshot

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
)

const bridgeDoc = `{"version": 1, "interfaces": [{"name": "br0", "type": "bridge"}]}`

// countingOptions are Options on a fresh namespace whose renderer counts
// the renders.
func countingOptions(t *testing.T, write bool) (*Options, *atomic.Int32, []string) {
	tgt := testns.New(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "br.json")
	if err := os.WriteFile(file, []byte(bridgeDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	var n atomic.Int32
	o := &Options{Netns: tgt.Name, StateDir: filepath.Join(dir, "state"), Write: write, Log: log,
		Render: func(files map[string]*intent.Intent, f render.Facts) (*dg.Graph, error) {
			n.Add(1)
			return render.RenderFilesWith(files, f)
		}}
	return o, &n, []string{file}
}

// An apply renders the intent once: with the host's facts (here
// --resolv-conf) as without (issue 23: it rendered up to 4 times).
func TestApplyRendersOnce(t *testing.T) {
	for _, resolvConf := range []bool{false, true} {
		o, renders, files := countingOptions(t, true)
		if resolvConf {
			o.ResolvConf = filepath.Join(t.TempDir(), "resolv.conf")
		}
		res, err := Apply(context.Background(), o, files, ApplySpec{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome() != Converged {
			t.Fatalf("resolv-conf %v: not converged: %v", resolvConf, res.Problems)
		}
		if n := renders.Load(); n != 1 {
			t.Errorf("resolv-conf %v: apply rendered the intent %d times, want 1", resolvConf, n)
		}
	}
}

// plan and check render the intent once too.
func TestPlanCheckRenderOnce(t *testing.T) {
	o, renders, files := countingOptions(t, false)
	o.ResolvConf = filepath.Join(t.TempDir(), "resolv.conf")
	p, err := Plan(context.Background(), o, files)
	if err != nil || p.Outcome() != Converged || len(p.Ops) == 0 {
		t.Fatalf("plan: %v, %+v", err, p)
	}
	if n := renders.Swap(0); n != 1 {
		t.Errorf("plan rendered the intent %d times, want 1", n)
	}
	c, err := Check(context.Background(), o, files, true)
	if err != nil || c.Outcome() != NotConverged { // nothing applied: br0 is missing
		t.Fatalf("check: %v, %+v", err, c)
	}
	if n := renders.Load(); n != 1 {
		t.Errorf("check rendered the intent %d times, want 1", n)
	}
}

// A daemon serving the namespace stops the command before it loads
// anything: a DaemonError names it.
func TestStartGate(t *testing.T) {
	o, _, files := countingOptions(t, true)
	if _, err := Start(context.Background(), o, nil); err != ErrNoIntent {
		t.Errorf("no files: %v, want ErrNoIntent", err)
	}
	tgt, err := Start(context.Background(), o, files)
	if err != nil {
		t.Fatal(err)
	}
	if tgt.Lock == nil {
		t.Error("a writer holds no lock")
	}
	tgt.Close() // releases the lock
	lk, _, err := host.TryLock(o.StateDir, host.Holder{PID: os.Getpid(), Command: "run", Socket: "/run/x.sock", Since: time.Now()})
	if err != nil || lk == nil {
		t.Fatalf("the daemon's lock: %v", err)
	}
	defer lk.Release()
	for _, write := range []bool{true, false} {
		o.Write = write
		var de *DaemonError
		if _, err := Start(context.Background(), o, files); !errors.As(err, &de) || de.Holder.Socket != "/run/x.sock" {
			t.Errorf("write %v, a daemon serving the namespace: %v", write, err)
		}
	}
}
