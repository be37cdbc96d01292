package nftables

import (
	"bytes"
	"encoding/binary"
	"slices"

	"golang.org/x/sys/unix"
)

// The handles of the rules netagent's own batch adds come back in the
// batch's answers: an NFT_MSG_NEWRULE with NLM_F_ECHO has the kernel send
// the rule as committed (with its handle, in its chain) to the sender,
// with the request's sequence number, before the ack of the batch's last
// message. The kernel numbers a table's new rules, chains, sets, objects
// and flowtables from one counter as it takes the batch's messages in
// order (nf_tables_alloc_handle), so a run of rules added one after
// another into one table has handles one after another: only the first
// and the last of each run ask for their echo (echoWanted), the handles
// between are the first's plus their place, and the last's echo checks
// that (handlesAfter; a mismatch leaves the handles unknown, and the next
// Modify dumps them). With the handles the table had before the batch,
// they are the handles after it, and the next Modify needs no dump of
// them. A batch of 10k rules asks for two echoes, not 10k (each the rule
// again: 4.6 MB the kernel made and netagent read).

// newRuleType is the netlink type of NFT_MSG_NEWRULE.
const newRuleType = unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWRULE

// ruleEcho is the kernel's echo of a rule a batch added.
type ruleEcho struct {
	chain  string
	handle uint64
}

// maxEchoBytes bounds the rule messages of a batch whose echoes are
// asked for: the echoes wait in the socket's receive buffer until the
// batch's outcome is read (the commit runs in the send), which is sized
// for them. A larger batch is written without echoes; the next Modify
// dumps the rules' handles.
const maxEchoBytes = 16 << 20

// echoBytes is the size of the rule messages among msgs.
func echoBytes(msgs []message) int {
	n := 0
	for _, m := range msgs {
		if m.m.Header.Type == newRuleType {
			n += m.size()
		}
	}
	return n
}

// echoWanted says which of msgs (one batch, of ops) ask for their echo:
// the first and the last rule of each run (sameRun).
func echoWanted(msgs []message, ops []Op) []bool {
	want := make([]bool, len(msgs))
	for i := range msgs {
		if msgs[i].m.Header.Type == newRuleType {
			want[i] = i == 0 || !sameRun(msgs, ops, i-1) || i == len(msgs)-1 || !sameRun(msgs, ops, i)
		}
	}
	return want
}

// sameRun says whether msgs[i] and msgs[i+1] both add a rule to one
// table: the second's handle is the first's plus one.
func sameRun(msgs []message, ops []Op, i int) bool {
	a, b := &msgs[i], &msgs[i+1]
	ta, tb := &ops[a.op].Table, &ops[b.op].Table
	return a.m.Header.Type == newRuleType && b.m.Header.Type == newRuleType && ta.Family == tb.Family && ta.Table == tb.Table
}

// parseRuleEcho decodes an echoed or dumped rule (after its nfgenmsg):
// its chain and handle, ok false when either is missing.
func parseRuleEcho(b []byte) (ruleEcho, bool) {
	e, has := parseRule(b)
	return e, has && e.chain != ""
}

// parseRule decodes a rule message's chain and, when it has one (an echo,
// a dump; not a request), its handle.
func parseRule(b []byte) (e ruleEcho, hasHandle bool) {
	err := attrs(b, func(typ uint16, v []byte) error {
		switch {
		case typ == unix.NFTA_RULE_CHAIN && len(v) > 0:
			e.chain = string(bytes.TrimRight(v, "\x00"))
		case typ == unix.NFTA_RULE_HANDLE && len(v) >= 8:
			e.handle, hasHandle = binary.BigEndian.Uint64(v), true
		}
		return nil
	})
	return e, err == nil && hasHandle
}

// handlesAfter returns the handles of each chain's rules after a batch
// of ops (marshalled as msgs, in batch order) committed on a table whose
// rules had the handles before (nil when ops create it), given the
// echoes of added rules by message index (those echoWanted asked for);
// ok false when they are not known for sure (an echo missing or not
// where its run puts it, a handle of an op not in the chain).
func handlesAfter(before map[string][]uint64, ops []Op, msgs []message, echoes map[int]ruleEcho) (map[string][]uint64, bool) {
	out := make(map[string][]uint64, len(before))
	for c, h := range before {
		out[c] = slices.Clone(h)
	}
	created := -1                   // the op whose table this batch created
	run, runHandle := -1, uint64(0) // the first rule of the current run, and its handle
	for i, m := range msgs {
		op := ops[m.op]
		switch op.Kind {
		case OpCreateTable:
			if created != m.op {
				created, out = m.op, map[string][]uint64{}
			}
		case OpDeleteTable:
			out = map[string][]uint64{}
		case OpFlushChain:
			out[op.Chain.Name] = nil
		case OpDeleteChain:
			delete(out, op.Chain.Name)
		case OpDeleteRule:
			h := out[op.Chain.Name]
			at := slices.Index(h, op.Handle)
			if at < 0 {
				return nil, false
			}
			out[op.Chain.Name] = slices.Delete(h, at, at+1)
		}
		if m.m.Header.Type != newRuleType {
			continue
		}
		e, ok := echoes[i]
		if i > 0 && sameRun(msgs, ops, i-1) { // the run's first is msgs[run]
			inRun := runHandle + uint64(i-run)
			if !ok {
				if e, _ = parseRule(m.m.Data[min(4, len(m.m.Data)):]); e.chain == "" {
					return nil, false
				}
				e.handle = inRun
			} else if e.handle != inRun {
				return nil, false
			}
		} else if !ok {
			return nil, false
		} else {
			run, runHandle = i, e.handle
		}
		if op.Kind == OpAddRule && e.chain != op.Chain.Name {
			return nil, false
		}
		h := out[e.chain]
		if op.Kind == OpAddRule && op.Handle != 0 { // inserted before the rule of op.Handle
			at := slices.Index(h, op.Handle)
			if at < 0 {
				return nil, false
			}
			out[e.chain] = slices.Insert(h, at, e.handle)
		} else {
			out[e.chain] = append(h, e.handle)
		}
	}
	return out, true
}
