#!/usr/bin/env bash
# Installs every system package imgwarm needs to build, test and benchmark,
# then builds. Idempotent; run as root on a fresh Debian/Ubuntu machine.
#   scripts/setup.sh            packages + debug build (tests)
#   scripts/setup.sh --release  packages + release build
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  pkg-config
  libcurl4-openssl-dev   # download engine (curl multi)
  libpng-dev             # PNG validation
  libjpeg-dev            # JPEG validation (libjpeg-turbo)
  libgif-dev             # GIF validation
  libsqlite3-dev         # state store (GRDB)
  nginx                  # loopback server for the demo and benchmarks
  curl aria2 wget2 hyperfine   # the peers in scripts/bench.sh
  python3                # test image generation helpers in scripts/
  imagemagick            # scripts/bench-validate.sh makes its images with convert
  openssl                # self-signed certificates for the TLS tests
  sqlite3                # PRAGMA integrity_check in the reliability tests
  time                   # peak RSS figures in the benchmarks
  prometheus             # promtool checks the --metrics output in the tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export PATH="/opt/swift/usr/bin:$PATH"
if [ "${1:-}" = "--release" ]; then
  swift build -c release --product imgwarm
else
  swift build --build-tests
fi
