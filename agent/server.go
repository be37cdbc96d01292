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

// MaxRequestSize bounds a request: 32 MiB. An apply of an intent with
// 100k routes, each with via, dev, metric and table, is 9.3 MB of compact
// JSON (the client sends it compact), so the limit leaves a margin of three
// while keeping a request's memory (the decoder holds it about three times
// over) near 100 MB. A larger request is answered with an error naming the
// limit.
const MaxRequestSize = 32 << 20

// MaxConnections bounds the connections served at once; one more is
// answered at once with an error ("too many connections"), without reading
// its request. With MaxRequestSize it bounds what requests can make the
// daemon hold.
const MaxConnections = 8

// requestTimeout bounds reading a request and writing its answer; the
// loop's work in between is bounded by the caller's patience only.
const requestTimeout = 30 * time.Second

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
// MaxConnections at once.
func (a *Agent) Serve(ctx context.Context, ln *net.UnixListener) error {
	srv := &server{a: a, conns: map[*net.UnixConn]struct{}{}, slots: make(chan struct{}, MaxConnections)}
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
}

// start serves conn in a goroutine of its own, or refuses it when
// MaxConnections are being served.
func (s *server) start(ctx context.Context, conn *net.UnixConn) {
	select {
	case s.slots <- struct{}{}:
	default:
		s.a.log.WithField("api", "request").Warn("api: refusing a connection: too many connections")
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		writeResponse(conn, Response{Error: fmt.Sprintf("too many connections (at most %d at once): %v", MaxConnections, ErrBusy)})
		conn.Close()
		return
	}
	s.mu.Lock()
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.slots }()
		defer func() {
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
			conn.Close()
		}()
		s.a.serveConn(ctx, conn)
	}()
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

// serveConn answers the one request of a connection.
func (a *Agent) serveConn(ctx context.Context, conn *net.UnixConn) {
	log := a.log.WithField("api", "request")
	if err := checkPeer(conn); err != nil {
		log.WithError(err).Warn("api: refusing a connection")
		writeResponse(conn, Response{Error: err.Error()})
		return
	}
	req, err := readRequest(conn)
	if err != nil {
		log.WithError(err).Warn("api: bad request")
		writeResponse(conn, Response{Error: err.Error()})
		if errors.Is(err, ErrRequestTooLarge) {
			drainRequest(conn)
		}
		return
	}
	log = log.WithField("command", req.Command)
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

// readRequest reads one request of at most MaxRequestSize bytes.
func readRequest(conn *net.UnixConn) (Request, error) {
	conn.SetReadDeadline(time.Now().Add(requestTimeout))
	lr := &io.LimitedReader{R: conn, N: MaxRequestSize + 1}
	var req Request
	err := json.NewDecoder(lr).Decode(&req)
	switch {
	case err != nil && lr.N <= 0:
		return req, fmt.Errorf("reading the request: more than %d MiB: %w", MaxRequestSize>>20, ErrRequestTooLarge)
	case err != nil:
		return req, fmt.Errorf("reading the request: %w", err)
	}
	return req, nil
}

// drainRequest reads what the client still sends, for at most drainTimeout, and
// drops it: closing a unix socket with unread data makes the client's
// write fail before it reads the answer.
func drainRequest(conn *net.UnixConn) {
	conn.CloseWrite()
	conn.SetReadDeadline(time.Now().Add(drainTimeout))
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
