package intent

// LinkDummy is the type of a dummy interface: {"type": "dummy"}, with no
// section (a link of its own, which takes addresses and routes like any
// other; the usual home of a loopback-like service address).
const LinkDummy LinkType = "dummy"

// dummySection only makes the type known: it has no section.
var dummySection = linkSection{typ: LinkDummy}
