package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

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
