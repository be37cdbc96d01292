// Package ethtool applies a link's ethtool settings (offload features,
// channels, rings, interrupt coalescing, pause frames, link modes and
// Wake-on-LAN) over the kernel's ethtool generic netlink family, inside
// the target namespace, and reads them back.
//
// Two clients share the work. github.com/mdlayher/ethtool, a well-kept
// library made for the genetlink ethtool family, writes link modes and
// reads Wake-on-LAN. The messages it does not cover (FEATURES, CHANNELS,
// RINGS, COALESCE and PAUSE, Documentation/networking/ethtool-netlink.rst),
// and the reading of link modes (the library drops the supported modes
// and cannot name bits above its table of 92: linkmodes.go) and the writing
// of Wake-on-LAN (the library's request can only add modes: wol.go), are
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
//
// The Configurator applies items.Ethtool (settings as "<group>/<field>"
// keys, features by the kernel's names; the set "link/advertise" of
// speed and duplex modes, which needs autoneg on and only modes the NIC
// supports, and is written after the link's autoneg; the MTU the item
// follows, so that an MTU change converges it again). One converge, for Create,
// Modify and Delete alike: read the groups the intent and the record
// name (settings.go's snapshot); refuse, before anything is written, a
// feature the kernel reports fixed or not changeable, a value above the
// NIC's reported maximum, a setting the driver lacks (ErrRefused; Check
// says the same to plan); record each setting's value as found before
// its first change (<stateDir>/ethtool.json, per namespace and NIC
// ifindex, durable: state.go); write by group; read the changes back
// (a driver may keep another value); give back, and forget, what left
// the intent. ReadBack shows the settings the hint names and the ones
// recorded that do not hold their original. Predict (disruption.go)
// marks channel, ring and link-mode changes as possible link flaps.
// FakeKernel is the package's fake (veth-like NICs: AddVeth; e1000-like
// ones with rings, pause and link modes: AddE1000; a driver that resets
// rings on an MTU change: FakeNIC.ResetOnMTU).
package ethtool
