package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

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
