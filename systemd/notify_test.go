package systemd

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listen opens a unix datagram socket like systemd's notify socket and
// returns the NOTIFY_SOCKET value that names it.
func listen(t *testing.T, abstract bool) (*net.UnixConn, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "notify.sock")
	env := name
	if abstract {
		b := make([]byte, 6)
		rand.Read(b)
		env = "@netagent-test-" + hex.EncodeToString(b)
		name = "\x00" + env[1:]
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, env
}

func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("reading a datagram: %v", err)
	}
	return string(buf[:n])
}

func TestNotifierSendsEachState(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		t.Run("abstract="+strconv.FormatBool(abstract), func(t *testing.T) {
			conn, env := listen(t, abstract)
			t.Setenv("NOTIFY_SOCKET", env)
			n := NewNotifier()
			if !n.Enabled() {
				t.Fatal("not enabled with NOTIFY_SOCKET set")
			}
			steps := []struct {
				send func() error
				want string
			}{
				{n.Ready, "READY=1\n"},
				{n.Watchdog, "WATCHDOG=1\n"},
				{n.Stopping, "STOPPING=1\n"},
				{func() error { return n.Status("2 failed,\nconverging") }, "STATUS=2 failed, converging\n"},
			}
			for _, s := range steps {
				if err := s.send(); err != nil {
					t.Fatal(err)
				}
				if got := receive(t, conn); got != s.want {
					t.Errorf("datagram %q, want %q", got, s.want)
				}
			}
		})
	}
}

func TestReloadingCarriesMonotonicTime(t *testing.T) {
	conn, env := listen(t, false)
	t.Setenv("NOTIFY_SOCKET", env)
	if err := NewNotifier().Reloading(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(receive(t, conn), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "RELOADING=1" || !strings.HasPrefix(lines[1], "MONOTONIC_USEC=") {
		t.Fatalf("datagram lines %q", lines)
	}
	usec, err := strconv.ParseInt(strings.TrimPrefix(lines[1], "MONOTONIC_USEC="), 10, 64)
	if err != nil || usec <= 0 {
		t.Errorf("MONOTONIC_USEC %q: %v", lines[1], err)
	}
}

func TestNotifierWithoutSocketDoesNothing(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	n := NewNotifier()
	if n.Enabled() {
		t.Fatal("enabled without NOTIFY_SOCKET")
	}
	if err := n.Ready(); err != nil {
		t.Errorf("Ready: %v", err)
	}
	var nilN *Notifier
	if err := nilN.Watchdog(); err != nil {
		t.Errorf("nil Notifier: %v", err)
	}
}

func TestNotifierReportsAMissingSocket(t *testing.T) {
	n := notifierFor(filepath.Join(t.TempDir(), "nobody-listens"))
	if err := n.Ready(); err == nil {
		t.Fatal("no error for a socket nobody listens on")
	}
}

func TestWatchdogInterval(t *testing.T) {
	const self = 4242
	tests := []struct {
		usec, pid string
		want      time.Duration
		bad       bool
	}{
		{"", "", 0, false},
		{"30000000", "", 30 * time.Second, false},
		{"30000000", "4242", 30 * time.Second, false},
		{"30000000", "1", 0, false}, // meant for another process
		{"soon", "", 0, true},
		{"0", "", 0, true},
		{"30000000", "me", 0, true},
	}
	for _, tt := range tests {
		got, err := watchdogFromEnv(tt.usec, tt.pid, self)
		if got != tt.want || (err != nil) != tt.bad {
			t.Errorf("WATCHDOG_USEC=%q WATCHDOG_PID=%q: %v, %v; want %v, bad=%v", tt.usec, tt.pid, got, err, tt.want, tt.bad)
		}
		if err != nil && !errors.Is(err, ErrBadWatchdogEnv) {
			t.Errorf("error %v does not wrap ErrBadWatchdogEnv", err)
		}
	}
}

func TestWatchdogIntervalReadsTheEnvironment(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "2000000")
	t.Setenv("WATCHDOG_PID", "")
	got, err := WatchdogInterval()
	if err != nil || got != 2*time.Second {
		t.Fatalf("WatchdogInterval() = %v, %v; want 2s", got, err)
	}
}
