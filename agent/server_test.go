package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestListenMakesAPrivateSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
}

func TestListenRemovesAStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sock")
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	old.Close() // an agent that died: the file stays, nobody answers
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the stale socket is not there: %v", err)
	}
	ln, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	ln.Close()
}

func TestListenRefusesALiveSocketAndOtherFiles(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.sock")
	ln, err := Listen(live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(live); !errors.Is(err, ErrSocketInUse) {
		t.Errorf("Listen on a live socket: %v, want ErrSocketInUse", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep me"), 0o600)
	if _, err := Listen(file); !errors.Is(err, ErrSocketInUse) {
		t.Errorf("Listen on a regular file: %v, want ErrSocketInUse", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep me" {
		t.Error("Listen touched a regular file")
	}
}

// TestServeAnswersOverTheSocket runs the agent (over fakes, in real time)
// and calls it through the socket, as `netagent status` does.
func TestServeAnswersOverTheSocket(t *testing.T) {
	r := newRig(t, baseDocs()).start()
	path := filepath.Join(t.TempDir(), "a.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.a.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind after Serve: %v", err)
		}
	}()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	resp, err := Call(cctx, path, Request{Command: CmdStatus})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status == nil || !resp.Status.Ready {
		t.Fatalf("status over the socket: %+v", resp)
	}
	resp, err = Call(cctx, path, Request{Command: CmdApply, Intent: json.RawMessage(brokenDoc)})
	if err != nil || resp.Error != "intent rejected" || len(resp.Problems) == 0 {
		t.Errorf("a broken apply over the socket: %+v, %v", resp, err)
	}
	// A request that is not JSON gets an error answer.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello\n"))
	var bad Response
	if err := json.NewDecoder(c).Decode(&bad); err != nil || bad.Error == "" {
		t.Errorf("answer to garbage: %+v, %v", bad, err)
	}
	c.Close()
}

func TestCallAfterStopFails(t *testing.T) {
	r := newRig(t, baseDocs()).start()
	r.stop()
	if _, err := r.a.Call(context.Background(), Request{Command: CmdStatus}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Call after Run returned: %v, want ErrNotRunning", err)
	}
	if r.notify.count("stopping") != 1 {
		t.Error("STOPPING not sent")
	}
}

// serveRig runs the agent over fakes and serves it on a socket in a
// temporary directory; t.Cleanup stops both and checks the socket is gone.
func serveRig(t *testing.T) (*rig, string) {
	t.Helper()
	r := newRig(t, baseDocs()).start()
	path := filepath.Join(t.TempDir(), "a.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind after Serve returned: %v", err)
		}
	})
	return r, path
}

// TestServeRefusesAnOversizeRequest sends an apply larger than
// MaxRequestSize: it gets an error answer naming the limit (not a closed
// connection), and the agent goes on answering.
func TestServeRefusesAnOversizeRequest(t *testing.T) {
	r, path := serveRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pad := strings.Repeat("x", MaxRequestSize+1<<20)
	resp, err := Call(ctx, path, Request{Command: CmdApply, Intent: json.RawMessage(`{"version": 1, "pad": "` + pad + `"}`)})
	if err != nil {
		t.Fatalf("an over-size request got no answer: %v", err)
	}
	if !strings.Contains(resp.Error, "more than 32 MiB") || !strings.Contains(resp.Error, ErrRequestTooLarge.Error()) {
		t.Errorf("answer to an over-size request: %q, want the limit named", resp.Error)
	}
	if got := r.status(); !got.Ready || got.Reconciles != 1 {
		t.Errorf("an over-size request changed the agent: %+v", got)
	}
	// A request of 100k routes fits (about 9 MB: MaxRequestSize's doc).
	big := bigIntent(100_000)
	if len(big) > MaxRequestSize/3 {
		t.Errorf("an intent of 100k routes is %d bytes: less than a third of MaxRequestSize's margin", len(big))
	}
	resp, err = Call(ctx, path, Request{Command: CmdPlan, Intent: big})
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

// TestServeBoundsConnections holds MaxConnections connections that send
// nothing: one more is answered at once with an error, and once one of
// them goes, requests are answered again.
func TestServeBoundsConnections(t *testing.T) {
	_, path := serveRig(t)
	var idle []net.Conn
	for range MaxConnections {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// The server takes the connections in order: once a status call on a
	// new connection is refused, all of them are held.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := Call(ctx, path, Request{Command: CmdStatus})
	if err != nil {
		t.Fatalf("a connection over the limit got no answer: %v", err)
	}
	if !strings.Contains(resp.Error, "too many connections") || resp.Status != nil {
		t.Errorf("a connection over the limit: %+v", resp)
	}
	idle[0].Close()
	for {
		resp, err := Call(ctx, path, Request{Command: CmdStatus})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != nil {
			break // the freed slot is taken
		}
		if !strings.Contains(resp.Error, "too many connections") {
			t.Fatalf("unexpected answer: %+v", resp)
		}
		runtime.Gosched() // the server has not seen the close yet
	}
}

// TestListenLeavesABusySocketAlone: a live agent whose backlog is full
// (connecting fails with EAGAIN, not ECONNREFUSED) is not a stale socket:
// Listen refuses and leaves the socket in place.
func TestListenLeavesABusySocketAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // room for one pending connection
		t.Fatal(err)
	}
	for range 2 { // fill the backlog; the agent is busy and accepts nothing
		c, err := net.Dial("unix", path)
		if err != nil {
			break
		}
		defer c.Close()
	}
	if _, err := net.DialTimeout("unix", path, time.Second); err == nil || errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("the backlog is not full: %v", err)
	}
	if _, err := Listen(path); !errors.Is(err, ErrSocketInUse) {
		t.Errorf("Listen on a busy socket: %v, want ErrSocketInUse", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("Listen removed a live agent's socket: %v", err)
	}
}
