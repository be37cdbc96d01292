package items

// KindDummy is the kind of a dummy interface: a link of its own with no
// attributes (no KindAttrs; its line in kinds says so).
const KindDummy InterfaceKind = "dummy"
