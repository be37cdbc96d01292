package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	return r, serve(t, r)
}

// serve serves r's agent on a socket in a temporary directory.
func serve(t *testing.T, r *rig) string {
	t.Helper()
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
	return path
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
// nothing: status is still answered at once (the spare slot), an apply is
// not; with the spare slot held too, one more client gets the error answer
// and then a clean end of stream, never a reset, even when it sends its
// request in pieces; once one of them goes, requests are answered again.
func TestServeBoundsConnections(t *testing.T) {
	_, path := serveRig(t)
	idle := holdConns(t, path, MaxConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The server takes the connections in order: the status call comes
	// after the idle ones.
	start := time.Now()
	resp, err := Call(ctx, path, Request{Command: CmdStatus})
	if err != nil || resp.Status == nil {
		t.Fatalf("status with %d idle connections: %v %+v", MaxConnections, err, resp)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("status with %d idle connections took %v", MaxConnections, took)
	}
	if resp, err := Call(ctx, path, Request{Command: CmdApply, Intent: json.RawMessage(apiRouteDoc)}); err != nil || !strings.Contains(resp.Error, "too many connections") {
		t.Fatalf("an apply in the spare slot: %v %+v", err, resp)
	}
	spare := holdSpare(t, ctx, path)
	for _, pause := range []time.Duration{0, 50 * time.Millisecond} {
		got, err := rawExchange(path, pause, `{"command":`, `"status"}`+"\n")
		if err != nil || !strings.Contains(got, "too many connections") || !strings.Contains(got, ErrBusy.Error()) {
			t.Errorf("a client over the bound (request in pieces %v apart): %q, %v; want the error answer and a clean end", pause, got, err)
		}
	}
	idle[0].Close()
	spare.Close()
	for {
		resp, err := Call(ctx, path, Request{Command: CmdApply, Intent: json.RawMessage(apiRouteDoc)})
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

// An idle connection (no request within the idle bound) gets the error
// answer and is closed: idle connections do not hold the slots.
func TestServeClosesIdleConnections(t *testing.T) {
	r := newRig(t, baseDocs())
	r.a.apiIdle = 100 * time.Millisecond
	path := serve(t, r.start())
	idle := holdConns(t, path, MaxConnections+ReadOnlyConnections)
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || !strings.Contains(string(got), "no request within 100ms") || !strings.Contains(string(got), ErrIdle.Error()) {
			t.Fatalf("an idle connection: %q, %v", got, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := Call(ctx, path, Request{Command: CmdApply, Intent: json.RawMessage(apiRouteDoc)}); err != nil || resp.Error != "" {
		t.Errorf("an apply once the idle connections were closed: %v %+v", err, resp)
	}
	// A watch is not idle: its client sends nothing more, and it streams.
	w, err := Watch(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if e, err := w.Next(); err != nil || e.Kind != EventStatus {
		t.Fatalf("watch: %+v %v", e, err)
	}
	time.Sleep(300 * time.Millisecond)
	r.src.set("30-more.json", `{"version": 1, "routes": [{"to": "10.30.0.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	if e, err := w.Next(); err != nil || e.Kind == EventStatus {
		t.Errorf("the watch after the idle bound: %+v %v", e, err)
	}
}

// apiRouteDoc is an apply's document beside baseDocs.
const apiRouteDoc = `{"version": 1, "routes": [{"to": "10.20.0.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`

// holdSpare opens a connection that sends nothing and holds the spare
// slot (MaxConnections are held): a status call is refused while the
// connection got no answer (it was not refused itself).
func holdSpare(t *testing.T, ctx context.Context, path string) net.Conn {
	t.Helper()
	for {
		if resp, err := Call(ctx, path, Request{Command: CmdStatus}); err != nil {
			t.Fatal(err)
		} else if resp.Status == nil {
			runtime.Gosched() // a connection refused before still drains
			continue
		}
		c := holdConns(t, path, 1)[0]
		resp, err := Call(ctx, path, Request{Command: CmdStatus})
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, rerr := c.Read(make([]byte, 1)); resp.Status == nil && errors.Is(rerr, os.ErrDeadlineExceeded) {
			c.SetReadDeadline(time.Time{})
			return c
		}
		c.Close()
	}
}

// holdConns opens n connections to path that send nothing; the test's end
// closes them.
func holdConns(t *testing.T, path string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for range n {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out = append(out, c)
	}
	return out
}

// rawExchange sends parts to the socket at path, pause apart, and reads
// the answer to the end of the stream, as a shell client (socat, nc)
// would.
func rawExchange(path string, pause time.Duration, parts ...string) (string, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for _, p := range parts {
		if _, err := io.WriteString(c, p); err != nil {
			return "", fmt.Errorf("writing: %w", err)
		}
		time.Sleep(pause)
	}
	got, err := io.ReadAll(c)
	return string(got), err
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

// Beyond the refused connections read at once (maxRefusing, each held
// for refuseTimeout by a client that sends its request and neither reads
// nor closes), a client still gets the error answer and a clean end of
// stream: before, it was closed right after the answer with its request
// unread, and saw a connection reset (or a broken pipe).
func TestServeRefusesAFloodWithoutReset(t *testing.T) {
	_, path := serveRig(t)
	holdConns(t, path, MaxConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holdSpare(t, ctx, path)
	for _, c := range holdConns(t, path, maxRefusing) {
		if _, err := io.WriteString(c, `{"command":"status"}`+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		got, err := rawExchange(path, 0, `{"command":"status"}`+"\n")
		if err != nil || !strings.Contains(got, "too many connections") {
			t.Errorf("client %d beyond %d refused at once: %q, %v; want the error answer and a clean end", i, maxRefusing, got, err)
		}
	}
}

// dropQueued reads what a client sent before the close, without waiting:
// the client then reads the answer and a clean end, where a close with
// its request unread resets it.
func TestDropQueuedLeavesNoReset(t *testing.T) {
	for _, drop := range []bool{false, true} {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		srv, err := ln.AcceptUnix()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, `{"command":"status"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		writeResponse(srv, Response{Error: busyError()})
		if drop {
			srv.CloseWrite()
			dropQueued(srv)
		}
		srv.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if reset := errors.Is(err, syscall.ECONNRESET); reset == drop || !strings.Contains(string(got), ErrBusy.Error()) {
			t.Errorf("dropped %v: %q, %v", drop, got, err)
		}
		c.Close()
		ln.Close()
	}
}
