#!/bin/sh
# Installs netagent: the binary and the systemd unit (as root).
#
#   scripts/install.sh [BINARY]
#
# BINARY is a netagent binary built already; without it, the script builds
# one from this checkout (Go 1.26 on the PATH), its version and revision
# stamped from git (git describe, git rev-parse HEAD). NETAGENT_TAGS are
# the build tags of that build: NETAGENT_TAGS=nofleet builds netagent
# without the fleet (no etcd client, no gRPC: docs/binary-size.md).
#
# Where the files go (every path is prefixed with $DESTDIR):
#   $PREFIX/sbin/netagent                    the binary (PREFIX: /usr/local)
#   $UNITDIR/netagent.service                the unit (UNITDIR: $PREFIX/lib/systemd/system
#                                            for /usr and /usr/local, which systemd searches;
#                                            /etc/systemd/system for any other PREFIX)
#   $PREFIX/share/doc/netagent/README.md     the documentation the unit points to
#   $PREFIX/share/man/man8/netagent*.8       the man pages, made from docs/commands/*.md
#   $PREFIX/share/man/man5/netagent.json.5   and docs/intent.md by internal/docgen (go run;
#                                            dated by SOURCE_DATE_EPOCH or the last commit)
#   $PREFIX/share/bash-completion/completions/netagent   shell completion, written by
#   $PREFIX/share/zsh/site-functions/_netagent           `netagent completion SHELL`
#   $PREFIX/share/fish/vendor_completions.d/netagent.fish  (where each shell looks)
#   /etc/netagent/                           the intent directory (mode 0750, kept if present)
#
# DESTDIR (default: none, the running system) is a staging root for
# packages and tests: the files land under it, but name the paths they will
# have on the target, $PREFIX/... The unit names $PREFIX/sbin/netagent in
# ExecStart= (the shipped unit says /usr/local; another PREFIX rewrites it).
#
# Then: systemctl daemon-reload && systemctl enable --now netagent
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
case "$PREFIX" in
/usr | /usr/local) UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system} ;;
*) UNITDIR=${UNITDIR:-/etc/systemd/system} ;;
esac
case "$PREFIX" in
/*) ;;
*)
	echo "install.sh: PREFIX must be an absolute path: $PREFIX" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -ge 1 ]; then
	bin=$1
else
	bin=$tmp/netagent
	# The version and revision from git, stamped: a build environment
	# with GOFLAGS=-buildvcs=false (many packaging ones) stamps none.
	ldflags=
	if rev=$(git -C "$here" rev-parse HEAD 2>/dev/null); then
		ldflags="-X main.version=$(git -C "$here" describe --tags --always --dirty) -X main.revision=$rev"
	fi
	(cd "$here" && go build -trimpath -tags "${NETAGENT_TAGS:-}" -ldflags "$ldflags" -o "$bin" ./cmd/netagent)
fi
if [ ! -x "$bin" ]; then
	echo "install.sh: $bin is not an executable" >&2
	exit 2
fi

# The unit, with the paths of this PREFIX.
sed -e "s#^ExecStart=/usr/local/sbin/netagent #ExecStart=$PREFIX/sbin/netagent #" \
	-e "s#^ExecStartPre=/usr/local/sbin/netagent #ExecStartPre=$PREFIX/sbin/netagent #" \
	-e "s#^Documentation=file:///usr/local/share/doc/#Documentation=file://$PREFIX/share/doc/#" \
	"$here/systemd/netagent.service" >"$tmp/netagent.service"
grep -q "^ExecStart=$PREFIX/sbin/netagent " "$tmp/netagent.service" || {
	echo "install.sh: systemd/netagent.service has no ExecStart=/usr/local/sbin/netagent to rewrite" >&2
	exit 1
}

install -D -m 0755 "$bin" "$DESTDIR$PREFIX/sbin/netagent"
install -D -m 0644 "$tmp/netagent.service" "$DESTDIR$UNITDIR/netagent.service"
install -D -m 0644 "$here/README.md" "$DESTDIR$PREFIX/share/doc/netagent/README.md"
# The man pages, from the docs/ pages whose first line is "# name(section)".
mandate=
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	mandate=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)
elif ! mandate=$(git -C "$here" log -1 --format=%cs 2>/dev/null) || [ -z "$mandate" ]; then
	mandate=$(date -u +%F)
fi
mansource="netagent $(git -C "$here" describe --tags --always --dirty 2>/dev/null || true)"
set -- "$here/docs/intent.md"
for page in "$here"/docs/commands/*.md; do
	if [ -e "$page" ]; then set -- "$@" "$page"; fi
done
if command -v go >/dev/null; then
	(cd "$here" && go run ./internal/docgen man -date "$mandate" -source "${mansource% }" -o "$tmp/man" "$@")
	for page in "$tmp"/man/man[1-8]/*; do
		sect=$(basename "$(dirname "$page")")
		install -D -m 0644 "$page" "$DESTDIR$PREFIX/share/man/$sect/$(basename "$page")"
	done
else
	echo "install.sh: go is not on the PATH: the man pages (made by go run ./internal/docgen) are not installed" >&2
fi

for shell in bash zsh fish; do
	"$bin" completion "$shell" >"$tmp/completion.$shell"
done
install -D -m 0644 "$tmp/completion.bash" "$DESTDIR$PREFIX/share/bash-completion/completions/netagent"
install -D -m 0644 "$tmp/completion.zsh" "$DESTDIR$PREFIX/share/zsh/site-functions/_netagent"
install -D -m 0644 "$tmp/completion.fish" "$DESTDIR$PREFIX/share/fish/vendor_completions.d/netagent.fish"
[ -d "$DESTDIR/etc/netagent" ] || install -d -m 0750 "$DESTDIR/etc/netagent"

echo "installed $DESTDIR$PREFIX/sbin/netagent and $DESTDIR$UNITDIR/netagent.service"
if [ -z "$DESTDIR" ]; then
	echo "next: put intent files in /etc/netagent (owned by root, not writable by others), then"
	echo "      systemctl daemon-reload && systemctl enable --now netagent"
fi
