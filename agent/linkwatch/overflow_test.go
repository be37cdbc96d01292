package linkwatch

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/testns"
)

// gatedSocket holds its first receive until gate closes: the kernel
// queues meanwhile, as it does while a busy watcher lags.
type gatedSocket struct {
	linkSocket
	gate <-chan struct{}
}

func (g *gatedSocket) receive() ([]string, error) {
	<-g.gate
	return g.linkSocket.receive()
}

// TestNetlinkOverflowCarrierChangeSeen: a burst of link changes overflows
// a tiny receive buffer (ENOBUFS) and the last change, a carrier loss, is
// one of the notifications the kernel dropped. The watcher still tells
// the consumer to look again, and the consumer's listing shows the loss.
func TestNetlinkOverflowCarrierChangeSeen(t *testing.T) {
	tgt := testns.New(t)
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	w := NewNetlink(tgt.Name, log)
	w.rcvbuf = 1 // the kernel's minimum (a few KB)
	gate := make(chan struct{})
	w.open = func(ns netns.NsHandle, rcvbuf int) (linkSocket, error) {
		s, err := openLinkSocket(ns, rcvbuf)
		if err != nil {
			return nil, err
		}
		return &gatedSocket{linkSocket: s, gate: gate}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measure
	defer cancel()
	events := make(chan Event)
	go w.Watch(ctx, events)
	ev := <-events
	if !ev.Resync {
		t.Fatalf("first event %+v, want a resync", ev)
	}

	var b strings.Builder
	b.WriteString("link add cv0 type veth peer name cv1\nlink set cv0 up\nlink set cv1 up\n")
	for i := range 100 {
		fmt.Fprintf(&b, "link add burst%d type veth peer name burstp%d\n", i, i)
	}
	b.WriteString("link set cv1 down\n") // cv0 loses its carrier
	batch := filepath.Join(t.TempDir(), "burst.batch")
	if err := os.WriteFile(batch, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "-n", tgt.Name, "-batch", batch).CombinedOutput(); err != nil {
		t.Fatalf("ip -batch: %v\n%s", err, out)
	}
	close(gate)

	// The dropped notifications included cv0's: only a resync, after
	// which the consumer lists the links, can show the loss.
	for ev = (Event{}); !ev.Resync; {
		select {
		case ev = <-events:
		case <-ctx.Done():
			t.Fatal("no resync after the overflow")
		}
	}
	l, err := tgt.NL.LinkByName("cv0")
	if err != nil {
		t.Fatal(err)
	}
	if l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 || l.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("cv0 flags %#x, want admin up without carrier", l.Attrs().RawFlags)
	}
	overflowed := false
	for _, e := range hook.AllEntries() {
		if strings.Contains(e.Message, "notifications dropped") {
			overflowed = true
		}
	}
	if !overflowed {
		t.Error("the burst did not overflow the receive buffer: the test proves nothing")
	}
}
