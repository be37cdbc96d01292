package l3

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/nlattr"
)

// dumpAttempts is how often a dump is tried when the kernel reports that
// the table changed under it (NLM_F_DUMP_INTR).
const dumpAttempts = 5

// retryDump runs f until it returns something other than
// netlink.ErrDumpInterrupted, at most dumpAttempts times.
func retryDump(what string, f func() error) error {
	var err error
	for range dumpAttempts {
		if err = f(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("dumping %s: %w", what, err)
	}
	return nil
}

// rtextFilterSkipStats is RTEXT_FILTER_SKIP_STATS (linux/rtnetlink.h):
// a link dump without the counters. A kernel that does not know it
// ignores it.
const rtextFilterSkipStats = 1 << 3

// linkNames maps every interface index in the conn's namespace to its
// name: from a raw dump without the counters, of which it reads the index
// and the name of each link (the library's LinkList parsed each link
// whole: at 1000 links, a read-back's largest allocation).
func linkNames(conn rawOps) (map[int]string, error) {
	var names map[int]string
	err := retryDump("links", func() error {
		names = make(map[int]string, len(names))
		req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
		req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
		req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(rtextFilterSkipStats)))
		return conn.dumpEach(req, unix.RTM_NEWLINK, func(b []byte) {
			if len(b) < unix.SizeofIfInfomsg {
				return
			}
			if name, ok := nlattr.Find(b[unix.SizeofIfInfomsg:], unix.IFLA_IFNAME); ok {
				names[int(nl.DeserializeIfInfomsg(b).Index)] = nlattr.String(name)
			}
		})
	})
	return names, err
}

// ifIndexCache maps interface names to indexes for one route batch, so
// that a batch looks each device up once. It lives no longer than a batch:
// an interface can be renamed and another created under its name, and a
// remembered index would then put routes on the wrong interface. If the
// interface goes during the batch, the kernel answers ENODEV for the old
// index and the caller looks the name up again (refresh).
type ifIndexCache struct {
	conn rawOps
	idx  map[string]int
}

func (c *ifIndexCache) get(name string) (int, error) {
	if i, ok := c.idx[name]; ok {
		return i, nil
	}
	i, err := c.conn.ifIndex(name)
	if err != nil {
		return 0, err
	}
	if c.idx == nil {
		c.idx = make(map[string]int)
	}
	c.idx[name] = i
	return i, nil
}

// refresh forgets name and looks it up again.
func (c *ifIndexCache) refresh(name string) (int, error) {
	delete(c.idx, name)
	return c.get(name)
}
