package intent

import "strings"

// Ownership marks. netagent tells its own kernel objects from everyone
// else's by marks it writes itself: a link's alias "netagent" or
// "netagent:<alias>" (configurators/link), a chain's first rule and its jump
// carrying the comment "netagent" (configurators/firewall), and protocol 211
// on routes, rules, addresses and neighbours (configurators/l3), which no
// intent field can set. An intent must not be able to write a mark onto an
// object netagent did not create, or netagent would take it for its own and
// delete it later: the checks below refuse every intent value that would
// carry one.
const (
	// markAlias is the link alias mark, as configurators/link writes it.
	markAlias = "netagent"
	// markSep separates the mark from the intent's alias in a link alias.
	markSep = ":"
	// maxKernelAlias is the longest alias the kernel keeps (IFALIASZ - 1).
	maxKernelAlias = 255
	// MaxAlias is the longest alias an intent may give an interface: the
	// kernel's 255 bytes less the 9 of the mark "netagent:" that a link
	// netagent creates carries in front of it. Physical interfaces are held
	// to the same limit, so that an alias means the same on every kind.
	MaxAlias = maxKernelAlias - len(markAlias+markSep)
)

// carriesLinkMark reports whether a kernel alias would read as netagent's
// ownership mark.
func carriesLinkMark(alias string) bool {
	return alias == markAlias || strings.HasPrefix(alias, markAlias+markSep)
}

// ruleCarriesMark reports the index of a "--comment" argument whose value
// reads as netagent's chain mark ("netagent", or anything starting with
// it), or -1.
func ruleCarriesMark(args []string) int {
	for i, a := range args {
		if i > 0 && args[i-1] == "--comment" && strings.HasPrefix(a, markAlias) {
			return i
		}
	}
	return -1
}

// markedRule fails a rule that carries netagent's chain mark.
func (c *checker) markedRule(o Origin, args []string) {
	if i := ruleCarriesMark(args); i >= 0 {
		c.fail(o, "the comment %q is reserved: netagent marks its own chains and jumps with it", args[i])
	}
}
