#!/usr/bin/env bash
# Runs every netagent test on a fresh machine (as root): installs what the
# tests need, then runs the unit, namespace and VM tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
go vet ./...
go vet -tags vmtest ./... # the VM tests' build, checked before any VM boots
go test -count=1 -timeout 30m ./...
