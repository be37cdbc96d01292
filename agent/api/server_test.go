package api

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
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/sirupsen/logrus"
)

// fakeHandler answers every request at once with a ready status, and
// records it; a watch streams what the test publishes into hub.
type fakeHandler struct {
	hub     *Hub
	stopped chan struct{}
	mu      sync.Mutex
	reqs    []Request
}

func (f *fakeHandler) Call(ctx context.Context, req Request) (Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return Response{Status: &status.Status{Ready: true}}, nil
}

func (f *fakeHandler) Subscribe(ctx context.Context, fn func(Event) error) error {
	s := NewSubscriber(WatchBuffer)
	f.hub.Add(s)
	defer f.hub.Remove(s)
	if err := fn(StatusEvent(&status.Status{Ready: true}, time.Now())); err != nil {
		return err
	}
	return f.hub.Stream(ctx, s, f.stopped, fn)
}

// requests are the requests answered so far.
func (f *fakeHandler) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// serveFake serves a fakeHandler on a socket in a temporary directory,
// with idle as the idle bound (0: IdleTimeout); t.Cleanup stops it and
// checks the socket is gone.
func serveFake(t *testing.T, idle time.Duration) (*fakeHandler, string) {
	t.Helper()
	f := &fakeHandler{hub: NewHub(), stopped: make(chan struct{})}
	path := filepath.Join(t.TempDir(), "a.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	srv := &Server{Handler: f, Log: testLog(t), Idle: idle}
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind after Serve returned: %v", err)
		}
	})
	return f, path
}

// testLog logs to the test.
func testLog(t *testing.T) logrus.FieldLogger {
	l := logrus.New()
	l.Out = t.Output()
	return l
}

// TestServeAnswersGarbage: a request that is not JSON gets an error
// answer, and the handler never sees it.
func TestServeAnswersGarbage(t *testing.T) {
	f, path := serveFake(t, 0)
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hello\n"))
	var bad Response
	if err := json.NewDecoder(c).Decode(&bad); err != nil || bad.Error == "" {
		t.Errorf("answer to garbage: %+v, %v", bad, err)
	}
	if got := f.requests(); len(got) != 0 {
		t.Errorf("the handler got garbage: %+v", got)
	}
}

// TestServeRefusesAnOversizeRequest sends an apply larger than
// MaxRequestSize: it gets an error answer naming the limit (not a closed
// connection), the handler never sees it, and the server goes on
// answering: a request just under the limit reaches the handler whole.
func TestServeRefusesAnOversizeRequest(t *testing.T) {
	f, path := serveFake(t, 0)
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
	if got := f.requests(); len(got) != 0 {
		t.Errorf("an over-size request reached the handler: %d requests", len(got))
	}
	fits := json.RawMessage(`{"version":1,"pad":"` + strings.Repeat("x", MaxRequestSize-1<<10) + `"}`)
	resp, err = Call(ctx, path, Request{Command: CmdPlan, Intent: fits})
	if err != nil || resp.Error != "" {
		t.Fatalf("a plan just under the limit: %v %q", err, resp.Error)
	}
	if got := f.requests(); len(got) != 1 || got[0].Command != CmdPlan || len(got[0].Intent) != len(fits) {
		t.Errorf("the plan just under the limit reached the handler as %d requests", len(got))
	}
}

// TestServeBoundsConnections holds MaxConnections connections that send
// nothing: status is still answered at once (the spare slot), an apply is
// not; with the spare slot held too, one more client gets the error answer
// and then a clean end of stream, never a reset, even when it sends its
// request in pieces; once one of them goes, requests are answered again.
func TestServeBoundsConnections(t *testing.T) {
	_, path := serveFake(t, 0)
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
	f, path := serveFake(t, 100*time.Millisecond)
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
	f.hub.Publish([]Event{{Format: EventFormat, Time: time.Now(), Kind: EventItem, Item: "route/r", To: "created"}})
	if e, err := w.Next(); err != nil || e.Kind == EventStatus {
		t.Errorf("the watch after the idle bound: %+v %v", e, err)
	}
}

// apiRouteDoc is an apply's document.
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

// Beyond the refused connections read at once (maxRefusing, each held
// for refuseTimeout by a client that sends its request and neither reads
// nor closes), a client still gets the error answer and a clean end of
// stream: before, it was closed right after the answer with its request
// unread, and saw a connection reset (or a broken pipe).
func TestServeRefusesAFloodWithoutReset(t *testing.T) {
	_, path := serveFake(t, 0)
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

// A watch over the socket: the status first, then what is published, in
// order; a watch refused (no slot) is an error of Next.
func TestWatchOverTheSocket(t *testing.T) {
	f, path := serveFake(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := Watch(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if e, err := w.Next(); err != nil || e.Kind != EventStatus || e.Status == nil || !e.Status.Ready {
		t.Fatalf("first event: %+v %v", e, err)
	}
	f.hub.Publish([]Event{{Kind: EventLink, Link: "eth0", To: "up"}, {Kind: EventReady, From: "false", To: "true"}})
	for _, want := range []string{"link eth0: none -> up", "ready false -> true"} {
		if e, err := w.Next(); err != nil || e.String() != want {
			t.Errorf("event %q, %v; want %q", e.String(), err, want)
		}
	}
	holdConns(t, path, MaxConnections-1) // the watch holds one slot
	holdSpare(t, ctx, path)
	refused, err := Watch(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	if e, err := refused.Next(); err == nil || !strings.Contains(err.Error(), ErrBusy.Error()) {
		t.Errorf("a watch beyond the bound: %+v %v", e, err)
	}
}
