#!/usr/bin/env bash
# Sets up the machine (packages, build) and runs every test, then the
# fuzzers for a short time each (IMGWARM_FUZZ_SECONDS, default 30; 0 skips
# them). Fails when a test fails or a fuzzer finds a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="/opt/swift/usr/bin:$PATH"
swift test --skip-build "$@"
fuzz_seconds="${IMGWARM_FUZZ_SECONDS:-30}"
if [ "$fuzz_seconds" != 0 ]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
