#!/usr/bin/env bash
# Times netagent against the kernel's own batch tools on the same work, in
# fresh network namespaces (never the host's), and prints a markdown table
# (run as root):
#
#   work | batch tool | netagent apply | ratio | try | try/apply | no-op | one change | check | max RSS | daemon edit | daemon RSS
#
#   batch tool      `ip -batch` (routes, pairs), `iptables-restore` (rules) or
#                   `nft -f` (nftables), run in a fresh namespace
#   netagent apply  `netagent apply` of the same objects in another fresh one;
#                   ratio = apply / batch tool
#   try             `netagent try --confirm-when-probes-pass` of the same
#                   objects in a third fresh namespace: a trial (its record,
#                   the before-image journal fsynced before every wave, the
#                   verification read-back) that confirms as soon as it is
#                   verified (no probes); try/apply is the trial's cost
#                   (issue 9's target: at most 1.2×)
#   no-op           the same apply again (nothing to do)
#   one change      an apply of the intent with one object edited (a route's
#                   gateway, a bridge's address, a rule's port, a set's
#                   element)
#   check           `netagent check` of the edited intent
#   max RSS         the largest peak resident set of those five netagent runs
#   daemon edit     routes only: `netagent run` on a directory holding the
#                   intent, in a fourth fresh namespace; once it has applied
#                   it, the file is replaced by the one-change intent and back
#                   (written aside and renamed into place, as editors do) 5
#                   times: the median time from the rename to the first route
#                   change `ip monitor route` reports
#   daemon RSS      the daemon's resident set after those edits
#
# The work: 10k and 100k IPv4 routes via a gateway over one link; 500 and
# 2000 bridge+vxlan pairs, each bridge with an address; 10k iptables rules in
# 100 filter chains jumped to from FORWARD; 10k nftables rules in 100 regular
# chains of netagent's table inet netagent, jumped to from its forward base
# chain; one nftables set of 100k IPv4 addresses, dropped by its input base
# chain's one rule. internal/benchgen writes each
# work once for the batch tool and once as an intent, with the same objects
# (netagent's marks included); the script checks that both sides leave the
# same objects in the kernel (ip link/addr/route, iptables-save, nft list
# ruleset).
# netagent runs with --log-level warn (the cost of its per-operation log
# lines is not the work) and a --state-dir in a temporary directory.
#
# Each measurement gets a new namespace; deleting one keeps the kernel busy
# (holding the rtnl lock) for a while after `ip netns del` returns, so the
# script waits until a no-op link change in an idle scratch namespace is fast
# again (several in a row) before the next measurement. Every namespace is
# removed at the end, also on error or interrupt.
#
# Options:
#   --quick         one size per kind: 10k routes, 500 pairs, 10k rules
#                   (both nftables rows have one size: 10k rules, 100k
#                   elements)
#   --only KIND     routes, pairs, iptables, nftables or foreign
#                   (repeatable); foreign is not in the default set: it
#                   runs scripts/bench-foreign.sh (1M foreign routes
#                   against main, side by side: see its header) after the
#                   other kinds and prints its table after this one
#   --repeat N      each cell is the median of N runs (default 1)
#   --sizes small   200 routes, 20 pairs, 200 rules in 10 chains, 100
#                   nftables rules in 10 chains, a set of 1000: seconds, for
#                   the test that keeps this script working
# BENCH_NS names the namespaces' prefix (default na-bench-<random>).
# BENCH_NETAGENT names a netagent binary to measure instead of the tree's
# (an older build, for before and after figures of one machine and day).
set -Eeuo pipefail
cd "$(dirname "$0")/.."

usage() {
	sed -n '2,/^set -Eeuo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

quick='' repeat=1 sizes=full only=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--only)
		[ $# -ge 2 ] || usage
		case $2 in routes | pairs | iptables | nftables | foreign) only+=("$2") ;; *) usage ;; esac
		shift
		;;
	--repeat)
		if [ $# -lt 2 ] || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then usage; fi
		repeat=$2
		shift
		;;
	--sizes)
		[ $# -ge 2 ] || usage
		case $2 in small | full) sizes=$2 ;; *) usage ;; esac
		shift
		;;
	-h | --help) usage ;;
	*) usage ;;
	esac
	shift
done
[ ${#only[@]} -gt 0 ] || only=(routes pairs iptables nftables)

# The sizes of each kind; rules come with their number of chains.
if [ "$sizes" = small ]; then
	route_sizes=(200) pair_sizes=(20) rule_sizes=(200) chains=10
	nft_rules=100 nft_chains=10 nft_elements=1000
elif [ -n "$quick" ]; then
	route_sizes=(10000) pair_sizes=(500) rule_sizes=(10000) chains=100
else
	route_sizes=(10000 100000) pair_sizes=(500 2000) rule_sizes=(10000) chains=100
fi
if [ "$sizes" != small ]; then nft_rules=10000 nft_chains=100 nft_elements=100000; fi

if [ "$(id -u)" != 0 ]; then
	echo "bench.sh: run as root (it creates network namespaces)" >&2
	exit 1
fi
tools=(go ip iptables-restore)
if [[ " ${only[*]} " == *" nftables "* ]]; then tools+=(nft); fi
for tool in "${tools[@]}"; do
	command -v "$tool" >/dev/null || {
		echo "bench.sh: $tool not found (scripts/setup.sh installs what is needed)" >&2
		exit 1
	}
done

prefix=${BENCH_NS:-na-bench-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')}
work=$(mktemp -d)
declare -A live=() # the namespaces to remove on exit
cleanup() {
	for ns in "${!live[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "bench.sh: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

log() { printf '%s\n' "$*" >&2; }
die() {
	log "bench.sh: $*"
	exit 1
}

# now_us prints the wall clock in microseconds.
now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }

log "building netagent and benchgen into $work/bin"
go build -o "$work/bin/netagent" ./cmd/netagent
go build -o "$work/bin/benchgen" ./internal/benchgen
netagent=$work/bin/netagent benchgen=$work/bin/benchgen
if [ -n "${BENCH_NETAGENT:-}" ]; then
	netagent=$(realpath "$BENCH_NETAGENT")
	log "measuring $netagent instead"
fi

# A scratch namespace whose lo is set up again and again to see whether
# the kernel is still busy tearing down a deleted namespace.
idle=$prefix-idle
live[$idle]=1 # before it exists: an interrupt in between must not leak it
ip netns add "$idle"
ip -n "$idle" link set lo up

# lo_up_us prints how long a no-op link change takes, in microseconds.
lo_up_us() {
	local t0
	t0=$(now_us)
	ip -n "$idle" link set lo up
	echo $(($(now_us) - t0))
}

# The idle machine's time for a no-op link change (the fastest of 10); a
# change is "fast" within 3 times that plus 5 ms.
base=1000000000
for _ in $(seq 10); do
	t=$(lo_up_us)
	if [ "$t" -lt "$base" ]; then base=$t; fi
done
fast_us=$((3 * base + 5000))

# settle waits until 5 no-op link changes in a row are fast, for at most
# 120 s.
settle() {
	local start run=0 t
	start=$(now_us)
	while [ "$run" -lt 5 ]; do
		t=$(lo_up_us)
		if [ "$t" -le "$fast_us" ]; then run=$((run + 1)); else run=0; fi
		if [ $(($(now_us) - start)) -gt 120000000 ]; then
			log "bench.sh: warning: the kernel is still slow ($t us for a no-op link change) after 120 s; measuring anyway"
			return
		fi
	done
}

# newns SETUP makes a fresh namespace, named in ns, and runs the setup
# batch file in it.
seq_ns=0
newns() {
	seq_ns=$((seq_ns + 1))
	ns=$prefix-$seq_ns
	live[$ns]=1
	ip netns add "$ns"
	ip -n "$ns" -batch "$1"
}

# delns removes the namespace and waits for the kernel to finish with it.
# Its bridges and VXLANs are deleted first, in one request that returns
# when they are gone (`link del group`): the kernel tears a deleted
# namespace down in the background, and with 4000 such links that took
# 54 s, most of it under the rtnl lock, after the no-op link changes of
# settle had already found it fast; the next measurement then waited for
# it (an apply of 2000 pairs measured 58 s instead of 8 s).
delns() {
	local names
	names=$({ ip -n "$1" -o link show type bridge && ip -n "$1" -o link show type vxlan; } |
		awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')
	if [ -n "$names" ]; then
		{
			for n in $names; do echo "link set dev $n group 99"; done
			echo "link del group 99"
		} | ip -n "$1" -batch -
	fi
	ip netns del "$1"
	unset "live[$1]"
	settle
}

# timed LABEL COMMAND... runs the command through benchgen time; it sets
# secs, rss_kb and cpu (user + system seconds), or stops the script with
# the command's output.
timed() {
	local label=$1
	shift
	if ! "$benchgen" time -o "$work/time" -- "$@" >"$work/out" 2>&1; then
		die "$label failed: $*"$'\n'"$(tail -n 20 "$work/out")"
	fi
	read -r secs rss_kb cpu <"$work/time"
}

# median prints the median of its arguments.
median() {
	printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# human prints a count as the issue's table does: 10000 as 10k.
human() {
	if [ "$1" -ge 10000 ] && [ $(($1 % 1000)) = 0 ]; then echo "$(($1 / 1000))k"; else echo "$1"; fi
}

# fmt_secs prints seconds with two decimals from 1 s, three below.
fmt_secs() { awk -v s="$1" 'BEGIN { if (s >= 1) printf "%.2f s", s; else printf "%.3f s", s }'; }

# ipdump ARG... runs ip, again while it says a change in the kernel
# interrupted its dump (up to 5 times).
ipdump() {
	local _
	for _ in 1 2 3 4 5; do
		ip "$@" >"$work/dump" 2>"$work/dump.err"
		grep -q 'Dump was interrupted' "$work/dump.err" || break
	done
	cat "$work/dump.err" >&2
	cat "$work/dump"
}

# snapshot NS prints what the namespace holds, sorted, without what differs
# between two namespaces made alike (interface indexes, MAC addresses and
# what derives from them, timers, operstates still settling): the batch
# tool's result and netagent's must print the same.
snapshot() {
	{
		ipdump -n "$1" -o -d link show
		ipdump -n "$1" -o addr show
		ipdump -n "$1" -4 -d route show table all
		ipdump -n "$1" -6 -d route show table all | grep -v 'proto kernel' || true # addrconf's, still coming
		ip netns exec "$1" iptables-save
	} | grep -v -e 'fe80::' -e '^#' | sed -E 's/^[0-9]+: //; s/@if[0-9]+/@if/; s/(link\/ether|brd|bridge_id|designated_root|designated_bridge) [0-9a-f.:]+/\1/g; s/[a-z_]+_timer +[0-9.]+//g; s/ state [A-Z]+ / /' |
		sort
	# In its own order: which chain a rule is in is the line above it.
	if command -v nft >/dev/null; then ip netns exec "$1" nft list ruleset; fi
}

rows=() cpurows=()

# daemon_edits DIR sets edit_secs (the median of 5 edits) and daemon_kb
# (the daemon's resident set then): see the header, "daemon edit".
daemon_edits() {
	local dir=$1 d=$work/daemon-intents pid mon want have i t0 took=() line
	newns "$dir/setup.batch"
	settle
	want=$(ip -n "$ns" -batch "$dir/kernel.batch" && ip -n "$ns" route show table all | wc -l)
	delns "$ns"
	newns "$dir/setup.batch"
	settle
	rm -rf "$d" && mkdir -p "$d" && cp "$dir/intent.json" "$d/intent.json"
	"$netagent" --netns "$ns" --state-dir "$work/state-$ns" --log-level warn run --intent-dir "$d" \
		--socket "$work/daemon.sock" >"$work/daemon.out" 2>&1 &
	pid=$!
	have=0
	for _ in $(seq 600); do # the initial apply: up to 2 minutes
		have=$(ip -n "$ns" route show table all | wc -l)
		[ "$have" -ge "$want" ] && break
		sleep 0.2
	done
	[ "$have" -ge "$want" ] || die "the daemon did not apply the intent: $have of $want routes; $(tail -n 5 "$work/daemon.out")"
	coproc mon { exec ip -n "$ns" monitor route; }
	for i in 1 2 3 4 5; do
		if ((i % 2)); then cp "$dir/change.json" "$d/.edit"; else cp "$dir/intent.json" "$d/.edit"; fi
		t0=$(now_us)
		mv "$d/.edit" "$d/intent.json"
		read -r -t 30 line <&"${mon[0]}" || die "daemon edit $i: no route change within 30 s"
		took+=("$(awk -v us=$(($(now_us) - t0)) 'BEGIN { printf "%.4f", us / 1e6 }')")
		while read -r -t 2 line <&"${mon[0]}"; do :; done # the rest of this edit, and its read-back 1 s later
	done
	daemon_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	kill "$mon_PID" "$pid"
	wait "$pid" 2>/dev/null || true
	edit_secs=$(median "${took[@]}")
	delns "$ns"
}

# measure KIND N LABEL [GEN-ARG...] times one work on both sides and adds
# its row to the table.
measure() {
	local kind=$1 n=$2 label=$3
	shift 3
	local dir=$work/$kind-$n
	mkdir -p "$dir"
	"$benchgen" gen -kind "$kind" -n "$n" -dir "$dir" "$@"
	local batch=() b=() a=() tr=() noop=() change=() check=() rss=() i
	local bc=() ac=() nc=() cc=() # CPU seconds of the batch tool, apply, no-op, one change
	case $kind in
	iptables) batch=(iptables-restore "$dir/kernel.rules") ;;
	nft-*) batch=(nft -f "$dir/kernel.nft") ;;
	*) batch=(-batch "$dir/kernel.batch") ;;
	esac
	for ((i = 1; i <= repeat; i++)); do
		log "$label: run $i of $repeat"
		newns "$dir/setup.batch"
		settle
		case $kind in
		iptables | nft-*) timed "${batch[0]}" ip netns exec "$ns" "${batch[@]}" ;;
		*) timed "ip -batch" ip -n "$ns" "${batch[@]}" ;;
		esac
		b+=("$secs") bc+=("$cpu")
		snapshot "$ns" >"$work/kernel.snap"
		delns "$ns"

		newns "$dir/setup.batch"
		settle
		local na=("$netagent" --netns "$ns" --state-dir "$work/state-$ns" --log-level warn)
		local peak=0
		timed "netagent apply" "${na[@]}" apply "$dir/intent.json"
		a+=("$secs") ac+=("$cpu") peak=$((rss_kb > peak ? rss_kb : peak))
		snapshot "$ns" >"$work/netagent.snap"
		if ! diff -u "$work/kernel.snap" "$work/netagent.snap" >"$work/snap.diff"; then
			die "the batch tool and netagent made different objects:"$'\n'"$(head -n 12 "$work/snap.diff" | cut -c1-300)"
		fi
		timed "netagent apply (no-op)" "${na[@]}" apply "$dir/intent.json"
		grep -q 'converged: 0 operations' "$work/out" || die "the no-op apply did something: $(cat "$work/out")"
		noop+=("$secs") nc+=("$cpu") peak=$((rss_kb > peak ? rss_kb : peak))
		timed "netagent apply (one change)" "${na[@]}" apply "$dir/change.json"
		if grep -q 'converged: 0 operations' "$work/out"; then die "the one-change apply changed nothing"; fi
		change+=("$secs") cc+=("$cpu") peak=$((rss_kb > peak ? rss_kb : peak))
		timed "netagent check" "${na[@]}" check "$dir/change.json"
		check+=("$secs") peak=$((rss_kb > peak ? rss_kb : peak))
		delns "$ns"

		newns "$dir/setup.batch"
		settle
		na=("$netagent" --netns "$ns" --state-dir "$work/state-$ns" --log-level warn)
		timed "netagent try" "${na[@]}" try --confirm-when-probes-pass "$dir/intent.json"
		grep -q '^confirmed: ' "$work/out" || die "the trial was not confirmed: $(cat "$work/out")"
		tr+=("$secs") peak=$((rss_kb > peak ? rss_kb : peak))
		snapshot "$ns" >"$work/try.snap"
		if ! diff -u "$work/kernel.snap" "$work/try.snap" >"$work/snap.diff"; then
			die "the batch tool and netagent try made different objects:"$'\n'"$(head -n 12 "$work/snap.diff" | cut -c1-300)"
		fi
		rss+=("$peak")
		delns "$ns"
	done
	local mb ma mt
	mb=$(median "${b[@]}") ma=$(median "${a[@]}") mt=$(median "${tr[@]}")
	local row
	row="| $label | $(fmt_secs "$mb") | $(fmt_secs "$ma") | "
	row+=$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else printf "—" }')
	row+=" | $(fmt_secs "$mt") | "
	row+=$(awk -v t="$mt" -v a="$ma" 'BEGIN { if (a > 0) printf "%.2f×", t / a; else printf "—" }')
	row+=" | $(fmt_secs "$(median "${noop[@]}")") | $(fmt_secs "$(median "${change[@]}")")"
	row+=" | $(fmt_secs "$(median "${check[@]}")") | $(awk -v k="$(median "${rss[@]}")" 'BEGIN { printf "%.0f MB", k / 1024 }') |"
	if [ "$kind" = routes ]; then
		daemon_edits "$dir"
		row+=" $(fmt_secs "$edit_secs") | $(awk -v k="$daemon_kb" 'BEGIN { printf "%.0f MB", k / 1024 }') |"
	else
		row+=" — | — |"
	fi
	log "$row"
	rows+=("$row")
	local cb ca
	cb=$(median "${bc[@]}") ca=$(median "${ac[@]}")
	row="| $label | $(fmt_secs "$cb") | $(fmt_secs "$ca") | "
	row+=$(awk -v a="$ca" -v b="$cb" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else printf "—" }')
	row+=" | $(fmt_secs "$(median "${nc[@]}")") | $(fmt_secs "$(median "${cc[@]}")") |"
	cpurows+=("$row")
}

settle
for kind in "${only[@]}"; do
	case $kind in
	routes) for n in "${route_sizes[@]}"; do measure routes "$n" "$(human "$n") routes over one link"; done ;;
	pairs) for n in "${pair_sizes[@]}"; do measure pairs "$n" "$n bridge+vxlan pairs with addresses"; done ;;
	iptables) for n in "${rule_sizes[@]}"; do
		measure iptables "$n" "$(human "$n") iptables rules in $chains chains" -chains "$chains"
	done ;;
	foreign) ;; # after the table
	nftables)
		measure nft-rules "$nft_rules" "$(human "$nft_rules") nftables rules in $nft_chains chains" -chains "$nft_chains"
		measure nft-set "$nft_elements" "one nftables set of $(human "$nft_elements") elements"
		;;
	esac
done

echo "| work | \`ip -batch\` / \`iptables-restore\` / \`nft -f\` | \`netagent apply\` | ratio | \`netagent try\` | try/apply | no-op | one change | check | max RSS | daemon edit | daemon RSS |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
if [ "$repeat" -gt 1 ]; then echo; echo "medians of $repeat runs"; fi
# The same runs' CPU time (user + system): on a loaded machine the wall
# clock measures the others' work too.
echo
echo "| work (CPU time, user + system) | batch tool | \`netagent apply\` | ratio | no-op | one change |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${cpurows[@]}"
if [[ " ${only[*]} " == *" foreign "* ]]; then
	echo
	./scripts/bench-foreign.sh --against main --repeat "$repeat"
fi
