//go:build !vmtest

package netns_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/netagent/netagent/internal/testns"
)

// The README's benchmark, ./scripts/bench.sh, at its smallest sizes: it
// exits 0, prints the table's header and one row per work, each with every
// column filled (the nftables rows against `nft -f`), the batch tool's
// ratio and the trial's (try/apply),
// and leaves no namespace behind. The sizes
// here take seconds; the full run is for people, not for this test.
func TestBenchScript(t *testing.T) {
	testns.RequireRoot(t)
	ns := testns.Name("na-bench-")
	cmd := exec.Command("bash", "../../scripts/bench.sh", "--quick", "--sizes", "small")
	cmd.Env = append(os.Environ(), "BENCH_NS="+ns)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		t.Fatalf("bench.sh: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	header := "| work | `ip -batch` / `iptables-restore` / `nft -f` | `netagent apply` | ratio | `netagent try` | try/apply | no-op | one change | check | max RSS | daemon edit | daemon RSS |"
	if !strings.Contains(out, header+"\n|---|") {
		t.Errorf("bench.sh's table lacks its header:\n%s", out)
	}
	secs := `[0-9]+\.[0-9]+ s`
	for work, daemon := range map[string]string{ // the daemon's columns: routes only
		"200 routes over one link":               secs + ` \| [0-9]+ MB`,
		"20 bridge\\+vxlan pairs with addresses": `— \| —`,
		"200 iptables rules in 10 chains":        `— \| —`,
		"100 nftables rules in 10 chains":        `— \| —`,
		"one nftables set of 1000 elements":      `— \| —`,
	} {
		row := regexp.MustCompile(`(?m)^\| ` + work + ` \| ` + secs + ` \| ` + secs + ` \| [0-9]+\.[0-9]×` +
			` \| ` + secs + ` \| [0-9]+\.[0-9]{2}×` + ` \| ` + secs + ` \| ` + secs + ` \| ` + secs + ` \| [0-9]+ MB \| ` + daemon + ` \|$`)
		if !row.MatchString(out) {
			t.Errorf("bench.sh's table lacks a full row for %q:\n%s", work, out)
		}
	}
	// The same runs' CPU times, a row per work.
	if !strings.Contains(out, "| work (CPU time, user + system) | batch tool | `netagent apply` | ratio | no-op | one change |\n|---|") {
		t.Errorf("bench.sh's CPU table lacks its header:\n%s", out)
	}
	cpuRow := regexp.MustCompile(`(?m)^\| [^|]+ \| ` + secs + ` \| ` + secs + ` \| ([0-9]+\.[0-9]×|—) \| ` + secs + ` \| ` + secs + ` \|$`)
	if n := len(cpuRow.FindAllString(out, -1)); n != 5 {
		t.Errorf("bench.sh printed %d CPU rows, want 5:\n%s", n, out)
	}
	if n := len(regexp.MustCompile(`(?m)^\| `).FindAllString(out, -1)); n != 2*(1+5) {
		t.Errorf("bench.sh printed %d table lines, want 12 (two tables of a header and 5 rows):\n%s", n, out)
	}
	benchNoNamespaces(t, ns)
}

// Interrupted (Ctrl-C: SIGINT to its process group) while it measures,
// bench.sh removes its namespaces and exits non-zero.
func TestBenchScriptInterrupted(t *testing.T) {
	testns.RequireRoot(t)
	ns := testns.Name("na-bench-")
	cmd := exec.Command("bash", "../../scripts/bench.sh", "--sizes", "small", "--only", "pairs", "--repeat", "1000")
	cmd.Env = append(os.Environ(), "BENCH_NS="+ns)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// "run 2 of 1000" comes once the first run's namespaces exist and the
	// second run's are being made.
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "run 2 of 1000") {
			break
		}
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() { // until bash and its children have exited
		log.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	if !strings.Contains(log.String(), "run 2 of 1000") {
		t.Fatalf("bench.sh ended before its second run: %v\n%s", err, log.String())
	}
	if err == nil {
		t.Errorf("bench.sh exited 0 after SIGINT")
	}
	benchNoNamespaces(t, ns)
}

// benchNoNamespaces fails the test if a namespace named prefix* exists.
func benchNoNamespaces(t *testing.T, prefix string) {
	t.Helper()
	list, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(list), prefix) {
		t.Errorf("bench.sh left namespaces named %s*:\n%s", prefix, list)
	}
}
