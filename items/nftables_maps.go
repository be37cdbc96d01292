package items

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// NftMap is a named verdict map (nft's `map svc { type inet_service :
// verdict; elements = { 22 : accept, 80 : jump web } }`): a rule's Vmap
// looks a packet's field up in it and takes the element's verdict.
type NftMap struct {
	Name     string          `json:"name"`
	Type     string          `json:"type"` // the key: ipv4_addr, ipv6_addr, inet_service
	Interval bool            `json:"interval,omitempty"`
	Elements []NftMapElement `json:"elements,omitempty"`
}

// NftMapElement is a key of a verdict map and its verdict.
type NftMapElement struct {
	Key     string `json:"key"`              // an element as a set's (a prefix or range with Interval)
	Verdict string `json:"verdict"`          // accept, drop, return, jump, goto
	Target  string `json:"target,omitempty"` // the chain of jump and goto
}

// String is the element as nft writes it: "22 : jump web".
func (e NftMapElement) String() string {
	s := e.Key + " : " + e.Verdict
	if e.Target != "" {
		s += " " + e.Target
	}
	return s
}

// NftVmap is a rule's verdict map lookup (nft's `tcp dport vmap @svc`):
// the rule's verdict is the element of Map whose key holds the packet's
// field On; a packet no key holds goes on to the next rule.
type NftVmap struct {
	On  string `json:"on"`  // saddr, daddr (ipv4_addr, ipv6_addr maps), sport, dport (inet_service, with protocol tcp or udp)
	Map string `json:"map"` // the map's name
}

// NftVmapKeys are the fields a vmap looks up, with the key types each
// takes.
var NftVmapKeys = map[string][]string{
	"saddr": {"ipv4_addr", "ipv6_addr"}, "daddr": {"ipv4_addr", "ipv6_addr"},
	"sport": {"inet_service"}, "dport": {"inet_service"},
}

// set is the map's keys as a set (for their parsing and spelling).
func (m NftMap) set() NftSet {
	s := NftSet{Name: m.Name, Type: m.Type, Interval: m.Interval}
	for _, e := range m.Elements {
		s.Elements = append(s.Elements, e.Key)
	}
	return s
}

// canonicalMap spells a map's keys as the read-back does, in key order.
func canonicalMap(m NftMap) NftMap {
	type elem struct {
		key []byte
		e   NftMapElement
	}
	var els []elem
	for _, e := range m.Elements {
		if r, err := ParseNftElement(m.Type, m.Interval, e.Key); err == nil {
			e.Key = NftElementString(m.Type, r)
			els = append(els, elem{r.Lo, e})
		} else {
			els = append(els, elem{nil, e})
		}
	}
	slices.SortStableFunc(els, func(a, b elem) int { return bytes.Compare(a.key, b.key) })
	m.Elements = nil
	for _, e := range els {
		m.Elements = append(m.Elements, e.e)
	}
	return m
}

// CheckNftMapElement checks an element's key and verdict (not that its
// target chain exists).
func CheckNftMapElement(m NftMap, e NftMapElement) error {
	if err := CheckNftElement(m.Type, m.Interval, e.Key); err != nil {
		return err
	}
	switch e.Verdict {
	case "accept", "drop", "return":
		if e.Target != "" {
			return fmt.Errorf("element %s: a target is only for jump and goto", e.Key)
		}
	case "jump", "goto":
		if e.Target == "" {
			return fmt.Errorf("element %s: %s needs a target chain", e.Key, e.Verdict)
		}
	default:
		return fmt.Errorf("element %s: verdict %q is not accept, drop, return, jump or goto", e.Key, e.Verdict)
	}
	return nil
}

// nftMapElementsString lists elements as nft writes them.
func nftMapElementsString(els []NftMapElement) []string {
	var out []string
	for _, e := range els {
		out = append(out, e.String())
	}
	return out
}

// MapElementStrings lists the map's elements as nft writes them ("22 :
// accept"): equal strings are equal elements of canonical maps.
func (m NftMap) MapElementStrings() []string { return nftMapElementsString(m.Elements) }

// ParseNftMapElement reads back what NftMapElement.String wrote.
func ParseNftMapElement(s string) NftMapElement {
	key, rest, _ := strings.Cut(s, " : ")
	verdict, target, _ := strings.Cut(rest, " ")
	return NftMapElement{Key: key, Verdict: verdict, Target: target}
}

// CanonicalNftElement spells a valid element of a set (or map key) of
// typ as the read-back does.
func CanonicalNftElement(typ string, interval bool, e string) string {
	if r, err := ParseNftElement(typ, interval, e); err == nil {
		return NftElementString(typ, r)
	}
	return e
}
