package systemd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Notifier sends sd_notify states to the service manager. Its zero value
// (and a nil *Notifier) does nothing.
type Notifier struct {
	addr *net.UnixAddr // nil: no service manager listens
}

// NewNotifier returns a Notifier for $NOTIFY_SOCKET.
func NewNotifier() *Notifier {
	return notifierFor(os.Getenv("NOTIFY_SOCKET"))
}

func notifierFor(socket string) *Notifier {
	if socket == "" {
		return &Notifier{}
	}
	if socket[0] == '@' {
		socket = "\x00" + socket[1:] // the abstract namespace
	}
	return &Notifier{addr: &net.UnixAddr{Name: socket, Net: "unixgram"}}
}

// Enabled reports whether a service manager listens.
func (n *Notifier) Enabled() bool { return n != nil && n.addr != nil }

// Notify sends one datagram with the given states ("READY=1", ...), one
// per line.
func (n *Notifier) Notify(states ...string) error {
	if !n.Enabled() {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sd_notify: connecting to %s: %w", n.addr.Name, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(strings.Join(states, "\n") + "\n")); err != nil {
		return fmt.Errorf("sd_notify: sending %q: %w", states, err)
	}
	return nil
}

// Ready says the service is up (after the first reconcile, and at the end
// of a reload).
func (n *Notifier) Ready() error { return n.Notify("READY=1") }

// Reloading says a reload began. MONOTONIC_USEC lets systemd match it to
// the reload request.
func (n *Notifier) Reloading() error {
	return n.Notify("RELOADING=1", "MONOTONIC_USEC="+strconv.FormatInt(monotonicUsec(), 10))
}

// Stopping says the service is shutting down.
func (n *Notifier) Stopping() error { return n.Notify("STOPPING=1") }

// Watchdog pings the watchdog.
func (n *Notifier) Watchdog() error { return n.Notify("WATCHDOG=1") }

// Status sets the one-line status `systemctl status` shows.
func (n *Notifier) Status(line string) error {
	return n.Notify("STATUS=" + strings.ReplaceAll(line, "\n", " "))
}

func monotonicUsec() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano() / 1000
}

// ErrBadWatchdogEnv: $WATCHDOG_USEC or $WATCHDOG_PID cannot be read.
var ErrBadWatchdogEnv = errors.New("bad watchdog environment")

// WatchdogInterval returns the watchdog timeout systemd expects pings
// within ($WATCHDOG_USEC), or 0 when the watchdog is off or meant for
// another process ($WATCHDOG_PID). Ping at half of it.
func WatchdogInterval() (time.Duration, error) {
	return watchdogFromEnv(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"), os.Getpid())
}

func watchdogFromEnv(usec, pid string, self int) (time.Duration, error) {
	if usec == "" {
		return 0, nil
	}
	if pid != "" {
		p, err := strconv.Atoi(pid)
		if err != nil {
			return 0, fmt.Errorf("WATCHDOG_PID=%q: %w", pid, ErrBadWatchdogEnv)
		}
		if p != self {
			return 0, nil
		}
	}
	us, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || us <= 0 {
		return 0, fmt.Errorf("WATCHDOG_USEC=%q: %w", usec, ErrBadWatchdogEnv)
	}
	return time.Duration(us) * time.Microsecond, nil
}
