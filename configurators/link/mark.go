package link

import "strings"

// Ownership mark. A link netagent creates carries an IFLA_IFALIAS that starts
// with "netagent": exactly "netagent" when the intent gives no alias, and
// "netagent:<alias>" when it does. The alias lives in the kernel, so a
// restarted agent with no memory tells its own links from everyone else's
// by it alone; `ip link` shows it. Physical interfaces are never marked:
// their alias is the intent's own.
const (
	markAlias = "netagent"
	markSep   = ":"
)

// ownedAlias reports whether a kernel alias carries the mark.
func ownedAlias(kernelAlias string) bool {
	return kernelAlias == markAlias || strings.HasPrefix(kernelAlias, markAlias+markSep)
}

// markedAlias is the kernel alias of an owned link whose intended alias is
// alias.
func markedAlias(alias string) string {
	if alias == "" {
		return markAlias
	}
	return markAlias + markSep + alias
}

// unmarkedAlias strips the mark from an owned link's kernel alias.
func unmarkedAlias(kernelAlias string) string {
	return strings.TrimPrefix(strings.TrimPrefix(kernelAlias, markAlias), markSep)
}
