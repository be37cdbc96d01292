package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
)

// TestServeAnswersOverTheSocket runs the agent (over fakes, in real time)
// and calls it through the socket, as `netagent status` does.
func TestServeAnswersOverTheSocket(t *testing.T) {
	path := serve(t, newRig(t, baseDocs()).start())
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	resp, err := api.Call(cctx, path, api.Request{Command: api.CmdStatus})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status == nil || !resp.Status.Ready {
		t.Fatalf("status over the socket: %+v", resp)
	}
	resp, err = api.Call(cctx, path, api.Request{Command: api.CmdApply, Intent: json.RawMessage(brokenDoc)})
	if err != nil || resp.Error != "intent rejected" || len(resp.Problems) == 0 {
		t.Errorf("a broken apply over the socket: %+v, %v", resp, err)
	}
	// A request that is not JSON gets an error answer.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello\n"))
	var bad api.Response
	if err := json.NewDecoder(c).Decode(&bad); err != nil || bad.Error == "" {
		t.Errorf("answer to garbage: %+v, %v", bad, err)
	}
	c.Close()
}

// serve serves r's agent on a socket in a temporary directory; t.Cleanup
// stops it and checks the socket is gone.
func serve(t *testing.T, r *rig) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.sock")
	ln, err := api.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- api.Serve(ctx, ln, r.a, r.a.log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind after Serve returned: %v", err)
		}
	})
	return path
}

func TestCallAfterStopFails(t *testing.T) {
	r := newRig(t, baseDocs()).start()
	r.stop()
	if _, err := r.a.Call(context.Background(), api.Request{Command: api.CmdStatus}); !errors.Is(err, api.ErrNotRunning) {
		t.Errorf("Call after Run returned: %v, want ErrNotRunning", err)
	}
	if r.notify.count("stopping") != 1 {
		t.Error("STOPPING not sent")
	}
}

// TestServePlansABigIntent: a plan of 100k routes fits in a request
// (about 9 MB: MaxRequestSize's doc), and the agent answers it over the
// socket; the over-size request before it changed nothing.
func TestServePlansABigIntent(t *testing.T) {
	r := newRig(t, baseDocs()).start()
	path := serve(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pad := strings.Repeat("x", api.MaxRequestSize+1<<20)
	if resp, err := api.Call(ctx, path, api.Request{Command: api.CmdApply, Intent: json.RawMessage(`{"version": 1, "pad": "` + pad + `"}`)}); err != nil || !strings.Contains(resp.Error, api.ErrRequestTooLarge.Error()) {
		t.Errorf("an over-size request: %v %+v", err, resp)
	}
	if got := r.status(); !got.Ready || got.Reconciles != 1 {
		t.Errorf("an over-size request changed the agent: %+v", got)
	}
	big := bigIntent(100_000)
	if len(big) > api.MaxRequestSize/3 {
		t.Errorf("an intent of 100k routes is %d bytes: less than a third of MaxRequestSize's margin", len(big))
	}
	resp, err := api.Call(ctx, path, api.Request{Command: api.CmdPlan, Intent: big})
	if err != nil || resp.Error != "" {
		t.Errorf("plan of 100k routes over the socket: %v %q", err, resp.Error)
	}
}

// bigIntent is an intent with n routes over uplink0 (which the rig's
// files define), each with via, dev, metric and table.
func bigIntent(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"version":1,"routes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"to":"10.%d.%d.0/24","via":"192.0.2.1","dev":"uplink0","metric":%d,"table":%d}`,
			i>>8&0xff, i&0xff, 100+i>>16, 100+i%3)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}
