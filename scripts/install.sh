#!/usr/bin/env bash
# Installs what building needs (the image libraries' -dev packages and
# pkg-config, nothing for tests or packaging), makes a release build and
# installs it as $PREFIX/bin/imgwarm (default PREFIX=/usr/local).
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${PREFIX:-/usr/local}"
scripts/setup.sh --install
export PATH="/opt/swift/usr/bin:$PATH"
bin="$(swift build -c release --show-bin-path)/imgwarm"
install -d "$PREFIX/bin"
install -m 0755 "$bin" "$PREFIX/bin/imgwarm"
echo "installed $PREFIX/bin/imgwarm ($("$PREFIX/bin/imgwarm" --version))"
