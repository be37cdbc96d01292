//go:build !vmtest

package netns_test

import (
	"fmt"
	"strings"
	"testing"
)

// A trial of an nftables change (one table modified, one deleted, one
// created, 300 set elements replaced) that is not confirmed gives back
// netagent's tables exactly, as `nft -j list ruleset` shows them (the
// tables' handles aside), and so does `netagent recover` after the trial
// is killed (SIGKILL) at every kill point of its apply and at points of
// its revert, and after a recover killed halfway; nothing else in the
// ruleset changes.
func TestNftablesTrialKilled(t *testing.T) {
	e := cliNewEnv(t)
	nftForeignSetup(e)
	var els []string
	for i := range 300 {
		els = append(els, fmt.Sprintf(`"10.%d.%d.0/25"`, i/256, i%256))
	}
	big := `{"name": "blocked", "type": "ipv4_addr", "interval": true, "elements": [` + strings.Join(els, ", ") + `]}`
	before := strings.Replace(nftCoexistIntents["B"], `"sets": [`, `"sets": [`+big+`, `, 1)
	trial := strings.Replace(nftCoexistIntents["C"], `"sets": [`, `"sets": [`+strings.ReplaceAll(big, `"10.`, `"11.`)+`, `, 1)
	e.mustRun(0, "apply", nftIntentFile(e, "before.json", before))
	foreign, want := nftSplit(e)
	if !strings.Contains(want, "10.1.43.0") {
		t.Fatalf("the set is not in the kernel:\n%s", want)
	}
	file := nftIntentFile(e, "trial.json", trial)
	check := func(what string) bool {
		t.Helper()
		f, o := nftSplit(e)
		if f != foreign {
			t.Errorf("%s: the foreign ruleset changed:\n%s", what, lineDiff(foreign, f))
		}
		if o != want {
			t.Errorf("%s: netagent's tables are not what they were:\n%s", what, lineDiff(want, o))
			return false
		}
		return true
	}

	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", file)
	if full.code != 6 || !strings.Contains(full.stderr, "reverted: not confirmed") {
		t.Fatalf("the whole trial: want exit 6 (not confirmed), got %s", full)
	}
	check("after the trial's own revert")
	apply, all := killPoints(t, full)
	points := append(spread(1, apply, apply), spread(apply+1, all, 4)...)
	exact := 0
	for _, k := range points {
		res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", file)
		if res.code != -1 {
			t.Fatalf("kill point %d of %d: the trial was not killed: %s", k, all, res)
		}
		if _, o := nftSplit(e); k == apply && (o == want || !strings.Contains(o, "11.1.43.0")) {
			t.Fatalf("killed after its apply (point %d), the trial's tables are not in the kernel:\n%s", k, o)
		}
		if rec := e.netagent("recover"); rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
			t.Fatalf("recover after kill point %d: %s", k, rec)
		}
		if check(fmt.Sprintf("recover after kill point %d of %d (apply %d)", k, all, apply)) {
			exact++
		}
	}
	if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", file); res.code != -1 {
		t.Fatalf("the trial was not killed after its apply: %s", res)
	}
	k := max(1, (all-apply)/2)
	if rec := e.run([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--state-dir", e.stateDir, "recover", "--netns", e.tgt.Name); rec.code != -1 {
		t.Fatalf("recover was not killed at %d: %s", k, rec)
	}
	e.mustRun(0, "recover")
	if check(fmt.Sprintf("recover after a recover killed at %d", k)) {
		exact++
	}
	t.Logf("kill points %v of %d (apply %d), and a recover killed at %d: %d of %d exact", points, all, apply, k, exact, len(points)+1)
}
