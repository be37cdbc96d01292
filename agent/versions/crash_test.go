package versions

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/store"
)

const crashWriterEnv = "NETAGENT_VERSIONS_CRASH_WRITER"

// crashWriter is the child of TestKillMidWrite: it writes versions of four
// intents of 20k routes in turn (each write a new intent, three kept)
// into the state directory named by the environment and prints each
// number once its write returned, until it is killed.
func crashWriter(t *testing.T, dir string) {
	var vs []Version
	for salt := range 4 {
		in, err := intent.Parse(routesDoc(20_000, salt))
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewParsed(fmt.Sprintf("salt %d", salt), map[string]*intent.Intent{"r.json": in})
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	s := Open(dir, 3)
	cur, _ := s.Current()
	i := number(cur)
	fmt.Println("ready")
	for ; ; i++ {
		v, _, err := s.Write(vs[i%4], Any)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(v.Number)
	}
}

// A writer killed (SIGKILL) at any point of a write leaves the previous
// version or the new one: the kept versions are consecutive, each
// readable with its intent matching its digest; every write that
// returned is there; and the next write goes on from the newest.
func TestKillMidWrite(t *testing.T) {
	if dir := os.Getenv(crashWriterEnv); dir != "" {
		crashWriter(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("re-runs the test binary")
	}
	dir := t.TempDir()
	acked := 0
	for round := range 8 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillMidWrite$")
		cmd.Env = append(os.Environ(), crashWriterEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		if !lines.Scan() || lines.Text() != "ready" {
			cmd.Process.Kill()
			t.Fatalf("round %d: the writer did not start: %q", round, lines.Text())
		}
		ack := func() {
			n, err := strconv.Atoi(lines.Text())
			if err != nil {
				t.Fatalf("round %d: %s", round, lines.Text())
			}
			acked = n
		}
		for range 1 + rand.IntN(4) { // then killed in the middle of a later write
			if !lines.Scan() {
				t.Fatalf("round %d: the writer stopped", round)
			}
			ack()
		}
		cmd.Process.Kill()
		for lines.Scan() { // every write that returned before the kill
			ack()
		}
		cmd.Wait()

		s := Open(dir, 3)
		list, err := s.List()
		if err != nil || len(list) == 0 {
			t.Fatalf("round %d: after the kill: %v %v", round, list, err)
		}
		newest := list[len(list)-1].Number
		if newest < acked || newest > acked+1 {
			t.Fatalf("round %d: newest version %d, the last write that returned made %d", round, newest, acked)
		}
		for i, m := range list {
			if m.Number != newest-len(list)+1+i {
				t.Fatalf("round %d: kept %+v, not consecutive", round, list)
			}
			v, err := s.Read(m.Number)
			if err != nil || Digest(v.Intent) != m.Digest {
				t.Fatalf("round %d: version %d: %v", round, m.Number, err)
			}
		}
		acked = newest
		s.Close()
	}
	s := Open(dir, 3)
	defer s.Close()
	v, isNew, err := s.Write(version(t, 1), acked)
	if err != nil || !isNew || v.Number != acked+1 {
		t.Fatalf("write after the kills: %+v %v %v", v, isNew, err)
	}
	// The intents that killed writers left unnamed are gone with it.
	st, _ := s.store(false)
	keys, _, err := st.ListKeys(t.Context(), IntentDir)
	if err != nil || len(keys) != 3 {
		t.Fatalf("intents kept after the write: %v %v", keysOf(keys), err)
	}
}

func keysOf(entries []store.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Key)
	}
	return out
}
