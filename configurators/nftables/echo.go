package nftables

import (
	"bytes"
	"encoding/binary"
	"slices"

	"golang.org/x/sys/unix"
)

// The handles of the rules netagent's own batch adds come back in the
// batch's answers: each NFT_MSG_NEWRULE of it carries NLM_F_ECHO, and the
// kernel sends the rule as committed (with its handle, in its chain) to
// the sender, with the request's sequence number, before the ack of the
// batch's last message. With the handles the table had before the batch,
// they are the handles after it, and the next Modify needs no dump of
// them.

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

// parseRuleEcho decodes an echoed or dumped rule (after its nfgenmsg):
// its chain and handle, ok false when either is missing.
func parseRuleEcho(b []byte) (ruleEcho, bool) {
	var e ruleEcho
	var has bool
	err := attrs(b, func(typ uint16, v []byte) error {
		switch {
		case typ == unix.NFTA_RULE_CHAIN && len(v) > 0:
			e.chain = string(bytes.TrimRight(v, "\x00"))
		case typ == unix.NFTA_RULE_HANDLE && len(v) >= 8:
			e.handle, has = binary.BigEndian.Uint64(v), true
		}
		return nil
	})
	return e, err == nil && has && e.chain != ""
}

// handlesAfter returns the handles of each chain's rules after a batch
// of ops (marshalled as msgs, in batch order) committed on a table whose
// rules had the handles before (nil when ops create it), given the echo
// of each added rule by message index; ok false when they are not known
// for sure (an echo missing, a handle of an op not in the chain).
func handlesAfter(before map[string][]uint64, ops []Op, msgs []message, echoes map[int]ruleEcho) (map[string][]uint64, bool) {
	out := make(map[string][]uint64, len(before))
	for c, h := range before {
		out[c] = slices.Clone(h)
	}
	created := -1 // the op whose table this batch created
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
		if !ok || op.Kind == OpAddRule && e.chain != op.Chain.Name {
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
