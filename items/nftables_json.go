package items

import (
	"encoding/json"
	"strconv"

	"github.com/netagent/netagent/internal/jsonstr"
)

// AppendJSON appends t as json.Marshal writes it, its chains' rules and
// its sets' elements encoded by hand: an intent's version is recorded on
// every apply, and encoding/json's reflection over 10k rules was most of
// a one-change apply's record. Priorities and maps go through
// json.Marshal (few, and their errors are json.Marshal's).
// TestNftTableAppendJSON compares the two; TestNftAppendJSONCoversFields
// fails when a field is added to a type here and not to its encoder.
func (t *NftTable) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"family":`...)
	b = jsonstr.Append(b, t.Family)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, t.Table)
	if len(t.Chains) > 0 {
		b = append(b, `,"chains":[`...)
		for i := range t.Chains {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = t.Chains[i].appendJSON(b); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if len(t.Sets) > 0 {
		b = append(b, `,"sets":[`...)
		for i := range t.Sets {
			if i > 0 {
				b = append(b, ',')
			}
			b = t.Sets[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	if len(t.Maps) > 0 {
		m, err := json.Marshal(t.Maps)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"maps":`...), m...)
	}
	return append(b, '}'), nil
}

func (c *NftChain) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, c.Name)
	b = appendMember(b, `,"type":`, c.Type)
	b = appendMember(b, `,"hook":`, c.Hook)
	if c.Priority != nil {
		p, err := json.Marshal(c.Priority)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"priority":`...), p...)
	}
	b = appendMember(b, `,"policy":`, c.Policy)
	b = appendMember(b, `,"device":`, c.Device)
	if len(c.Rules) > 0 {
		b = append(b, `,"rules":[`...)
		for i := range c.Rules {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.Rules[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func (r *NftRule) appendJSON(b []byte) []byte {
	b = append(b, '{')
	start := len(b)
	member := func(name string) {
		if len(b) > start {
			b = append(b, ',')
		}
		b = append(b, name...)
	}
	str := func(name, v string) {
		if v != "" {
			member(name)
			b = jsonstr.Append(b, v)
		}
	}
	str(`"iifname":`, r.IIfName)
	str(`"oifname":`, r.OIfName)
	str(`"saddr":`, r.Saddr)
	str(`"daddr":`, r.Daddr)
	str(`"protocol":`, r.Protocol)
	str(`"sport":`, r.Sport)
	str(`"dport":`, r.Dport)
	str(`"icmpType":`, r.ICMPType)
	if len(r.CtState) > 0 {
		member(`"ctState":[`)
		for i, s := range r.CtState {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, s)
		}
		b = append(b, ']')
	}
	if r.Mark != nil {
		member(`"mark":`)
		b = strconv.AppendUint(b, uint64(*r.Mark), 10)
	}
	if r.Vmap != nil {
		member(`"vmap":{"on":`)
		b = jsonstr.Append(b, r.Vmap.On)
		b = jsonstr.Append(append(b, `,"map":`...), r.Vmap.Map)
		b = append(b, '}')
	}
	if l := r.Limit; l != nil {
		member(`"limit":{"rate":`)
		b = strconv.AppendUint(b, l.Rate, 10)
		b = jsonstr.Append(append(b, `,"per":`...), l.Per)
		if l.Burst != 0 {
			b = strconv.AppendUint(append(b, `,"burst":`...), uint64(l.Burst), 10)
		}
		if l.Over {
			b = append(b, `,"over":true`...)
		}
		b = append(b, '}')
	}
	if r.Counter {
		member(`"counter":true`)
	}
	if l := r.Log; l != nil {
		member(`"log":{`)
		if l.Prefix != "" {
			b = jsonstr.Append(append(b, `"prefix":`...), l.Prefix)
		}
		if l.Level != "" {
			if l.Prefix != "" {
				b = append(b, ',')
			}
			b = jsonstr.Append(append(b, `"level":`...), l.Level)
		}
		b = append(b, '}')
	}
	if r.Masquerade {
		member(`"masquerade":true`)
	}
	str(`"snat":`, r.SNAT)
	str(`"dnat":`, r.DNAT)
	if r.Redirect != nil {
		member(`"redirect":{`)
		if r.Redirect.Port != "" {
			b = jsonstr.Append(append(b, `"port":`...), r.Redirect.Port)
		}
		b = append(b, '}')
	}
	if r.Reject != nil {
		member(`"reject":{`)
		if r.Reject.With != "" {
			b = jsonstr.Append(append(b, `"with":`...), r.Reject.With)
		}
		b = append(b, '}')
	}
	str(`"verdict":`, r.Verdict)
	str(`"target":`, r.Target)
	return append(b, '}')
}

func (s *NftSet) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, s.Name)
	b = jsonstr.Append(append(b, `,"type":`...), s.Type)
	if s.Interval {
		b = append(b, `,"interval":true`...)
	}
	b = appendMember(b, `,"timeout":`, s.Timeout)
	if len(s.Elements) > 0 {
		b = append(b, `,"elements":[`...)
		for i, e := range s.Elements {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, e)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendMember appends the member name (`,"type":`) and s, unless s is
// empty (omitempty).
func appendMember(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonstr.Append(append(b, name...), s)
}
