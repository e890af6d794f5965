#!/usr/bin/env bash
# Release build, installed as $PREFIX/bin/imgwarm (default PREFIX=/usr/local).
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${PREFIX:-/usr/local}"
scripts/setup.sh --release
export PATH="/opt/swift/usr/bin:$PATH"
bin="$(swift build -c release --show-bin-path)/imgwarm"
install -d "$PREFIX/bin"
install -m 0755 "$bin" "$PREFIX/bin/imgwarm"
echo "installed $PREFIX/bin/imgwarm ($("$PREFIX/bin/imgwarm" --version))"
