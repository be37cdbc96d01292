// Package ethtool applies a link's ethtool settings (offload features,
// channels, rings, interrupt coalescing, pause frames, link modes and
// Wake-on-LAN) over the kernel's ethtool generic netlink family, inside
// the target namespace, and reads them back.
//
// Two clients share the work. github.com/mdlayher/ethtool, a well-kept
// library made for the genetlink ethtool family, covers link modes and
// Wake-on-LAN. The messages it does not cover (FEATURES, CHANNELS, RINGS,
// COALESCE and PAUSE, Documentation/networking/ethtool-netlink.rst) are
// this package's own small codec over github.com/mdlayher/genetlink:
// codec.go encodes requests and decodes answers as pure functions over
// attribute bytes (tested against messages recorded from the kernel), and
// conn.go sends them. Every answer is bounded and validated: attribute
// sizes, bitset sizes and names, and a current value above the maximum
// the same answer reports are errors, never values.
//
// Genetlink rather than the SIOCETHTOOL ioctl: netlink reports what the
// ioctl cannot (which features are fixed, the "nochange" bitset, with the
// kernel's names instead of the ioctl's fixed bit numbers), answers with
// extended acks naming the refused attribute, sets only the attributes
// sent, and a socket is bound to a namespace at creation, so one
// connection per target serves the whole reconcile.
package ethtool
