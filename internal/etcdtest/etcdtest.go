// Package etcdtest starts a real etcd server for a test (Debian's
// etcd-server, which scripts/setup.sh installs): on free loopback ports,
// with its data in t.TempDir(), killed in t.Cleanup. A test can kill and
// restart it (same ports, same data) to see what its clients do while it
// is down.
//
// When the etcd binary is missing the test is skipped, except under CI
// (CI=true), where it fails: CI must run the etcd tests.
package etcdtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/testtool"
)

// Binary is the etcd server's name, looked up in $PATH, then in /usr/bin
// (Debian's etcd-server).
const Binary = "etcd"

// startWait bounds the wait for the server to say it serves clients, so
// that a server that hangs fails the test with its log.
const startWait = 2 * time.Minute

// Options change how the server runs.
type Options struct {
	// TLS serves clients over TLS and requires a client certificate
	// signed by the test's CA (Server.TLS names the files).
	TLS bool
}

// TLSFiles are the PEM files of a TLS server's CA and of a client
// certificate it accepts.
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

// Server is a running (or killed) etcd of one test.
type Server struct {
	t       testing.TB
	bin     string
	dataDir string
	args    []string
	// ClientURL is where clients connect: http(s)://127.0.0.1:PORT.
	ClientURL string
	// TLS is set when the server serves TLS.
	TLS *TLSFiles

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *tail
}

// Start starts an etcd server for t, stopped when t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := tool.Find(t)
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dataDir: filepath.Join(dir, "data"), log: &tail{}}
	scheme := "http"
	if opts.TLS {
		s.TLS = writeCerts(t, dir)
		scheme = "https"
	}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("etcd's log (its end):\n%s", s.log.String())
		}
	})
	var err error
	for range 5 { // another process may take a port between its choice and etcd's bind
		client, peer := freePort(t), freePort(t)
		s.ClientURL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, client)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
		s.args = []string{
			"--name", "test",
			"--data-dir", s.dataDir,
			"--listen-client-urls", s.ClientURL,
			"--advertise-client-urls", s.ClientURL,
			"--listen-peer-urls", peerURL,
			"--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "test=" + peerURL,
			"--initial-cluster-state", "new",
			"--logger", "zap", "--log-outputs", "stderr",
		}
		if opts.TLS {
			s.args = append(s.args, "--client-cert-auth",
				"--trusted-ca-file", s.TLS.CAFile,
				"--cert-file", filepath.Join(dir, "server.pem"),
				"--key-file", filepath.Join(dir, "server-key.pem"))
		}
		if err = s.start(); err == nil {
			return s
		}
		os.RemoveAll(s.dataDir)
	}
	t.Fatalf("starting etcd: %v", err)
	return nil
}

// tool is the server binary, found by testtool.
var tool = testtool.Tool{Name: Binary, Fallback: "/usr/bin/" + Binary, Package: "etcd-server"}

// Endpoints returns the client URLs, for clientv3.
func (s *Server) Endpoints() []string { return []string{s.ClientURL} }

// start runs etcd and waits until it serves clients or exits.
func (s *Server) start() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	ready := make(chan struct{})
	go func() {
		cmd.Wait()
		w.Close()
		close(done)
	}()
	go s.scan(r, ready)
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-done:
		return fmt.Errorf("etcd exited: %v\n%s", cmd.ProcessState, s.log.String())
	case <-time.After(startWait):
		s.Kill()
		return fmt.Errorf("etcd did not serve clients within %v\n%s", startWait, s.log.String())
	}
}

// readyLines are what etcd logs once it serves clients: 3.4 (Debian
// bookworm) says "serving client traffic securely" or "... insecurely";
// later versions "ready to serve client requests".
var readyLines = []string{"serving client traffic", "ready to serve client requests"}

func (s *Server) scan(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	once := sync.Once{}
	for sc.Scan() {
		line := sc.Text()
		s.log.add(line)
		for _, r := range readyLines {
			if strings.Contains(line, r) {
				once.Do(func() { close(ready) })
			}
		}
	}
	io.Copy(io.Discard, r)
}

// Kill kills the server (SIGKILL: no goodbye to its clients) and waits
// for it to exit. Killing a killed server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// Restart starts a killed server again, on the same ports with the same
// data.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 3 { // a port may linger for a moment after the kill
		if err = s.start(); err == nil {
			return
		}
	}
	s.t.Fatalf("restarting etcd: %v", err)
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tail keeps the last lines of etcd's log.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 200

func (l *tail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > tailLines {
		l.lines = l.lines[len(l.lines)-tailLines:]
	}
}

func (l *tail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	for _, line := range l.lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
