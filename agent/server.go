package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// readOnly are the requests a connection beyond MaxConnections may make:
// they answer from a snapshot and end at once (a watch streams for as
// long as the client likes: it takes a slot of MaxConnections).
var readOnly = map[string]bool{CmdStatus: true, CmdShow: true, CmdMetrics: true}

// requestTimeout bounds reading a request and writing its answer; the
// loop's work in between is bounded by the caller's patience only.
const requestTimeout = 30 * time.Second

// refuseTimeout bounds how long a refused connection's request is read
// (and dropped) after its error answer; maxRefusing bounds the refused
// connections so handled at once (beyond, accepting waits for one to end,
// refuseTimeout at most: see refuse).
const (
	refuseTimeout = time.Second
	maxRefusing   = 4 * MaxConnections
)

// drainTimeout bounds how long the rest of an over-size request is read
// (and discarded) after its error answer, so that the client, still
// writing, sees the answer rather than a broken pipe.
const drainTimeout = 5 * time.Second

// Listen creates the API's unix socket at path, mode 0600. A socket left
// behind by an agent that died is removed; a socket some running agent
// answers on, or a path that is not a socket, is an error. It sets the
// process's umask for the moment of the bind (so that the socket is never
// open to others): call it before starting goroutines that create files.
func Listen(path string) (*net.UnixListener, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	old := syscall.Umask(0o177) // no window in which the socket is open to others
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	return ln, nil
}

// removeStale removes a socket at path that nobody listens on: connecting
// to it is refused (ECONNREFUSED), as after an agent was killed (kill -9)
// before it could remove it. A socket some agent answers on, or one whose
// state cannot be told (a timeout, a full backlog), is left alone and is an
// error.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket: %w", path, ErrSocketInUse)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%s: another agent answers on it: %w", path, ErrSocketInUse)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: cannot tell whether another agent listens on it (%v): %w", path, err, ErrSocketInUse)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing stale socket %s: %w", path, err)
	}
	return nil
}

// Serve answers API requests on ln until ctx ends. It closes ln, which
// removes the socket, and waits for the connections it is serving to end
// (closing them: their requests get no answer) before it returns, so that
// a caller that waits for Serve after Run knows the socket is gone. Only
// peers running as root, or as the agent's own user, are answered; at most
// MaxConnections at once (and ReadOnlyConnections more for status).
func (a *Agent) Serve(ctx context.Context, ln *net.UnixListener) error {
	srv := &server{a: a, conns: map[*net.UnixConn]struct{}{}, slots: make(chan struct{}, MaxConnections),
		spare: make(chan struct{}, ReadOnlyConnections), refusing: make(chan struct{}, maxRefusing), idle: a.apiIdle}
	defer srv.shutdown(ln)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("accepting API connections: %w", err)
		}
		srv.start(ctx, conn)
	}
}

// server tracks the connections of one Serve.
type server struct {
	a     *Agent
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[*net.UnixConn]struct{}
	slots chan struct{} // one per connection being served
	spare chan struct{} // one per connection served beyond slots (readOnly requests)
	// refusing: one per refused connection whose request is being read
	refusing chan struct{}
	idle     time.Duration // IdleTimeout
}

// busyError is the answer to a connection beyond the bound.
func busyError() string {
	return fmt.Sprintf("too many connections (at most %d at once, and %d more for status): %v", MaxConnections, ReadOnlyConnections, ErrBusy)
}

// start serves conn in a goroutine of its own: in a slot of
// MaxConnections, else in a spare one (a readOnly request only), else it
// is refused.
func (s *server) start(ctx context.Context, conn *net.UnixConn) {
	var slot chan struct{}
	allow := func(string) bool { return true }
	select {
	case s.slots <- struct{}{}:
		slot = s.slots
	default:
		select {
		case s.spare <- struct{}{}:
			slot, allow = s.spare, func(cmd string) bool { return readOnly[cmd] }
		default:
			s.refuse(ctx, conn)
			return
		}
	}
	s.track(conn, slot, func() { s.a.serveConn(ctx, conn, s.idle, allow) })
}

// track runs serve in a goroutine that Serve waits for, holding slot
// until it returns, then closes conn.
func (s *server) track(conn *net.UnixConn, slot chan struct{}, serve func()) {
	s.mu.Lock()
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-slot }()
		defer func() {
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
			conn.Close()
		}()
		serve()
	}()
}

// refuse answers conn with busyError, then reads what the client sends
// (its request) until it closes, for refuseTimeout at most, so that
// closing leaves no unread data (which would reset the client's end).
// Beyond maxRefusing at once, accepting waits (refuseTimeout at most) for
// one of them to end, the clients after it waiting in the listen backlog;
// if none ends, conn gets the answer, its writing side is ended and what
// it sent so far is read without waiting before the close: a client that
// sent its request at once, as every client does, sees the answer and a
// clean end.
func (s *server) refuse(ctx context.Context, conn *net.UnixConn) {
	s.a.log.WithField("api", "request").Warn("api: refusing a connection: too many connections")
	if !s.takeRefusing(ctx) {
		if writeResponse(conn, Response{Error: busyError()}) == nil {
			conn.CloseWrite()
			dropQueued(conn)
		}
		conn.Close()
		return
	}
	s.track(conn, s.refusing, func() {
		conn.SetWriteDeadline(time.Now().Add(refuseTimeout))
		if writeResponse(conn, Response{Error: busyError()}) == nil {
			drainFor(conn, refuseTimeout)
		}
	})
}

// takeRefusing takes a slot of the refused connections being read,
// waiting refuseTimeout at most.
func (s *server) takeRefusing(ctx context.Context) bool {
	select {
	case s.refusing <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(refuseTimeout)
	defer t.Stop()
	select {
	case s.refusing <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// dropQueued reads and drops what conn's socket holds now, without
// waiting: at most what its receive buffer can hold, so that a close
// then resets no one.
func dropQueued(conn *net.UnixConn) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	raw.Control(func(fd uintptr) {
		for range 64 { // 4 MiB: more than a socket's receive buffer
			if n, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT); n <= 0 || err != nil {
				return
			}
		}
	})
}

// shutdown closes ln (removing the socket) and every connection, and waits
// for their goroutines.
func (s *server) shutdown(ln *net.UnixListener) {
	ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveConn answers the one request of a connection: one that begins
// within idle, and that allow lets in (a spare slot's: readOnly).
func (a *Agent) serveConn(ctx context.Context, conn *net.UnixConn, idle time.Duration, allow func(command string) bool) {
	log := a.log.WithField("api", "request")
	if err := checkPeer(conn); err != nil {
		log.WithError(err).Warn("api: refusing a connection")
		writeResponse(conn, Response{Error: err.Error()})
		return
	}
	req, err := readRequest(conn, idle)
	if err != nil {
		log.WithError(err).Warn("api: bad request")
		writeResponse(conn, Response{Error: err.Error()})
		if errors.Is(err, ErrRequestTooLarge) {
			drainRequest(conn)
		}
		return
	}
	log = log.WithField("command", req.Command)
	if !allow(req.Command) {
		log.Warn("api: refusing a request: too many connections")
		if writeResponse(conn, Response{Error: busyError()}) == nil {
			drainFor(conn, refuseTimeout)
		}
		return
	}
	log.Debug("api: request")
	if req.Command == CmdWatch {
		a.serveWatch(ctx, conn, log)
		return
	}
	resp, err := a.Call(ctx, req)
	if err != nil {
		resp = Response{Error: err.Error()}
	}
	if err := writeResponse(conn, resp); err != nil {
		log.WithError(err).Warn("api: writing the response")
	}
}

// readRequest reads one request of at most MaxRequestSize bytes, which
// must begin within idle and end within requestTimeout.
func readRequest(conn *net.UnixConn, idle time.Duration) (Request, error) {
	begun := &begunReader{conn: conn, full: time.Now().Add(requestTimeout)}
	conn.SetReadDeadline(time.Now().Add(min(idle, requestTimeout)))
	lr := &io.LimitedReader{R: begun, N: MaxRequestSize + 1}
	var req Request
	err := json.NewDecoder(lr).Decode(&req)
	var ne net.Error
	switch {
	case err != nil && lr.N <= 0:
		return req, fmt.Errorf("reading the request: more than %d MiB: %w", MaxRequestSize>>20, ErrRequestTooLarge)
	case err != nil && !begun.begun && errors.As(err, &ne) && ne.Timeout():
		return req, fmt.Errorf("no request within %v of connecting: %w", idle, ErrIdle)
	case err != nil:
		return req, fmt.Errorf("reading the request: %w", err)
	}
	return req, nil
}

// begunReader moves a connection's read deadline from the idle bound to
// the request's (full) once the request's first bytes arrive.
type begunReader struct {
	conn  *net.UnixConn
	full  time.Time
	begun bool
}

func (r *begunReader) Read(p []byte) (int, error) {
	n, err := r.conn.Read(p)
	if n > 0 && !r.begun {
		r.begun = true
		r.conn.SetReadDeadline(r.full)
	}
	return n, err
}

// drainRequest reads what the client still sends, for at most drainTimeout, and
// drops it: closing a unix socket with unread data makes the client's
// write fail before it reads the answer.
func drainRequest(conn *net.UnixConn) { drainFor(conn, drainTimeout) }

// drainFor ends conn's writing side (the answer is out) and reads and
// drops what the client sends until it closes, for at most d.
func drainFor(conn *net.UnixConn, d time.Duration) {
	conn.CloseWrite()
	conn.SetReadDeadline(time.Now().Add(d))
	io.Copy(io.Discard, conn)
}

func writeResponse(conn net.Conn, resp Response) error {
	conn.SetWriteDeadline(time.Now().Add(requestTimeout))
	return json.NewEncoder(conn).Encode(resp)
}

// checkPeer lets root and the agent's own user in (SO_PEERCRED): the
// socket's mode says the same, this holds even if someone loosens it.
func checkPeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("reading peer credentials: %w", cerr)
	}
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("uid %d: %w", cred.Uid, ErrPermission)
	}
	return nil
}
