package nftables

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// fakeSockets plays openEventSocket: each call is a subscription that
// the test feeds notifications, overflows or errors.
type fakeSockets struct {
	made chan *fakeSocket
	err  error // the next open fails with it
}

type fakeSocket struct {
	in     chan batch
	closed chan struct{}
	rcvbuf int
}

func (s *fakeSocket) receive() ([]notification, error) {
	select {
	case b := <-s.in:
		return b.ns, b.err
	case <-s.closed:
		return nil, errors.New("use of closed file")
	}
}

func (s *fakeSocket) close() { close(s.closed) }

func (f *fakeSockets) open(_, rcvbuf int) (eventSocket, error) {
	if f.err != nil {
		return nil, f.err
	}
	s := &fakeSocket{in: make(chan batch), closed: make(chan struct{}), rcvbuf: rcvbuf}
	f.made <- s
	return s, nil
}

// watch runs w's Watch and returns its events, its first subscription
// and the end of it.
func watch(w *Watcher, f *fakeSockets) (chan Event, *fakeSocket, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan Event)
	go w.Watch(ctx, events)
	return events, <-f.made, cancel
}

// ownPid is the committing task the tests' own transactions name.
const ownPid, otherPid = 100, 200

func newTestWatcher() (*Watcher, *fakeSockets) {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	w := NewWatcher(nil, log)
	f := &fakeSockets{made: make(chan *fakeSocket, 10)}
	w.open = f.open
	w.own = func(pid uint32) bool { return pid == ownPid }
	return w, f
}

// txn is one transaction's notifications: an object message per table,
// then NEWGEN naming pid.
func txn(pid uint32, tables ...string) []notification {
	var out []notification
	for _, t := range tables {
		out = append(out, notification{table: t})
	}
	return append(out, notification{gen: true, pid: pid})
}

func isClosed(s *fakeSocket) bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// TestWatcherDropsOwnAndUnfollowed: the first event is a Resync; a
// transaction netagent committed is no event, nor one of a table not
// followed; another writer's in a followed table is, naming it once.
func TestWatcherDropsOwnAndUnfollowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		w.Follow([]string{"inet netagent", "ip nat2"})
		events, sock, cancel := watch(w, f)
		defer cancel()
		if sock.rcvbuf != ReceiveBuffer {
			t.Errorf("receive buffer %d, want %d", sock.rcvbuf, ReceiveBuffer)
		}
		if ev := <-events; !ev.Resync || len(ev.Tables) > 0 {
			t.Fatalf("first event %+v, want a bare resync", ev)
		}
		sock.in <- batch{ns: txn(ownPid, "inet netagent", "inet netagent")}
		sock.in <- batch{ns: txn(otherPid, "ip filter", "inet docker")}
		// One transaction read in two parts: its tables count at its NEWGEN.
		sock.in <- batch{ns: []notification{{table: "inet netagent"}, {table: "inet netagent"}}}
		synctest.Wait()
		select {
		case ev := <-events:
			t.Fatalf("an event %+v before the transaction's end", ev)
		default:
		}
		sock.in <- batch{ns: txn(otherPid, "ip filter")}
		if ev := <-events; ev.Resync || !slices.Equal(ev.Tables, []string{"inet netagent"}) {
			t.Errorf("event %+v, want inet netagent alone", ev)
		}
		synctest.Wait()
		select {
		case ev := <-events:
			t.Errorf("a second event %+v", ev)
		default:
		}
	})
}

// TestWatcherCoalesces: while the consumer is busy the watcher keeps
// reading and merges what it reads into one event (an `nft flush
// ruleset` repeated 100 times is one event), tables sorted.
func TestWatcherCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		events, sock, cancel := watch(w, f)
		defer cancel()
		for range 100 {
			sock.in <- batch{ns: txn(otherPid, "ip6 b", "inet a", "inet a", "ip6 b")} // never blocks for long
		}
		synctest.Wait()
		if ev := <-events; !ev.Resync || !slices.Equal(ev.Tables, []string{"inet a", "ip6 b"}) {
			t.Errorf("coalesced event %+v, want a resync naming inet a and ip6 b", ev)
		}
		synctest.Wait()
		select {
		case ev := <-events:
			t.Errorf("a second event %+v", ev)
		default:
		}
	})
}

// TestWatcherOverflowAndErrors: ENOBUFS keeps the socket and asks for a
// resync (a transaction cut by it counts in the resync); another error
// subscribes again, with a resync; a kernel without nf_tables ends Watch.
func TestWatcherOverflowAndErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		events, sock, cancel := watch(w, f)
		defer cancel()
		<-events
		sock.in <- batch{ns: []notification{{table: "inet netagent"}}}
		sock.in <- batch{err: errOverflow}
		if ev := <-events; !ev.Resync {
			t.Errorf("after an overflow: %+v, want a resync", ev)
		}
		sock.in <- batch{ns: []notification{{gen: true, pid: otherPid}}} // the cut transaction's end
		sock.in <- batch{ns: txn(otherPid, "inet netagent")}
		if ev := <-events; ev.Resync || !slices.Equal(ev.Tables, []string{"inet netagent"}) {
			t.Errorf("after the overflow: %+v", ev)
		}
		select {
		case s := <-f.made:
			t.Fatalf("an overflow made a new subscription %p", s)
		default:
		}
		sock.in <- batch{err: errors.New("receiving nftables notifications: EIO")}
		sock2 := <-f.made
		if ev := <-events; !ev.Resync {
			t.Errorf("after subscribing again: %+v, want a resync", ev)
		}
		if !isClosed(sock) {
			t.Error("the old subscription was not closed")
		}
		cancel()
		synctest.Wait()
		if !isClosed(sock2) {
			t.Error("the subscription outlived Watch")
		}

		w2, f2 := newTestWatcher()
		f2.err = os.NewSyscallError("socket", unix.EPROTONOSUPPORT)
		done := make(chan struct{})
		go func() { w2.Watch(context.Background(), events); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("Watch went on without nf_tables")
		}
	})
}

// TestWatcherBoundsPending: a flush of thousands of tables is a Resync,
// not an event naming them all.
func TestWatcherBoundsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		events, sock, cancel := watch(w, f)
		defer cancel()
		<-events
		var tables []string
		for i := range 10 * maxPending {
			tables = append(tables, TableKey("ip", string(rune('a'+i%26))+string(rune('a'+i/26))))
		}
		sock.in <- batch{ns: txn(otherPid, tables...)} // one transaction
		synctest.Wait()
		if ev := <-events; !ev.Resync || len(ev.Tables) > maxPending {
			t.Errorf("event of %d tables, resync %v: want a resync of at most %d", len(ev.Tables), ev.Resync, maxPending)
		}
		for i := range 10 { // many, each of maxPending tables
			sock.in <- batch{ns: txn(otherPid, tables[i*maxPending:(i+1)*maxPending]...)}
		}
		synctest.Wait()
		if ev := <-events; !ev.Resync || len(ev.Tables) > maxPending {
			t.Errorf("event of %d tables, resync %v: want a resync of at most %d", len(ev.Tables), ev.Resync, maxPending)
		}
		sock.in <- batch{ns: txn(otherPid, tables[:maxPending]...)} // at the bound: named
		if ev := <-events; ev.Resync || len(ev.Tables) != maxPending {
			t.Errorf("event of %d tables, resync %v: want %d tables named", len(ev.Tables), ev.Resync, maxPending)
		}
	})
}

// attr encodes one netlink attribute.
func attr(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b[0:2], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestParseNotification reads the table of an object message (whatever
// attributes come before it), the task of a NEWGEN, and nothing of other
// subsystems or of truncated messages.
func TestParseNotification(t *testing.T) {
	nftMsg := func(msg uint16) uint16 { return unix.NFNL_SUBSYS_NFTABLES<<8 | msg }
	gen := []byte{unix.AF_INET, 0, 0, 0}
	rule := slices.Concat([]byte{unix.NFPROTO_INET, 0, 0, 0}, attr(unix.NFTA_RULE_CHAIN+10, []byte("x")), attr(unix.NFTA_RULE_TABLE, []byte("netagent\x00")))
	pid := binary.BigEndian.AppendUint32(nil, 4242)
	for _, c := range []struct {
		name string
		typ  uint16
		b    []byte
		want notification
		ok   bool
	}{
		{"rule", nftMsg(unix.NFT_MSG_DELRULE), rule, notification{table: "inet netagent"}, true},
		{"table", nftMsg(unix.NFT_MSG_DELTABLE), slices.Concat([]byte{unix.NFPROTO_IPV6, 0, 0, 0}, attr(unix.NFTA_TABLE_NAME, []byte("t\x00"))), notification{table: "ip6 t"}, true},
		{"newgen", nftMsg(unix.NFT_MSG_NEWGEN), slices.Concat(gen, attr(unix.NFTA_GEN_ID, []byte{0, 0, 0, 7}), attr(unix.NFTA_GEN_PROC_PID, pid)), notification{gen: true, pid: 4242}, true},
		{"other subsystem", 1<<8 | unix.NFT_MSG_DELRULE, rule, notification{}, false},
		{"truncated attribute", nftMsg(unix.NFT_MSG_DELRULE), rule[:len(rule)-4], notification{}, true},
		{"short", nftMsg(unix.NFT_MSG_DELRULE), []byte{1, 0}, notification{}, false},
	} {
		got, ok := parseNotification(c.typ, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestOwnTask: this process and its threads are netagent's own writers;
// a pid that is none of them is another writer.
func TestOwnTask(t *testing.T) {
	if !ownTask(uint32(os.Getpid())) || !ownTask(uint32(unix.Gettid())) {
		t.Error("the process's own threads not recognised")
	}
	if ownTask(1) && os.Getpid() != 1 {
		t.Error("pid 1 taken for one of this process's threads")
	}
}
