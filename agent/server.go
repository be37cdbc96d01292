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
	"syscall"
	"time"
)

// MaxRequestSize bounds a request (an intent of 100k routes is about
// 10 MiB of JSON).
const MaxRequestSize = 256 << 20

// requestTimeout bounds reading a request and writing its answer; the
// loop's work in between is bounded by the caller's patience only.
const requestTimeout = 30 * time.Second

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

// removeStale removes a socket at path that nobody answers on.
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
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s: another agent answers on it: %w", path, ErrSocketInUse)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing stale socket %s: %w", path, err)
	}
	return nil
}

// Serve answers API requests on ln until ctx ends, then closes ln (which
// removes the socket). Only peers running as root, or as the agent's own
// user, are answered.
func (a *Agent) Serve(ctx context.Context, ln *net.UnixListener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
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
		go a.serveConn(ctx, conn)
	}
}

// serveConn answers the one request of a connection.
func (a *Agent) serveConn(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	log := a.log.WithField("api", "request")
	if err := checkPeer(conn); err != nil {
		log.WithError(err).Warn("api: refusing a connection")
		writeResponse(conn, Response{Error: err.Error()})
		return
	}
	conn.SetReadDeadline(time.Now().Add(requestTimeout))
	var req Request
	if err := json.NewDecoder(io.LimitReader(conn, MaxRequestSize)).Decode(&req); err != nil {
		writeResponse(conn, Response{Error: fmt.Sprintf("reading the request: %v", err)})
		return
	}
	log = log.WithField("command", req.Command)
	log.Debug("api: request")
	resp, err := a.Call(ctx, req)
	if err != nil {
		resp = Response{Error: err.Error()}
	}
	if err := writeResponse(conn, resp); err != nil {
		log.WithError(err).Warn("api: writing the response")
	}
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
