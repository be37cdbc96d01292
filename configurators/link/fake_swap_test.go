package link

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

var permC = net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0x0c}

// swapScene is a fake whose NICs (eth0 up, eth1, ... : perms[i] is the
// permanent address of eth<i>) enumerated differently from the intent:
// the intent names "eth<i>" the NIC now called names[i].
type swapScene struct {
	fakeEnv
	index  map[string]int // the NICs' ifindexes by the names they came up with
	intent []dg.Item
}

// newSwapScene plugs in len(perms) NICs eth0, eth1, ... and the intent
// that gives name want[i] to the NIC that came up as eth<i>.
func newSwapScene(t *testing.T, perms []net.HardwareAddr, want []string) swapScene {
	s := swapScene{fakeEnv: newFakeEnv(t), index: map[string]int{}}
	for i, perm := range perms {
		name := fmt.Sprintf("eth%d", i)
		s.index[name] = s.f.AddMatchableNIC(name, perm, "e1000", "").Attrs().Index
		s.intent = append(s.intent, matched(want[i], items.NICMatch{PermanentMAC: perm}))
	}
	if err := s.f.LinkSetUp(s.link("eth0")); err != nil {
		t.Fatal(err)
	}
	s.f.Take()
	return s
}

// swapOfTwo: the intent's eth0 is the NIC that came up as eth1, and its
// eth1 the one that came up as eth0.
func swapOfTwo(t *testing.T) swapScene {
	return newSwapScene(t, []net.HardwareAddr{permA, permB}, []string{"eth1", "eth0"})
}

// rotationOfThree: eth0 became eth1, eth1 eth2, eth2 eth0.
func rotationOfThree(t *testing.T) swapScene {
	return newSwapScene(t, []net.HardwareAddr{permA, permB, permC}, []string{"eth1", "eth2", "eth0"})
}

// names is the fake's NIC names by ifindex.
func (s swapScene) names() map[int]string {
	out := map[int]string{}
	for idx, fl := range s.f.links {
		if fl.link.Attrs().Name != "lo" {
			out[idx] = fl.link.Attrs().Name
		}
	}
	return out
}

// wantNames checks that each NIC that came up as names' key is called
// its value now.
func (s swapScene) wantNames(what string, names map[string]string) {
	s.t.Helper()
	want := map[int]string{}
	for came, now := range names {
		want[s.index[came]] = now
	}
	if got := s.names(); !maps.Equal(got, want) {
		s.t.Errorf("%s: NICs by ifindex %v, want %v (came up as %v)", what, got, want, s.index)
	}
}

// intentNames is the names the intent gives the NICs, by the name each
// came up with.
func (s swapScene) intentNames() map[string]string {
	out := map[string]string{}
	for i, it := range s.intent {
		out[fmt.Sprintf("eth%d", i)] = it.(*items.Interface).IfName
	}
	return out
}

// bootNames is every NIC by the name it came up with.
func (s swapScene) bootNames() map[string]string {
	out := map[string]string{}
	for came := range s.index {
		out[came] = came
	}
	return out
}

// wantOriginals checks that the record holds, for each interface of the
// intent, the name its NIC came up with (never a temporary one), and
// nothing else.
func (s swapScene) wantOriginals() {
	s.t.Helper()
	found, err := s.f.ReadFound(s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	got := map[string]string{}
	for key, o := range found {
		if o.Name == nil {
			got[key] = "(none)"
			continue
		}
		got[key] = *o.Name
	}
	want := map[string]string{}
	for came, now := range s.intentNames() {
		want[now] = came
	}
	if !maps.Equal(got, want) {
		s.t.Errorf("recorded original names %v, want %v", got, want)
	}
}

// killAfter makes every kernel write after the first n fail, as after a
// kill of the agent (n < 0: none fails).
func (s swapScene) killAfter(n int) {
	count := 0
	s.f.fail = func(op, name string) error {
		if count++; n >= 0 && count > n {
			return errKilled
		}
		return nil
	}
}

// tempRenames lists the writes that renamed a NIC to a temporary name.
func tempRenames(writes []string) []string {
	var out []string
	for _, w := range writes {
		if f := strings.Fields(w); f[0] == "name" && isTempName(f[2]) {
			out = append(out, w)
		}
	}
	return out
}

// Two NICs whose names are swapped relative to the intent get the
// intent's names through a temporary name (one, for the NIC in the way),
// keep their ifindexes, record the names they came up with, and a second
// apply writes nothing; leaving the intent gives both names back, again
// through a temporary name.
func TestMatchSwapOfTwo(t *testing.T) {
	s := swapOfTwo(t)
	writes := s.converge(s.intent...)
	if tmp := tempRenames(writes); len(tmp) != 1 {
		t.Errorf("writes %v: want one rename to a temporary name, got %v", writes, tmp)
	}
	s.wantNames("after the apply", s.intentNames())
	s.wantOriginals()
	if st := s.apply(); st.Err != nil {
		t.Fatalf("leaving the intent: %v\n%s", st.Err, st.OperationLog)
	}
	if tmp := tempRenames(s.f.Take()); len(tmp) != 1 {
		t.Errorf("giving the names back: want one rename to a temporary name, got %v", tmp)
	}
	s.wantNames("after leaving the intent", s.bootNames())
	if found, _ := s.f.ReadFound(s.dir); len(found) != 0 {
		t.Errorf("records after leaving the intent: %v", found)
	}
}

// A rotation of three names converges the same way, and is given back.
func TestMatchRotationOfThree(t *testing.T) {
	s := rotationOfThree(t)
	s.converge(s.intent...)
	s.wantNames("after the apply", s.intentNames())
	s.wantOriginals()
	if st := s.apply(); st.Err != nil {
		t.Fatalf("leaving the intent: %v\n%s", st.Err, st.OperationLog)
	}
	s.wantNames("after leaving the intent", s.bootNames())
	if found, _ := s.f.ReadFound(s.dir); len(found) != 0 {
		t.Errorf("records after leaving the intent: %v", found)
	}
}

// The plan predicts no failure for a swap; a holder of the name that no
// interface of the intent matches is still refused, naming both, and
// nothing is renamed (by plan and apply), also when the intent has other
// matched interfaces.
func TestMatchSwapUnmatchedHolder(t *testing.T) {
	s := swapOfTwo(t)
	if clashes, err := s.f.Clashes(s.dir, dg.New("intended", s.intent...)); err != nil || len(clashes) != 0 {
		t.Errorf("plan of the swap: %v, %v; want no failure", clashes, err)
	}
	lan := matched("eth0", items.NICMatch{PermanentMAC: permB})       // eth0 is the NIC eth1: eth0 is in the way
	other := matched("lan9", items.NICMatch{PermanentMAC: permC})     // matches nothing
	byDriver := matched("lan8", items.NICMatch{Driver: "virtio_net"}) // nor this
	intent := dg.New("intended", lan, other, byDriver)
	clashes, err := s.f.Clashes(s.dir, intent)
	if err != nil || !errors.Is(clashes[dg.Ref(lan)], ErrNameTaken) {
		t.Fatalf("plan: %v, %v; want %s refused", clashes, err, dg.Ref(lan))
	}
	st := s.apply(lan, other, byDriver)
	if !errors.Is(st.Err, ErrNameTaken) {
		t.Fatalf("apply: %v, want ErrNameTaken", st.Err)
	}
	for _, name := range []string{"is eth1", "eth0 name is another link's"} {
		if !strings.Contains(st.Err.Error(), name) {
			t.Errorf("error %q does not name %q", st.Err, name)
		}
	}
	if w := s.f.Take(); len(w) != 0 {
		t.Errorf("writes %v, want none", w)
	}
	s.wantNames("after the refusal", s.bootNames())
}

// An apply killed after any kernel write of a swap (or a rotation) is
// repaired by the next apply: the NICs get the intent's names, and the
// records hold the names they came up with, never a temporary name; the
// give-back, killed after any of its writes, is repaired the same way.
func TestMatchSwapKilled(t *testing.T) {
	for _, scene := range []struct {
		name string
		make func(*testing.T) swapScene
	}{{"two", swapOfTwo}, {"three", rotationOfThree}} {
		total := len(scene.make(t).converge(scene.make(t).intent...))
		for n := range total {
			t.Run(fmt.Sprintf("%s/apply killed after %d of %d writes", scene.name, n, total), func(t *testing.T) {
				s := scene.make(t)
				s.killAfter(n)
				if st := s.apply(s.intent...); st.Err == nil {
					t.Fatalf("the killed apply did not fail: %s", st.OperationLog)
				}
				s.killAfter(-1)
				s.converge(s.intent...)
				s.wantNames("after the repair", s.intentNames())
				s.wantOriginals()
				s.apply()
				s.wantNames("after leaving the intent", s.bootNames())
			})
		}
		s := scene.make(t)
		s.converge(s.intent...)
		s.apply()
		giveBack := len(s.f.Take())
		for n := range giveBack {
			t.Run(fmt.Sprintf("%s/give-back killed after %d of %d writes", scene.name, n, giveBack), func(t *testing.T) {
				s := scene.make(t)
				s.converge(s.intent...)
				s.killAfter(n)
				s.apply()
				s.killAfter(-1)
				if st := s.apply(); st.Err != nil {
					t.Fatalf("repairing the give-back: %v\n%s", st.Err, st.OperationLog)
				}
				s.wantNames("after the repair", s.bootNames())
				if found, _ := s.f.ReadFound(s.dir); len(found) != 0 {
					t.Errorf("records after the repair: %v", found)
				}
				if names := slices.Collect(maps.Values(s.names())); slices.ContainsFunc(names, isTempName) {
					t.Errorf("a temporary name is left: %v", names)
				}
			})
		}
	}
}

// A revert's give-back (GiveBackRenamed) of the names a swap gave: both
// NICs get the names they came up with and nothing stays recorded; a NIC
// an apply killed at its temporary name gets its name back as well,
// unless an interface that stays matches it.
func TestGiveBackRenamed(t *testing.T) {
	s := swapOfTwo(t)
	s.converge(s.intent...)
	if _, err := s.kernel().giveBackRenamed(dg.New("kept"), []string{"eth0", "eth1"}); err != nil {
		t.Fatal(err)
	}
	s.wantNames("after the give-back", s.bootNames())
	if found, _ := s.f.ReadFound(s.dir); len(found) != 0 {
		t.Errorf("records after the give-back: %v", found)
	}

	s = swapOfTwo(t)
	s.killAfter(2) // the first NIC in the way is out of it, the other not renamed yet
	s.apply(s.intent...)
	s.killAfter(-1)
	var tmp string
	for _, name := range s.names() {
		if isTempName(name) {
			tmp = name
		}
	}
	if tmp == "" {
		t.Fatalf("killed after 2 writes: no NIC at a temporary name: %v", s.names())
	}
	if given, err := s.kernel().giveBackRenamed(dg.New("kept", s.intent...), nil); err != nil || len(given) != 0 {
		t.Errorf("a NIC in transit that a kept interface matches was given back: %v, %v", given, err)
	}
	if given, err := s.kernel().giveBackRenamed(dg.New("kept"), nil); err != nil || !slices.Equal(given, []string{tmp}) {
		t.Errorf("give-back of the NIC in transit: %v, %v; want %s", given, err, tmp)
	}
	s.wantNames("after the give-back", s.bootNames())
}
