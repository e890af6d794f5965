#!/usr/bin/env bash
# Sets up the machine (packages, build) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"
swift test --skip-build "$@"
