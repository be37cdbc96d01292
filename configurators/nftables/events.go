package nftables

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	gnft "github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/pace"
)

// The event subscription: a Watcher says when the tables it follows may
// have changed, so that the daemon reads them back and repairs them within
// a second instead of at its next periodic drift check.
//
// It subscribes to the NFNLGRP_NFTABLES multicast group of a
// NETLINK_NETFILTER socket opened in the target namespace (what `nft
// monitor` reads). The kernel sends one notification per object a
// transaction created or deleted (tables, chains, rules, sets, elements),
// then NFT_MSG_NEWGEN naming the generation and the task that committed
// it. The watcher reads only the table name of each notification
// (attribute 1 of every object message), so the events of other tables
// cost a few bytes of parsing each and reach no one. A transaction
// committed by netagent's own process (NEWGEN's task is one of its
// threads) is dropped whole: netagent's own writes never ask for a
// repair. (A daemon in a PID namespace of its own may not recognise its
// threads; its own writes then only cost a read-back that finds nothing
// to repair.)
//
// Netlink is lossy: when the receive buffer (ReceiveBuffer) overflows,
// the kernel drops notifications and the next read fails with ENOBUFS;
// the watcher keeps the socket and sends a Resync (read every table
// back). Any other error ends the subscription; it subscribes again with
// a backoff and sends a Resync. A kernel without nf_tables has nothing to
// watch: Watch logs it and returns.

// Event says that nftables tables may have changed.
type Event struct {
	// Tables are the followed tables ("family name", as TableKey) that
	// another writer's transactions named, sorted.
	Tables []string
	// Resync: the watcher (re)subscribed or notifications were dropped;
	// any table may have changed.
	Resync bool
}

// TableKey is how an Event names a table: "inet netagent".
func TableKey(family, table string) string { return family + " " + table }

// EventWatcher is what the daemon needs of a subscription: Watcher, or a
// FakeWatcher in tests.
type EventWatcher interface {
	// Watch sends events until ctx ends; its first event is a Resync,
	// once the subscription is made.
	Watch(ctx context.Context, events chan<- Event)
	// Follow sets the tables (TableKey) whose changes are events; the
	// others are dropped. Safe for concurrent use; before the first call
	// every table is followed.
	Follow(tables []string)
}

// Watcher watches the nftables tables of one namespace.
type Watcher struct {
	nsfd   int // the namespace's file descriptor; -1 for the caller's own
	log    logrus.FieldLogger
	rcvbuf int
	// open subscribes (openEventSocket; replaced in tests).
	open func(nsfd, rcvbuf int) (eventSocket, error)
	// own reports whether the task that committed a generation is one of
	// this process's threads (ownTask; replaced in tests).
	own    func(pid uint32) bool
	follow atomic.Pointer[map[string]bool] // nil: every table
}

var _ EventWatcher = (*Watcher)(nil)

// ReceiveBuffer is the subscription's receive buffer: room for the
// notifications of tens of thousands of rules (one is a few hundred
// bytes), so that a flush of a large ruleset does not overflow it while
// the watcher is busy. A set of 100k elements written at once overflows
// it anyway, and costs one Resync.
const ReceiveBuffer = 8 << 20

// NewWatcher returns a watcher of t's tables (nil: the caller's own
// namespace).
func NewWatcher(t *netnsx.Target, log logrus.FieldLogger) *Watcher {
	nsfd := -1
	if t != nil {
		nsfd = int(t.NsHandle())
	}
	return &Watcher{nsfd: nsfd, log: log.WithField("watch", "nftables"), rcvbuf: ReceiveBuffer,
		open: openEventSocket, own: ownTask}
}

// Follow sets the tables whose changes are events.
func (w *Watcher) Follow(tables []string) {
	m := make(map[string]bool, len(tables))
	for _, t := range tables {
		m[t] = true
	}
	w.follow.Store(&m)
}

func (w *Watcher) followed(table string) bool {
	m := w.follow.Load()
	return m == nil || (*m)[table]
}

// notification is what the watcher reads of one kernel message.
type notification struct {
	// gen: NFT_MSG_NEWGEN, the end of one transaction, committed by task
	// pid.
	gen bool
	pid uint32
	// table is the TableKey of the object the message is about ("" when
	// it names none).
	table string
}

// eventSocket is one subscription.
type eventSocket interface {
	// receive blocks for the next notifications; errOverflow when the
	// kernel dropped some.
	receive() ([]notification, error)
	// close ends the subscription; a blocked receive returns.
	close()
}

// errOverflow: the receive buffer overflowed (ENOBUFS), notifications
// were dropped; the socket still works.
var errOverflow = errors.New("nftables notifications dropped (receive buffer full)")

// resubscribe is the wait before subscribing again: 75 ms after the
// first failure in a row, doubling up to 3.75 s.
var resubscribe = pace.Backoff{Base: 75 * time.Millisecond, Limit: 3750 * time.Millisecond}

// Watch sends events until ctx ends.
func (w *Watcher) Watch(ctx context.Context, events chan<- Event) {
	attempt := 0
	for ctx.Err() == nil {
		delivered, err := w.session(ctx, events)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrNoNftables) {
			w.log.WithError(err).Info("no nftables events to watch")
			return
		}
		if delivered {
			attempt = 0
		}
		attempt++
		d := resubscribe.Nominal(attempt)
		w.log.WithError(err).WithField("in", d).Warn("nftables subscription ended; subscribing again")
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
	}
}

// batch is one read: its notifications or its error.
type batch struct {
	ns  []notification
	err error
}

// session is one subscription, until an error other than an overflow or
// ctx's end; delivered says that it read something.
func (w *Watcher) session(ctx context.Context, events chan<- Event) (delivered bool, err error) {
	sock, err := w.open(w.nsfd, w.rcvbuf)
	if err != nil {
		return false, fmt.Errorf("subscribing to nftables events: %w", kernelErr(err))
	}
	batches := make(chan batch, 16)
	done := make(chan struct{})
	go read(sock, batches, done)
	defer func() {
		close(done)
		sock.close()
	}()
	w.log.Debug("subscribed to nftables events")
	return w.pump(ctx, batches, events)
}

func read(sock eventSocket, batches chan<- batch, done <-chan struct{}) {
	for {
		ns, err := sock.receive()
		select {
		case batches <- batch{ns: ns, err: err}:
		case <-done:
			return
		}
		if err != nil && !errors.Is(err, errOverflow) {
			return
		}
	}
}

// maxPending bounds the tables one pending event names; beyond it the
// event is a Resync.
const maxPending = 256

// pending is the event being gathered, and the transaction being read.
type pending struct {
	ev     Event
	tables map[string]bool // ev.Tables as a set
	txn    map[string]bool // the tables the open transaction named
	// txnFull: it named more than maxPending.
	txnFull bool
}

func (p *pending) ready() bool { return p.ev.Resync || len(p.ev.Tables) > 0 }

// sent forgets the event sent (whose Tables the consumer now holds).
func (p *pending) sent() {
	p.ev = Event{}
	clear(p.tables)
}

// add takes in one read's notifications: a transaction's tables count
// at its NEWGEN, unless netagent committed it.
func (w *Watcher) add(p *pending, ns []notification) {
	for _, n := range ns {
		if !n.gen {
			if n.table != "" && w.followed(n.table) && !p.txn[n.table] {
				p.txnFull = p.txnFull || len(p.txn) >= maxPending
				if !p.txnFull {
					p.txn[n.table] = true
				}
			}
			continue
		}
		if !w.own(n.pid) {
			for t := range p.txn {
				p.merge(t)
			}
			p.ev.Resync = p.ev.Resync || p.txnFull
		}
		clear(p.txn)
		p.txnFull = false
	}
}

func (p *pending) merge(t string) {
	if p.tables[t] {
		return
	}
	if len(p.tables) >= maxPending {
		p.ev.Resync = true
		return
	}
	p.tables[t] = true
	i, _ := slices.BinarySearch(p.ev.Tables, t)
	p.ev.Tables = slices.Insert(p.ev.Tables, i, t)
}

// pump forwards what the reader reads as coalesced events: the send case
// is on only while an event is pending, so the watcher keeps draining the
// socket while the consumer is busy.
func (w *Watcher) pump(ctx context.Context, batches <-chan batch, events chan<- Event) (delivered bool, err error) {
	p := &pending{ev: Event{Resync: true}, tables: map[string]bool{}, txn: map[string]bool{}}
	for {
		var out chan<- Event
		if p.ready() {
			out = events
		}
		select {
		case <-ctx.Done():
			return delivered, ctx.Err()
		case out <- p.ev:
			p.sent()
		case b := <-batches:
			switch {
			case errors.Is(b.err, errOverflow):
				w.log.Info("nftables notifications dropped; reading every table back")
				p.ev.Resync = true
				clear(p.txn) // its end may be lost: the resync covers it
				p.txnFull = false
			case b.err != nil:
				return delivered, b.err
			}
			delivered = true
			w.add(p, b.ns)
		}
	}
}

// ownTask reports whether pid is a thread of this process (the kernel
// names the committing thread, not the process).
func ownTask(pid uint32) bool {
	if int(pid) == os.Getpid() {
		return true
	}
	_, err := os.Stat("/proc/self/task/" + strconv.FormatUint(uint64(pid), 10))
	return err == nil
}

// nlEventSocket is an NFNLGRP_NFTABLES subscription.
type nlEventSocket struct{ c *netlink.Conn }

// openEventSocket subscribes in the namespace nsfd (-1: the caller's own)
// with a receive buffer of rcvbuf bytes: SO_RCVBUFFORCE (root may exceed
// net.core.rmem_max), else SO_RCVBUF.
func openEventSocket(nsfd, rcvbuf int) (eventSocket, error) {
	cfg := &netlink.Config{}
	if nsfd >= 0 {
		cfg.NetNS = nsfd
	}
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.JoinGroup(unix.NFNLGRP_NFTABLES); err != nil {
		c.Close()
		return nil, fmt.Errorf("joining the nftables group: %w", err)
	}
	if err := setReceiveBuffer(c, rcvbuf); err != nil {
		c.Close()
		return nil, err
	}
	return &nlEventSocket{c: c}, nil
}

func setReceiveBuffer(c *netlink.Conn, n int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n)
	}); err != nil {
		return err
	}
	if serr == nil {
		return nil
	}
	if err := c.SetReadBuffer(n); err != nil {
		return fmt.Errorf("setting the receive buffer to %d bytes: %w", n, err)
	}
	return nil
}

func (s *nlEventSocket) close() { s.c.Close() }

func (s *nlEventSocket) receive() ([]notification, error) {
	msgs, err := s.c.Receive()
	if errors.Is(err, unix.ENOBUFS) {
		return nil, errOverflow
	}
	if err != nil {
		return nil, fmt.Errorf("receiving nftables notifications: %w", err)
	}
	out := make([]notification, 0, len(msgs))
	for _, m := range msgs {
		if n, ok := parseNotification(uint16(m.Header.Type), m.Data); ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// parseNotification reads one nf_tables message: an nfgenmsg (family,
// version, resource id), then attributes; of an object's message only the
// table name (attribute 1 of every object type), of NEWGEN only the
// committing task (NFTA_GEN_PROC_PID).
func parseNotification(typ uint16, b []byte) (notification, bool) {
	if typ>>8 != unix.NFNL_SUBSYS_NFTABLES || len(b) < 4 {
		return notification{}, false
	}
	msg, family := typ&0xff, familyName(gnft.TableFamily(b[0]))
	if msg == unix.NFT_MSG_NEWGEN {
		v, ok := attribute(b[4:], unix.NFTA_GEN_PROC_PID)
		if !ok || len(v) != 4 {
			return notification{gen: true}, true
		}
		return notification{gen: true, pid: binary.BigEndian.Uint32(v)}, true
	}
	v, ok := attribute(b[4:], 1) // NFTA_{TABLE_NAME,CHAIN_TABLE,RULE_TABLE,SET_TABLE,SET_ELEM_LIST_TABLE,...}
	if !ok || family == "" {
		return notification{}, true // an object of no table netagent could own: a change all the same
	}
	return notification{table: TableKey(family, cString(v))}, true
}

// attribute finds the attribute typ in b without decoding the others.
func attribute(b []byte, typ uint16) ([]byte, bool) {
	for len(b) >= unix.SizeofNlAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		t := binary.NativeEndian.Uint16(b[2:4]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if l < unix.SizeofNlAttr || l > len(b) {
			return nil, false
		}
		if t == typ {
			return b[unix.SizeofNlAttr:l], true
		}
		b = b[min(len(b), (l+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1)):]
	}
	return nil, false
}

func cString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
