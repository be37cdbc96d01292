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
	msgs, from, err := n.s.Receive()
	if errors.Is(err, unix.ENOBUFS) {
		return nil, errOverflow
	}
	if err != nil {
		return nil, fmt.Errorf("receiving link notifications: %w", err)
	}
	if from.Pid != nl.PidKernel {
		return nil, nil
	}
	var names []string
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWLINK && m.Header.Type != unix.RTM_DELLINK {
			continue
		}
		if name, ok := linkName(m.Data); ok {
			names = append(names, name)
		}
	}
	return names, nil
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
