package api

import (
	"errors"
	"net"
	"os"
	"path/filepath"
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
