#!/usr/bin/env bash
# The main job, on a fresh machine (as root): netagent converges a throwaway
# network namespace to examples/gateway.json and keeps it converged, without
# touching the host's own network.
#
#   netagent-demo     the namespace netagent manages; uplink0 (one end of a
#                     veth pair) plays the physical uplink
#   netagent-demo-up  the upstream router at 192.0.2.1 (the other end)
#
# It validates, plans and applies the intent, runs the daemon on it, then
# shows the daemon's status, `netagent check` and the kernel's own view
# (ip, iptables). Both namespaces are deleted at the end (KEEP=1 keeps them).
# DEMO_NS names the namespace (and DEMO_NS-up the router's) and DEMO_BIN the
# directory of the binary, for the test that runs this script.
set -euo pipefail
cd "$(dirname "$0")/.."

ns=${DEMO_NS:-netagent-demo}
up=$ns-up
intent=examples/gateway.json
bindir=${DEMO_BIN:-bin}

./scripts/setup.sh >/dev/null
mkdir -p "$bindir"
go build -o "$bindir/netagent" ./cmd/netagent
work=$(mktemp -d)
daemon=

cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	if [ "${KEEP:-}" != 1 ]; then
		ip netns del "$ns" 2>/dev/null || true
		ip netns del "$up" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
na() { "$bindir/netagent" --netns "$ns" --state-dir "$work/state" "$@"; }

step "a throwaway namespace $ns with uplink0 (a veth end) to the upstream router in $up"
ip netns del "$ns" 2>/dev/null || true
ip netns del "$up" 2>/dev/null || true
ip netns add "$ns"
ip netns add "$up"
ip -n "$ns" link set lo up
ip -n "$up" link set lo up
ip -n "$ns" link add uplink0 type veth peer name upstream netns "$up"
ip -n "$up" addr add 192.0.2.1/24 dev upstream
ip -n "$up" link set upstream up
ip -n "$ns" link set uplink0 up
ip -n "$ns" -br link

step "netagent validate $intent"
"$bindir/netagent" validate "$intent"

step "netagent plan $intent (a dry run: nothing changes)"
na plan "$intent"

step "netagent apply $intent"
na apply "$intent"

step "netagent apply $intent again: nothing to do"
na apply "$intent"

step "netagent run: the daemon keeps the namespace converged"
mkdir -p "$work/intents"
cp "$intent" "$work/intents/"
"$bindir/netagent" --netns "$ns" --state-dir "$work/state" --log-level warn \
	run --intent-dir "$work/intents" --socket "$work/netagent.sock" &
daemon=$!
for _ in $(seq 100); do
	"$bindir/netagent" status --socket "$work/netagent.sock" --json 2>/dev/null | grep -q '"ready": *true' && break
	sleep 0.1
done

step "netagent status"
"$bindir/netagent" status --socket "$work/netagent.sock"

step "netagent check --via-daemon (the daemon serves the namespace: the kernel against the daemon's intent)"
na check --via-daemon

step "the kernel's own view"
ip -n "$ns" -br link
ip -n "$ns" -br addr
ip -n "$ns" route show table all | grep -v -e '^local' -e '^multicast' -e 'proto kernel' || true
ip -n "$ns" rule
ip -n "$ns" neigh show nud permanent
ip netns exec "$ns" iptables -S
ip netns exec "$ns" iptables -t nat -S
ip netns exec "$ns" sysctl net.ipv4.ip_forward
step "the upstream router answers through uplink0 (inside the namespaces only)"
ip netns exec "$ns" ping -c1 -W2 192.0.2.1
