package snapshot

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/netagent/netagent/internal/termsafe"
)

// Summary writes d as `netagent fleet snapshot` shows it: the namespace
// and its identity, how many objects of each sort it holds, then one
// line per link (ifindex, name, kind, MTU, state, master, parent and the
// kind's settings as the document has them, in compact JSON). A document
// comes from a host: every string is escaped for a terminal.
func (d *Document) Summary(w io.Writer) {
	netns := d.Netns
	if netns == "" {
		netns = "(the host's)"
	}
	fmt.Fprintf(w, "namespace %s, boot %s, nsid %s (snapshot version %d)\n", termsafe.String(netns),
		termsafe.String(d.Identity.BootID), termsafe.String(d.Identity.NsID), d.Version)
	tables := []string{}
	if d.Nftables != nil {
		for _, t := range d.Nftables.Tables {
			owner := ""
			if t.Owned != nil {
				owner = " (netagent's)"
			}
			tables = append(tables, termsafe.String(t.Family+" "+t.Name)+owner)
		}
	}
	fmt.Fprintf(w, "%d links, %d addresses, %d routes, %d rules, %d neighbours, iptables [%s], nftables tables [%s], %d state records\n",
		len(d.Links), len(d.Addresses), len(d.Routes), len(d.Rules), len(d.Neighbours),
		termsafe.String(strings.Join(slices.Sorted(maps.Keys(d.IPTables)), ", ")), strings.Join(tables, ", "), len(d.Records))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tNAME\tKIND\tMTU\tSTATE\tMASTER\tPARENT\tSETTINGS")
	for i := range d.Links {
		l := &d.Links[i]
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", l.Index, termsafe.String(l.Name), termsafe.String(l.Kind), l.MTU,
			l.state(), index(l.Master), index(l.Parent), termsafe.String(l.settings()))
	}
	tw.Flush()
}

func (l *Link) state() string {
	s := "down"
	if l.Up {
		s = "up"
	}
	if l.Carrier {
		s += ",carrier"
	}
	return s
}

func index(i int) string {
	if i == 0 {
		return "-"
	}
	return fmt.Sprint(i)
}

// summaryCommon are the link's fields the summary's columns show.
var summaryCommon = []string{"index", "name", "kind", "mtu", "up", "carrier", "master", "parent", "ethtool"}

// settings is what the link's document has beyond the summary's columns
// (the kind's settings, a veth's peer, a port's cost), compact JSON, "-"
// for nothing.
func (l *Link) settings() string {
	raw, _ := json.Marshal(l)
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	for _, k := range summaryCommon {
		delete(m, k)
	}
	if len(m) == 0 {
		return "-"
	}
	out, _ := json.Marshal(m) // keys sorted
	return string(out)
}
