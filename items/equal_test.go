package items

import (
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// A mutation changes one leaf of a fresh item, found by its path of field
// names and slice indexes from the item's struct.
type mutation struct {
	path  string
	apply func(v reflect.Value)
	at    []step
}

// step is a field index, or a slice index when slice is true.
type step struct {
	index int
	slice bool
}

var (
	addrType   = reflect.TypeFor[netip.Addr]()
	prefixType = reflect.TypeFor[netip.Prefix]()
	timeType   = reflect.TypeFor[time.Time]()
)

// mutations lists, for every leaf reachable from v (a struct), a change
// that makes the value different. zero collects the paths of zero leaves.
func mutations(v reflect.Value, path string, at []step, zero *[]string) []mutation {
	var ms []mutation
	for i := range v.NumField() {
		f := v.Field(i)
		p := path + "." + v.Type().Field(i).Name
		ms = append(ms, mutationsOf(f, p, append(slices.Clone(at), step{index: i}), zero)...)
	}
	return ms
}

func mutationsOf(f reflect.Value, p string, at []step, zero *[]string) []mutation {
	leaf := func(apply func(reflect.Value)) []mutation {
		if f.IsZero() {
			*zero = append(*zero, p)
		}
		return []mutation{{path: p, at: at, apply: apply}}
	}
	switch {
	case f.Type() == timeType:
		return leaf(func(v reflect.Value) { v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Second))) })
	case f.Type() == addrType:
		return leaf(func(v reflect.Value) { v.Set(reflect.ValueOf(v.Interface().(netip.Addr).Next())) })
	case f.Type() == prefixType:
		return leaf(func(v reflect.Value) {
			p := v.Interface().(netip.Prefix)
			v.Set(reflect.ValueOf(netip.PrefixFrom(p.Addr(), p.Bits()-1)))
		})
	}
	switch f.Kind() {
	case reflect.String:
		return leaf(func(v reflect.Value) { v.SetString(v.String() + "x") })
	case reflect.Bool:
		return leaf(func(v reflect.Value) { v.SetBool(!v.Bool()) })
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return leaf(func(v reflect.Value) { v.SetInt(v.Int() + 1) })
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return leaf(func(v reflect.Value) { v.SetUint(v.Uint() + 1) })
	case reflect.Struct:
		return mutations(f, p, at, zero)
	case reflect.Pointer:
		return pointerMutations(f, p, at, zero)
	case reflect.Interface: // KindAttrs: a pointer to a struct, or nil
		if f.IsNil() {
			return nil
		}
		ms := []mutation{{path: p + "=nil", at: at, apply: func(v reflect.Value) { v.SetZero() }}}
		return append(ms, mutationsOf(f.Elem().Elem(), p, at, zero)...)
	case reflect.Slice:
		return sliceMutations(f, p, at, zero)
	}
	panic("no mutation for " + p + " of kind " + f.Kind().String())
}

// pointerMutations sets a pointer to nil (or a nil one to a zero value) and
// mutates every leaf behind it.
func pointerMutations(f reflect.Value, p string, at []step, zero *[]string) []mutation {
	if f.IsNil() {
		return []mutation{{path: p + "=new", at: at, apply: func(v reflect.Value) { v.Set(reflect.New(v.Type().Elem())) }}}
	}
	ms := []mutation{{path: p + "=nil", at: at, apply: func(v reflect.Value) { v.SetZero() }}}
	for _, m := range mutationsOf(f.Elem(), p, at, zero) {
		if len(m.at) == len(at) { // a leaf behind the pointer: mutate the pointee
			apply := m.apply
			m.apply = func(v reflect.Value) { apply(v.Elem()) }
		}
		ms = append(ms, m)
	}
	return ms
}

// sliceMutations appends a copy of the first element and mutates the first
// element's leaves.
func sliceMutations(f reflect.Value, p string, at []step, zero *[]string) []mutation {
	if f.Len() == 0 {
		*zero = append(*zero, p)
		return nil
	}
	ms := []mutation{{path: p + "+append", at: at, apply: func(v reflect.Value) { v.Set(reflect.Append(v, v.Index(0))) }}}
	return append(ms, mutationsOf(f.Index(0), p+"[0]", append(slices.Clone(at), step{index: 0, slice: true}), zero)...)
}

// locate walks at from the item's struct, through pointers.
func locate(item dg.Item, at []step) reflect.Value {
	v := reflect.ValueOf(item).Elem()
	for _, s := range at {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		if s.slice {
			v = v.Index(s.index)
		} else {
			v = v.Field(s.index)
		}
	}
	return v
}

func TestEqualIsReflexive(t *testing.T) {
	for name, fresh := range samples() {
		a, b := fresh(), fresh()
		if !a.Equal(a) || !a.Equal(b) || !b.Equal(a) {
			t.Errorf("%s: a fresh copy is not Equal", name)
		}
	}
}

func TestEqualSeesEveryField(t *testing.T) {
	for name, fresh := range samples() {
		var zero []string
		ms := mutations(reflect.ValueOf(fresh()).Elem(), name, nil, &zero)
		if len(zero) > 0 {
			t.Errorf("%s: sample leaves zero fields %v: give them values so that Equal is tested on them", name, zero)
		}
		for _, m := range ms {
			changed := fresh()
			m.apply(locate(changed, m.at))
			if changed.Equal(fresh()) || fresh().Equal(changed) {
				t.Errorf("%s: Equal does not see a change of %s", name, m.path)
			}
		}
	}
}

func TestEqualRejectsOtherItems(t *testing.T) {
	all := samples()
	for name, fresh := range all {
		item := fresh()
		for other, otherFresh := range all {
			if reflect.TypeOf(item) != reflect.TypeOf(otherFresh()) && item.Equal(otherFresh()) {
				t.Errorf("%s Equal %s", name, other)
			}
		}
		typedNil := reflect.Zero(reflect.TypeOf(item)).Interface().(dg.Item)
		if item.Equal(typedNil) || item.Equal(nil) {
			t.Errorf("%s Equal nil", name)
		}
	}
}

func TestEqualNormalizesIdentity(t *testing.T) {
	pairs := []struct {
		name string
		a, b dg.Item
	}{
		{"route table 0 is main",
			&Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Dev: "eth0"},
			&Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Dev: "eth0", Table: TableMain}},
		{"ipv6 route metric 0 is 1024",
			&Route{Dst: netip.MustParsePrefix("::/0"), Dev: "eth0"},
			&Route{Dst: netip.MustParsePrefix("::/0"), Dev: "eth0", Metric: 1024}},
		{"rule mark without mask",
			&Rule{Family: FamilyIPv4, Mark: 1, Table: 100},
			&Rule{Family: FamilyIPv4, Mark: 1, Mask: 0xffffffff, Table: 100}},
		{"chain position 0 is 1",
			&IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "C", JumpFrom: "POSTROUTING"},
			&IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "C", JumpFrom: "POSTROUTING", Position: 1}},
		{"sysctl value whitespace",
			&Sysctl{Key: "net.ipv4.tcp_rmem", Value: "4096 131072 6291456"},
			&Sysctl{Key: "net.ipv4.tcp_rmem", Value: "4096\t131072\t6291456\n"}},
		{"sysctl value with a leading zero, as the kernel reads it",
			&Sysctl{Key: "net.ipv4.conf.all.rp_filter", Value: "02"},
			&Sysctl{Key: "net.ipv4.conf.all.rp_filter", Value: "2"}},
		{"sysctl octal and hexadecimal values",
			&Sysctl{Key: "net.ipv4.ip_local_port_range", Value: "0x8000 010"},
			&Sysctl{Key: "net.ipv4.ip_local_port_range", Value: "32768 8"}},
	}
	for _, p := range pairs {
		if !p.a.Equal(p.b) || !p.b.Equal(p.a) {
			t.Errorf("%s: not Equal", p.name)
		}
		if p.a.Name() != p.b.Name() {
			t.Errorf("%s: names differ: %q, %q", p.name, p.a.Name(), p.b.Name())
		}
	}
}

// Values the kernel does not read as integers stay as written, and
// different integers stay different.
func TestNormalizeSysctlValue(t *testing.T) {
	for in, want := range map[string]string{
		"02": "2", "010": "8", "0x1F": "31", "-1": "-1", "-0": "0", "0": "0", "00": "0",
		"cubic reno": "cubic reno", "08": "08", "0x": "0x", "1_000": "1_000", "+1": "+1",
		"::": "::", "4096\t87380 6291456": "4096 87380 6291456",
	} {
		if got := NormalizeSysctlValue(in); got != want {
			t.Errorf("NormalizeSysctlValue(%q) = %q, want %q", in, got, want)
		}
	}
	if (&Sysctl{Key: "k", Value: "010"}).Equal(&Sysctl{Key: "k", Value: "10"}) {
		t.Error(`"010" (8) equals "10"`)
	}
}
