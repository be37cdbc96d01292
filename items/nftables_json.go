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
	var err error // a priority's, the first
	b = jsonstr.AppendList(b, `,"chains":[`, t.Chains, func(c *NftChain, b []byte) []byte {
		b, cerr := c.appendJSON(b)
		if err == nil {
			err = cerr
		}
		return b
	})
	if err != nil {
		return nil, err
	}
	b = jsonstr.AppendList(b, `,"sets":[`, t.Sets, (*NftSet).appendJSON)
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
	b = jsonstr.AppendMember(b, `,"type":`, c.Type)
	b = jsonstr.AppendMember(b, `,"hook":`, c.Hook)
	if c.Priority != nil {
		p, err := json.Marshal(c.Priority)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"priority":`...), p...)
	}
	b = jsonstr.AppendMember(b, `,"policy":`, c.Policy)
	b = jsonstr.AppendMember(b, `,"device":`, c.Device)
	b = jsonstr.AppendList(b, `,"rules":[`, c.Rules, (*NftRule).appendJSON)
	return append(b, '}'), nil
}

func (r *NftRule) appendJSON(b []byte) []byte {
	o := jsonstr.OpenObject(b)
	o.String(`"iifname":`, r.IIfName)
	o.String(`"oifname":`, r.OIfName)
	o.String(`"saddr":`, r.Saddr)
	o.String(`"daddr":`, r.Daddr)
	o.String(`"protocol":`, r.Protocol)
	o.String(`"sport":`, r.Sport)
	o.String(`"dport":`, r.Dport)
	o.String(`"icmpType":`, r.ICMPType)
	if len(r.CtState) > 0 {
		o.Member(`"ctState":`)
		o.B = jsonstr.AppendList(o.B, `[`, r.CtState, func(s *string, b []byte) []byte { return jsonstr.Append(b, *s) })
	}
	if r.Mark != nil {
		o.Member(`"mark":`)
		o.B = strconv.AppendUint(o.B, uint64(*r.Mark), 10)
	}
	if v := r.Vmap; v != nil {
		o.Member(`"vmap":{"on":`)
		o.B = jsonstr.Append(o.B, v.On)
		o.B = append(jsonstr.Append(append(o.B, `,"map":`...), v.Map), '}')
	}
	if l := r.Limit; l != nil {
		o.Member(`"limit":{"rate":`)
		o.B = strconv.AppendUint(o.B, l.Rate, 10)
		o.B = jsonstr.Append(append(o.B, `,"per":`...), l.Per)
		if l.Burst != 0 {
			o.B = strconv.AppendUint(append(o.B, `,"burst":`...), uint64(l.Burst), 10)
		}
		if l.Over {
			o.B = append(o.B, `,"over":true`...)
		}
		o.B = append(o.B, '}')
	}
	if r.Counter {
		o.Member(`"counter":true`)
	}
	if l := r.Log; l != nil {
		o.Member(`"log":`)
		lo := jsonstr.OpenObject(o.B)
		lo.String(`"prefix":`, l.Prefix)
		lo.String(`"level":`, l.Level)
		o.B = lo.Close()
	}
	if r.Masquerade {
		o.Member(`"masquerade":true`)
	}
	o.String(`"snat":`, r.SNAT)
	o.String(`"dnat":`, r.DNAT)
	if r.Redirect != nil {
		o.Member(`"redirect":{`)
		o.B = append(jsonstr.AppendMember(o.B, `"port":`, r.Redirect.Port), '}')
	}
	if r.Reject != nil {
		o.Member(`"reject":{`)
		o.B = append(jsonstr.AppendMember(o.B, `"with":`, r.Reject.With), '}')
	}
	o.String(`"verdict":`, r.Verdict)
	o.String(`"target":`, r.Target)
	return o.Close()
}

func (s *NftSet) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, s.Name)
	b = jsonstr.Append(append(b, `,"type":`...), s.Type)
	if s.Interval {
		b = append(b, `,"interval":true`...)
	}
	b = jsonstr.AppendMember(b, `,"timeout":`, s.Timeout)
	b = jsonstr.AppendList(b, `,"elements":[`, s.Elements, func(e *string, b []byte) []byte { return jsonstr.Append(b, *e) })
	return append(b, '}')
}
