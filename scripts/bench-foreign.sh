#!/usr/bin/env bash
# Measures what other owners' routes cost netagent (issue 28, point 1), in
# fresh network namespaces (never the host's), and prints a markdown table
# (run as root):
#
#   build | foreign routes | check | plan | no-op apply | one change | drift check | daemon CPU | daemon RSS | daemon wakeups | daemon edit
#
# Each row is one namespace holding netagent's work (N own IPv4 routes in
# the main table via a gateway on uplink0: benchgen's routes workload) and
# F foreign routes loaded with `ip -batch` before netagent runs: protocol
# 186 (BGP), on a veth, spread over tables 100 to 104, half IPv4 /32,
# half IPv6 /128. The first row has F = 0, so the two rows side by side
# are the cost of the foreign routes.
#
#   check, plan     `netagent check` / `netagent plan` of the applied intent
#   no-op apply     `netagent apply` of it again (nothing to do)
#   one change      an apply of the intent with one route's gateway changed
#                   (and back, then timed again: the median of 3)
#   drift check     the daemon with --drift-interval 2s: its CPU seconds over
#                   20 s divided by the drift checks in that time
#   daemon CPU      the daemon with the default drift interval while a
#                   foreign writer deletes and adds back 500 foreign routes
#                   every second (1000 changes a second) in table 100: its
#                   CPU over 30 s, in % of one core
#   daemon RSS      its resident set at the end of those 30 s
#   daemon wakeups  the context switches of its threads over those 30 s
#   daemon edit     then, the writer still going: the intent file replaced
#                   by the one-change intent and back, 5 times; the median
#                   time from the rename to the edited route's change in
#                   `ip monitor route`
#
# Options:
#   --own N         netagent's routes (default 1000)
#   --foreign F     foreign routes of the second row (default 1000000)
#   --against REV   also measure netagent as of git revision REV (built from
#                   `git archive REV`), both rows, in the same run: the
#                   table then has a column saying which build a row is
#   --no-daemon     leave out the daemon's columns (drift check, CPU, RSS)
#   --repeat N      each command cell is the median of N runs (default 3)
#
# A command cell is "wall (CPU)": its wall time and its user+system CPU
# time, which a loaded machine disturbs less (the kernel's work for a dump
# counts as the process's system time).
# BENCH_NS names the namespaces' prefix (default na-fbench-<random>).
set -Eeuo pipefail
cd "$(dirname "$0")/.."

own=1000 foreign=1000000 against='' daemon=1 repeat=3
while [ $# -gt 0 ]; do
	case $1 in
	--own) own=$2; shift ;;
	--foreign) foreign=$2; shift ;;
	--against) against=$2; shift ;;
	--no-daemon) daemon='' ;;
	--repeat) repeat=$2; shift ;;
	*)
		sed -n '2,/^set -Eeuo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
	shift
done
[[ $own =~ ^[1-9][0-9]*$ && $foreign =~ ^[1-9][0-9]*$ && $repeat =~ ^[1-9][0-9]*$ ]] || {
	echo "bench-foreign.sh: --own, --foreign and --repeat take positive counts" >&2
	exit 2
}
if [ "$(id -u)" != 0 ]; then
	echo "bench-foreign.sh: run as root (it creates network namespaces)" >&2
	exit 1
fi

prefix=${BENCH_NS:-na-fbench-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')}
work=$(mktemp -d)
pids=()
declare -A live=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for ns in "${!live[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "bench-foreign.sh: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

log() { printf '%s\n' "$*" >&2; }
now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END { print v[int((NR + 1) / 2)] }'; }
fmt_secs() { awk -v s="$1" 'BEGIN { if (s >= 1) printf "%.2f s", s; else printf "%.3f s", s }'; }
# cpu_ticks PID: user + system time in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# switches PID: the context switches of all its threads (each a wakeup).
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches:/ { n += $2 } END { print n }'; }

benchgen=$work/benchgen
go build -o "$work/netagent" ./cmd/netagent
go build -o "$benchgen" ./internal/benchgen
builds=(this)
if [ -n "$against" ]; then
	mkdir -p "$work/base"
	git archive "$against" | tar -x -C "$work/base"
	(cd "$work/base" && go build -o "$work/netagent-base" ./cmd/netagent)
	builds=("$against" this)
fi
mkdir -p "$work/w"
"$benchgen" gen -kind routes -n "$own" -dir "$work/w"

# foreign_batch F writes F foreign routes as ip -batch lines.
foreign_batch() {
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			t = 100 + i % 5; j = int(i / 10)
			if (i % 2 == 0) printf "route add 172.%d.%d.%d/32 dev fdum0 proto 186 table %d\n", 16 + int(j / 65536) % 16, int(j / 256) % 256, j % 256, t
			else printf "route add 2001:db8:%x::%x:%x/128 dev fdum0 proto 186 table %d\n", t, int(j / 65536), j % 65536, t
		}
	}'
}

# timed LABEL CMD...: sets secs to "WALL CPU" (seconds) or stops with the
# output.
timed() {
	local label=$1 wall user sys
	shift
	if ! /usr/bin/time -o "$work/time" -f '%e %U %S' "$@" >"$work/out" 2>&1; then
		log "$label failed: $(tail -n 20 "$work/out")"
		exit 1
	fi
	read -r wall user sys <"$work/time"
	secs="$wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
}

# cell WALL_CPU...: the medians of the wall and CPU times, "wall (cpu)".
cell() {
	local w=() c=() x
	for x in "$@"; do
		w+=("${x% *}") c+=("${x#* }")
	done
	echo "$(fmt_secs "$(median "${w[@]}")") ($(fmt_secs "$(median "${c[@]}")"))"
}

rows=()
seq_ns=0
# row BUILD F measures BUILD with F foreign routes.
row() {
	local build=$1 f=$2 ns netagent=$work/netagent
	[ "$build" = this ] || netagent=$work/netagent-base
	seq_ns=$((seq_ns + 1))
	ns=$prefix-$seq_ns
	live[$ns]=1
	ip netns add "$ns"
	ip -n "$ns" -batch "$work/w/setup.batch"
	ip -n "$ns" link add fdum0 type veth peer name fdum1
	ip -n "$ns" link set fdum1 up
	ip -n "$ns" link set fdum0 up
	if [ "$f" -gt 0 ]; then
		log "loading $f foreign routes"
		foreign_batch "$f" >"$work/foreign.batch"
		local t0
		t0=$(now_us)
		ip -n "$ns" -batch "$work/foreign.batch"
		log "loaded in $(((($(now_us) - t0)) / 1000)) ms"
		rm -f "$work/foreign.batch"
	fi
	local na=("$netagent" --netns "$ns" --state-dir "$work/state-$ns" --log-level warn)
	timed apply "${na[@]}" apply "$work/w/intent.json"
	local check=() plan=() noop=() change=() i
	for ((i = 1; i <= repeat; i++)); do
		timed check "${na[@]}" check "$work/w/intent.json"
		check+=("$secs")
		timed plan "${na[@]}" plan "$work/w/intent.json"
		plan+=("$secs")
		timed noop "${na[@]}" apply "$work/w/intent.json"
		grep -q 'converged: 0 operations' "$work/out" || {
			log "the no-op apply did something: $(tail "$work/out")"
			exit 1
		}
		noop+=("$secs")
		timed change "${na[@]}" apply "$work/w/change.json"
		change+=("$secs")
		timed back "${na[@]}" apply "$work/w/intent.json"
	done

	local drift=— cpu=— rss=— wakeups=— edit=—
	[ -n "$daemon" ] && daemon_columns "$netagent" "$ns"
	ip netns del "$ns"
	unset "live[$ns]"
	local r="| $build | $f | $(cell "${check[@]}") | $(cell "${plan[@]}") | $(cell "${noop[@]}")"
	r+=" | $(cell "${change[@]}") | $drift | $cpu | $rss | $wakeups | $edit |"
	log "$r"
	rows+=("$r")
}

# daemon_edits sets edit (the median of 5): with the daemon running on
# $work/d, the intent is replaced by the one-change intent and back
# (written aside and renamed into place, as editors do); each is timed
# from the rename to the first notification of the edited route
# (10.0.0.0/24) that `ip monitor route` prints.
daemon_edits() {
	local took=() i t0 n0 monpid
	ip -n "$ns" monitor route >"$work/mon.txt" &
	monpid=$!
	pids+=("$monpid")
	sleep 1
	edited() { grep -cE '^(Deleted )?10\.0\.0\.0/24 ' "$work/mon.txt" || true; }
	for i in 1 2 3 4 5; do
		if ((i % 2)); then cp "$work/w/change.json" "$work/d/.edit"; else cp "$work/w/intent.json" "$work/d/.edit"; fi
		n0=$(edited)
		t0=$(now_us)
		mv "$work/d/.edit" "$work/d/intent.json"
		while [ "$(edited)" -le "$n0" ]; do
			if (($(now_us) - t0 > 30000000)); then
				log "daemon edit $i: no route change within 30 s"
				exit 1
			fi
			sleep 0.005
		done
		took+=("$(awk -v us=$(($(now_us) - t0)) 'BEGIN { printf "%.4f", us / 1e6 }')")
		sleep 2 # the rest of this edit, and its read-back 1 s later
	done
	kill "$monpid"
	wait "$monpid" 2>/dev/null || true
	edit=$(fmt_secs "$(median "${took[@]}")")
}

# daemon_columns NETAGENT NS sets drift, cpu, rss, wakeups and edit.
daemon_columns() {
	local netagent=$1 ns=$2
	# drift checks every 2 s
	rm -rf "$work/d" && mkdir -p "$work/d" && cp "$work/w/intent.json" "$work/d/"
	"$netagent" --netns "$ns" --state-dir "$work/state-$ns" --log-level warn run --intent-dir "$work/d" \
		--socket "$work/d.sock" --drift-interval 2s >"$work/daemon.out" 2>&1 &
	local pid=$!
	pids+=("$pid")
	sleep 10 # started, applied (nothing to do), settled
	local c0 c1
	c0=$(cpu_ticks "$pid")
	sleep 20
	c1=$(cpu_ticks "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	drift=$(fmt_secs "$(awk -v t=$((c1 - c0)) 'BEGIN { printf "%.3f", t / 100 / 10 }')")

	# idle with a foreign writer
	"$netagent" --netns "$ns" --state-dir "$work/state-$ns" --log-level warn run --intent-dir "$work/d" \
		--socket "$work/d.sock" >"$work/daemon.out" 2>&1 &
	pid=$!
	pids+=("$pid")
	awk 'BEGIN { for (i = 0; i < 500; i++) printf "route add 198.%d.%d.0/24 dev fdum0 proto 186 table 100\n", 18 + int(i / 256), i % 256 }' >"$work/add.batch"
	sed 's/^route add/route del/' "$work/add.batch" >"$work/del.batch"
	ip -n "$ns" -batch "$work/add.batch"
	(while :; do
		ip -n "$ns" -batch "$work/del.batch"
		ip -n "$ns" -batch "$work/add.batch"
		sleep 1
	done) &
	local writer=$!
	pids+=("$writer")
	sleep 10
	local s0 s1
	c0=$(cpu_ticks "$pid") s0=$(switches "$pid")
	sleep 30
	c1=$(cpu_ticks "$pid") s1=$(switches "$pid")
	rss=$(awk '/^VmRSS:/ { printf "%.1f MB", $2 / 1024 }' "/proc/$pid/status")
	daemon_edits
	kill "$writer" "$pid"
	wait "$writer" "$pid" 2>/dev/null || true
	cpu=$(awk -v t=$((c1 - c0)) 'BEGIN { printf "%.1f %%", t / 30 }')
	wakeups=$((s1 - s0))
}

for b in "${builds[@]}"; do
	row "$b" 0
	row "$b" "$foreign"
done
echo "| build | foreign routes | check | plan | no-op apply | one change | drift check | daemon CPU | daemon RSS | daemon wakeups | daemon edit |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "$own own routes; foreign writer: 1000 changes/s in table 100; kernel $(uname -r)"
