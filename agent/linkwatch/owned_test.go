package linkwatch

import (
	"encoding/binary"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/testns"
)

const testProto = 211

// attr encodes one rtnetlink attribute, padded.
func attr(typ uint16, v []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(unix.SizeofRtAttr+len(v)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%unix.RTA_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

// notification frames a payload as the kernel sends it.
func notification(typ uint16, payload []byte) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(unix.NLMSG_HDRLEN+len(payload)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, make([]byte, 10)...) // flags, seq, pid
	return append(b, payload...)
}

func routeMsg(proto byte) []byte {
	rt := []byte{unix.AF_INET, 24, 0, 0, unix.RT_TABLE_MAIN, proto, 0, unix.RTN_UNICAST, 0, 0, 0, 0}
	return append(rt, attr(unix.RTA_DST, []byte{10, 0, 0, 0})...)
}

// addrMsg is an address with the attributes the kernel puts before
// IFA_PROTO (an IPv4 one with a label), and IFA_PROTO when proto is not 0.
func addrMsg(proto byte) []byte {
	b := []byte{unix.AF_INET, 24, 0, 0, 2, 0, 0, 0}
	b = append(b, attr(unix.IFA_ADDRESS, []byte{10, 0, 0, 1})...)
	b = append(b, attr(unix.IFA_LOCAL, []byte{10, 0, 0, 1})...)
	b = append(b, attr(unix.IFA_BROADCAST, []byte{10, 0, 0, 255})...)
	b = append(b, attr(unix.IFA_LABEL, []byte("uplink0:foo\x00"))...)
	if proto != 0 {
		b = append(b, attr(ifaProto, []byte{proto})...)
	}
	b = append(b, attr(unix.IFA_FLAGS, []byte{0x80, 0, 0, 0})...)
	return append(b, attr(unix.IFA_CACHEINFO, make([]byte, 16))...)
}

func neighMsg(proto byte) []byte {
	b := make([]byte, sizeofNdmsg)
	b[0] = unix.AF_INET
	b = append(b, attr(unix.NDA_DST, []byte{10, 0, 0, 9})...)
	b = append(b, attr(unix.NDA_LLADDR, []byte{2, 0, 0, 0, 0, 9})...)
	b = append(b, attr(unix.NDA_CACHEINFO, make([]byte, 16))...)
	b = append(b, attr(unix.NDA_PROBES, make([]byte, 4))...)
	if proto != 0 {
		b = append(b, attr(ndaProtocol, []byte{proto})...)
	}
	return b
}

// The filter keeps what ownedKind calls owned and every message that is
// not a route's, an address's or a neighbour's, and drops the rest.
func TestOwnedFilter(t *testing.T) {
	vm, err := bpf.NewVM(ownedFilter(testProto))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		typ     uint16
		payload []byte
		keep    bool
	}{
		{"our route", unix.RTM_NEWROUTE, routeMsg(testProto), true},
		{"our route deleted", unix.RTM_DELROUTE, routeMsg(testProto), true},
		{"a bgp route", unix.RTM_NEWROUTE, routeMsg(186), false},
		{"a bgp route deleted", unix.RTM_DELROUTE, routeMsg(186), false},
		{"our address", unix.RTM_NEWADDR, addrMsg(testProto), true},
		{"our address deleted", unix.RTM_DELADDR, addrMsg(testProto), true},
		{"someone's address", unix.RTM_NEWADDR, addrMsg(4), false},
		{"an address without IFA_PROTO", unix.RTM_NEWADDR, addrMsg(0), false},
		{"our neighbour", unix.RTM_NEWNEIGH, neighMsg(testProto), true},
		{"our neighbour deleted", unix.RTM_DELNEIGH, neighMsg(testProto), true},
		{"a learned neighbour", unix.RTM_NEWNEIGH, neighMsg(0), false},
		{"someone's neighbour", unix.RTM_NEWNEIGH, neighMsg(3), false},
		{"a link", unix.RTM_NEWLINK, make([]byte, unix.SizeofIfInfomsg), true},
		{"a truncated route", unix.RTM_NEWROUTE, []byte{unix.AF_INET}, false},
	}
	for _, c := range cases {
		msg := notification(c.typ, c.payload)
		n, err := vm.Run(msg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if kept := n > 0; kept != c.keep {
			t.Errorf("%s: kept %v, want %v", c.name, kept, c.keep)
		}
		if c.typ != unix.RTM_NEWLINK {
			if owned := ownedKind(c.typ, c.payload, testProto) != ""; owned != c.keep {
				t.Errorf("%s: ownedKind says owned %v, want %v", c.name, owned, c.keep)
			}
		}
	}
}

// In a namespace, 100k changes of another protocol's routes and others'
// addresses wake the filtered subscription's reader no more than a
// handful of times; the changes of netagent's route, address and
// neighbour that follow them are read.
func TestOwnedSocketFiltersInKernel(t *testing.T) {
	tgt := testns.New(t)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", append([]string{"-n", tgt.Name}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("link", "add", "up0", "type", "veth", "peer", "name", "up0-peer")
	ip("link", "set", "up0", "up")
	ip("link", "set", "up0-peer", "up")
	sock, err := openOwnedSocket(tgt.NsHandle(), ReceiveBuffer, testProto, testLog())
	if err != nil {
		t.Fatal(err)
	}
	defer sock.close()
	type read struct {
		kinds []string
		err   error
	}
	reads := make(chan read, 1024)
	go func() {
		for {
			k, err := sock.receive()
			reads <- read{k, err}
			if err != nil && err != errOverflow {
				return
			}
		}
	}()

	var batch strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&batch, "route add 172.%d.%d.%d/32 dev up0 proto 186 table %d\n", 16+i>>16, i>>8&255, i&255, 100+i%3)
	}
	for i := range 50000 {
		fmt.Fprintf(&batch, "route del 172.%d.%d.%d/32 dev up0 proto 186 table %d\n", 16+i>>16, i>>8&255, i&255, 100+i%3)
	}
	batch.WriteString("addr add 192.0.2.1/24 dev up0\n")
	cmd := exec.Command("ip", "-n", tgt.Name, "-batch", "-")
	cmd.Stdin = strings.NewReader(batch.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ip -batch: %v\n%s", err, out)
	}
	// netagent's objects, after the others' in the socket's queue
	ip("route", "add", "198.51.100.0/24", "dev", "up0", "proto", fmt.Sprint(testProto))
	addOwnedAddr(t, tgt.NsHandle(), "up0", [4]byte{192, 0, 2, 2}) // iproute2 before 6.3 has no address proto
	ip("neigh", "add", "192.0.2.9", "lladdr", "02:00:00:00:00:09", "dev", "up0", "nud", "permanent", "proto", fmt.Sprint(testProto))

	want := map[string]bool{"route": true, "address": true, "neighbor": true}
	wakeups := 0
	timeout := time.After(time.Minute) // a bound for a broken filter, not a timing assertion
	for len(want) > 0 {
		select {
		case r := <-reads:
			wakeups++
			if r.err != nil {
				t.Fatalf("receive: %v", r.err)
			}
			for _, k := range r.kinds {
				delete(want, k)
			}
		case <-timeout:
			t.Fatalf("netagent's objects not read after %d reads: %v missing", wakeups, want)
		}
	}
	// One read per owned change (the route's, the address's and its
	// prefix route's... a handful), none for the 100k others'.
	if wakeups > 6 {
		t.Errorf("%d reads for 100k foreign changes and 3 owned ones, want a handful", wakeups)
	}
}

func testLog() *logrus.Logger {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	return log
}

// addOwnedAddr adds addr/24 to dev with IFA_PROTO testProto over a socket
// in ns.
func addOwnedAddr(t *testing.T, ns netns.NsHandle, dev string, addr [4]byte) {
	t.Helper()
	s, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ifr, err := unix.NewIfreq(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlIfreq(s.GetFd(), unix.SIOCGIFINDEX, ifr); err != nil {
		t.Fatalf("index of %s: %v", dev, err)
	}
	req := nl.NewNetlinkRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	msg := nl.NewIfAddrmsg(unix.AF_INET)
	msg.Prefixlen, msg.Index = 24, ifr.Uint32()
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFA_LOCAL, addr[:]))
	req.AddData(nl.NewRtAttr(unix.IFA_ADDRESS, addr[:]))
	req.AddData(nl.NewRtAttr(ifaProto, []byte{testProto}))
	if err := s.Send(req); err != nil {
		t.Fatal(err)
	}
	msgs, _, err := s.Receive()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
			if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
				t.Fatalf("adding %v to %s: %v", addr, dev, unix.Errno(-errno))
			}
		}
	}
}
