#!/usr/bin/env bash
# What the fleet costs a one-shot command (docs/binary-size.md): builds
# netagent with and without the build tag nofleet, then prints a markdown
# table of each build's size (as built and stripped, -ldflags=-s -w) and,
# per call of `netagent show` and `netagent validate FILE`, the median peak
# RSS, wall time, minor page faults and the package inits' time and heap
# (GODEBUG=inittrace=1) over --repeat runs (default 9), the two builds
# interleaved run by run, so that a loaded machine disturbs both alike.
#
#   scripts/binsize.sh [--repeat N] [--against NAME=BIN]...
#
# --against NAME=BIN adds the rows, named NAME, of another netagent binary
# (an older build, for before and after figures of one machine and day). show runs in a
# fresh network namespace holding a veth pair, one end with an address (never the
# host's; run as root), removed at the end; validate reads
# examples/gateway.json.
set -euo pipefail

repeat=9
against=()
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) repeat=$2; shift 2 ;;
	--against)
		case $2 in
		?*=?*) against+=("$2") ;;
		*) echo "binsize.sh: --against NAME=BIN" >&2; exit 2 ;;
		esac
		shift 2
		;;
	*) echo "usage: $0 [--repeat N] [--against NAME=BIN]..." >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "binsize.sh: run as root (show runs in a namespace of its own)" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
ns=netagent-binsize-$$
trap 'ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"' EXIT

cd "$here"
# Every binary measured is written the same way (cat, from a build or the
# --against file): how a file was written (the linker maps its output)
# changes how the page cache holds it, and with that the faults and the
# resident pages of a run of it, by a megabyte or two.
mkdir "$work/build"
go build -o "$work/build/full" ./cmd/netagent
go build -tags nofleet -o "$work/build/nofleet" ./cmd/netagent
cat "$work/build/full" >"$work/full"
cat "$work/build/nofleet" >"$work/nofleet"
chmod +x "$work/full" "$work/nofleet"
go build -ldflags='-s -w' -o "$work/full.stripped" ./cmd/netagent
go build -tags nofleet -ldflags='-s -w' -o "$work/nofleet.stripped" ./cmd/netagent
builds=(full nofleet)
for a in "${against[@]}"; do
	case ${a%%=*} in
	full | nofleet | *.* | */*) echo "binsize.sh: --against $a: pick another NAME" >&2; exit 2 ;;
	esac
	cat "${a#*=}" >"$work/${a%%=*}"
	chmod +x "$work/${a%%=*}"
	builds+=("${a%%=*}")
done

ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add d0 type veth peer name d1
ip -n "$ns" addr add 192.0.2.1/24 dev d0
ip -n "$ns" link set d0 up
intent=$here/examples/gateway.json

# one BUILD CMD: a line "rss_kb wall_ms minflt init_ms init_kb".
one() {
	local bin=$work/$1 args
	case $2 in
	show) args=(show --netns "$ns" --state-dir "$work/state") ;;
	validate) args=(validate "$intent") ;;
	esac
	local t0 t1 m it
	t0=$(date +%s%N)
	m=$(/usr/bin/time -f 'TIME %M %R' "$bin" "${args[@]}" 2>&1 >/dev/null | awk '/^TIME / {print $2, $3}')
	t1=$(date +%s%N)
	# the inits apart: their trace's printing is no part of the figures above
	it=$(GODEBUG=inittrace=1 "$bin" "${args[@]}" 2>&1 >/dev/null | awk '/^init / {ms += $5; b += $8} END {printf "%.2f %d", ms, b / 1024}')
	set -- $m $it
	echo "$1 $(((t1 - t0) / 1000000)) $2 $3 $4"
}

for ((i = 0; i < repeat; i++)); do
	for cmd in show validate; do
		for b in "${builds[@]}"; do
			one "$b" "$cmd" >>"$work/$b.$cmd"
		done
	done
done

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }
mb() { awk -v b="$1" 'BEGIN {printf "%.1f MB", b / 1e6}'; }

echo "| build | size | stripped | packages | command | max RSS | wall | minor faults | init | init heap |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for b in "${builds[@]}"; do
	size=$(mb "$(stat -c %s "$work/$b")")
	stripped=-
	[ -e "$work/$b.stripped" ] && stripped=$(mb "$(stat -c %s "$work/$b.stripped")")
	pkgs=-
	case $b in
	full) pkgs=$(go list -deps ./cmd/netagent | wc -l) ;;
	nofleet) pkgs=$(go list -deps -tags nofleet ./cmd/netagent | wc -l) ;;
	esac
	for cmd in show validate; do
		f=$work/$b.$cmd
		printf '| %s | %s | %s | %s | %s | %s MB | %s ms | %s | %s ms | %s KB |\n' "$b" "$size" "$stripped" "$pkgs" "$cmd" \
			"$(awk -v k="$(col "$f" 1)" 'BEGIN {printf "%.1f", k / 1024}')" "$(col "$f" 2)" "$(col "$f" 3)" "$(col "$f" 4)" "$(col "$f" 5)"
	done
done
echo
echo "medians of $repeat runs each, interleaved; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
