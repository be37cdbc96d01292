package firewall

import "github.com/netagent/netagent/configurators/statefile"

// The state directory's helpers, shared with the other configurators (see
// package statefile).
var (
	writeFileAtomic = statefile.WriteAtomic
	writeCacheFile  = statefile.WriteCache
	lockFile        = statefile.Lock
	identify        = statefile.Identify
)

// nsIdentity identifies one instance of a network namespace (see
// statefile.NsIdentity).
type nsIdentity = statefile.NsIdentity
