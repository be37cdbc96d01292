#!/usr/bin/env bash
# Runs every netagent test on a fresh machine (as root): installs what the
# tests need, then runs the unit, namespace and VM tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
go vet ./...
go vet -tags vmtest ./... # the VM tests' build, checked before any VM boots
# test/netns alone takes about 22 minutes on a loaded 2-core machine (its VM
# boot runs every TestInVM test under TCG): the package timeout leaves room.
go test -count=1 -timeout 60m ./...
