package linkwatch

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// nlSocket is an RTNLGRP_LINK subscription on a netlink socket.
type nlSocket struct {
	s *nl.NetlinkSocket
}

// openLinkSocket subscribes to RTNLGRP_LINK in ns with a receive buffer
// of rcvbuf bytes: SO_RCVBUFFORCE (root may exceed net.core.rmem_max),
// else SO_RCVBUF (capped by rmem_max).
func openLinkSocket(ns netns.NsHandle, rcvbuf int) (linkSocket, error) {
	s, err := nl.SubscribeAt(ns, netns.None(), unix.NETLINK_ROUTE, unix.RTNLGRP_LINK)
	if err != nil {
		return nil, err
	}
	if err := setReceiveBuffer(s, rcvbuf); err != nil {
		s.Close()
		return nil, err
	}
	return &nlSocket{s: s}, nil
}

// setReceiveBuffer gives s a receive buffer of rcvbuf bytes (0: the
// default): SO_RCVBUFFORCE, else SO_RCVBUF.
func setReceiveBuffer(s *nl.NetlinkSocket, rcvbuf int) error {
	if rcvbuf <= 0 || s.SetReceiveBufferSize(rcvbuf, true) == nil {
		return nil
	}
	if err := s.SetReceiveBufferSize(rcvbuf, false); err != nil {
		return fmt.Errorf("setting the receive buffer to %d bytes: %w", rcvbuf, err)
	}
	return nil
}

func (n *nlSocket) close() { n.s.Close() }

// receive reads one datagram of notifications and returns the names of
// their links. Messages not from the kernel are ignored.
func (n *nlSocket) receive() ([]string, error) {
	return receiveFrom(n.s, "link", func(typ uint16, b []byte) (string, bool) {
		if typ != unix.RTM_NEWLINK && typ != unix.RTM_DELLINK {
			return "", false
		}
		return linkName(b)
	})
}

// receiveFrom reads one datagram of notifications from s and returns what
// pick says of each message (ok false: nothing); errOverflow when the
// kernel dropped some. A datagram not from the kernel gives nothing.
func receiveFrom(s *nl.NetlinkSocket, what string, pick func(typ uint16, b []byte) (string, bool)) ([]string, error) {
	msgs, from, err := s.Receive()
	if errors.Is(err, unix.ENOBUFS) {
		return nil, errOverflow
	}
	if err != nil {
		return nil, fmt.Errorf("receiving %s notifications: %w", what, err)
	}
	if from.Pid != nl.PidKernel {
		return nil, nil
	}
	var out []string
	for _, m := range msgs {
		if v, ok := pick(m.Header.Type, m.Data); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// linkName finds IFLA_IFNAME in an RTM_NEWLINK/RTM_DELLINK message's
// payload (an ifinfomsg, then attributes) without decoding the rest.
func linkName(b []byte) (string, bool) {
	if len(b) < unix.SizeofIfInfomsg {
		return "", false
	}
	b = b[unix.SizeofIfInfomsg:]
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if l < unix.SizeofRtAttr || l > len(b) {
			return "", false
		}
		if typ == unix.IFLA_IFNAME {
			v := b[unix.SizeofRtAttr:l]
			for i, c := range v {
				if c == 0 {
					v = v[:i]
					break
				}
			}
			return string(v), true
		}
		b = b[min(len(b), (l+unix.RTA_ALIGNTO-1)&^(unix.RTA_ALIGNTO-1)):]
	}
	return "", false
}
