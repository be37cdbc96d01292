package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
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
