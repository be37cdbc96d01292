// Package configurators puts the configurator packages together for one
// target network namespace: NewRegistry registers every item type's
// configurator, and ReadBack builds a current-state graph from the
// kernel, as a restarted agent (or `netagent show`) needs it.
//
//	package        item types                          read back
//	-------        ----------                          ---------
//	link           interface, port                     link (external), interface, port
//	l3             address, route, rule, neighbor      the owned ones (rtnetlink protocol 211, ...)
//	firewall       iptables-chain, sysctl              the owned ones (state under stateDir)
//
// Each package marks what it creates in the kernel and reads back only its
// own objects (plus, for links, the external link items that physical
// interfaces and carrier-dependent routes need); see each package's doc.
package configurators
