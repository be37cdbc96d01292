// Command benchgen is scripts/bench.sh's helper. It writes one benchmark
// workload twice, for the kernel's batch tool and as a netagent intent, so
// that both sides create the same objects; and it runs a command, timing it
// and reporting its peak memory.
//
//	benchgen gen -kind routes|pairs|iptables|nft-rules|nft-set -n N [-chains C] -dir DIR
//	benchgen time -o FILE -- COMMAND [ARG...]
//
// gen writes into DIR:
//
//	setup.batch    ip -batch lines run, untimed, in every fresh namespace
//	               before either side (lo up; for routes and pairs the
//	               "uplink" uplink0, one end of an up veth pair)
//	kernel.batch   the work for `ip -batch` (routes, pairs), or
//	kernel.rules   the work for `iptables-restore` (iptables), or
//	kernel.nft     the work for `nft -f` (nft-rules, nft-set)
//	intent.json    the same work as a netagent intent
//	change.json    intent.json with one object edited: one route's gateway,
//	               one bridge's address, one rule's port, or one set
//	               element
//
// The kinds:
//
//	routes    N IPv4 /24 routes via 192.0.2.1 over uplink0 (which the intent
//	          declares as a physical interface with 192.0.2.10/24)
//	pairs     N bridges br<i> (STP off, one IPv4 /24 address each), each the
//	          master of a VXLAN vx<i> (VNI i+1, local 192.0.2.10, remote
//	          192.0.2.20, port 4789, over uplink0)
//	iptables  N rules in C filter chains NA-BENCH<c>, each jumped to from
//	          FORWARD; both sides carry netagent's ownership mark (the
//	          comment "netagent" on a chain's first rule and on its jump)
//	nft-rules N rules in C regular chains NA-BENCH<c> of the table inet
//	          netagent, each jumped to from its base chain forward
//	nft-set   one set of N IPv4 addresses in the table inet netagent,
//	          dropped by the one rule of its base chain input
//
// Both nft kinds carry netagent's mark (the empty chain netagent-owned)
// on the kernel side too.
//
// Routes carry netagent's rtnetlink protocol (211) on the kernel side too.
//
// time runs COMMAND with its standard streams, then writes to FILE one line
// "SECONDS MAXRSS_KB": the wall time from start to exit and the peak
// resident set of the command and the descendants it waited for
// (getrusage). It exits with the command's exit status.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = genCmd(os.Args[2:])
	case "time":
		var code int
		code, err = timeCmd(os.Args[2:])
		if err == nil {
			os.Exit(code)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchgen gen -kind routes|pairs|iptables|nft-rules|nft-set -n N [-chains C] -dir DIR\n"+
		"       benchgen time -o FILE -- COMMAND [ARG...]")
	os.Exit(2)
}

// genCmd parses gen's flags and writes the workload's files.
func genCmd(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	kind := fs.String("kind", "", "routes, pairs, iptables, nft-rules or nft-set")
	n := fs.Int("n", 0, "how many routes, pairs, rules or set elements")
	chains := fs.Int("chains", 100, "iptables, nft-rules: how many chains share the rules")
	dir := fs.String("dir", "", "where to write the files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *dir == "" {
		return errors.New("gen needs -n >= 1 and -dir")
	}
	w, err := workload(*kind, *n, *chains)
	if err != nil {
		return err
	}
	return w.write(*dir)
}

// timeCmd runs the command after "--" and records its wall time and peak
// RSS in the -o file; it returns the command's exit code.
func timeCmd(args []string) (int, error) {
	fs := flag.NewFlagSet("time", flag.ContinueOnError)
	out := fs.String("o", "", "file for \"SECONDS MAXRSS_KB\"")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	argv := fs.Args()
	if *out == "" || len(argv) == 0 {
		return 0, errors.New("time needs -o FILE and a command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return 0, fmt.Errorf("running %s: %w", argv[0], runErr)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no resource usage for the command")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	line := fmt.Sprintf("%.4f %d %.4f\n", elapsed.Seconds(), ru.Maxrss, cpu.Seconds()) // Linux: Maxrss in KiB
	if err := os.WriteFile(*out, []byte(line), 0o644); err != nil {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}
