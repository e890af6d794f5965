#!/usr/bin/env bash
# Installs the system packages imgwarm needs, then builds. Idempotent; run
# as root on a fresh Debian/Ubuntu machine.
#   scripts/setup.sh              every package (build, tests, packaging,
#                                 benchmarks) + debug build with the tests
#   scripts/setup.sh --release    every package + release build
#   scripts/setup.sh --install    only what building needs (pkg-config, the
#                                 -dev packages of `required`) + release build:
#                                 scripts/install.sh
#   scripts/setup.sh --demo       the same plus python3 (the demo's server):
#                                 scripts/demo.sh
#   scripts/setup.sh --build-deps what scripts/package.sh needs (what building
#                                 needs, dpkg-dev), no build: the Dockerfile's
#                                 build stage
set -euo pipefail
cd "$(dirname "$0")/.."

# Needed to build and to run the tests at all.
required=(
  pkg-config
  libcurl4-openssl-dev   # download engine (curl multi)
  libpng-dev             # PNG validation
  libdeflate-dev         # PNG/APNG image data inflated in one call (zlib decides what it does not pass)
  libjpeg-dev            # JPEG validation (libjpeg-turbo)
  libgif-dev             # GIF validation
  libtiff-dev            # TIFF strips the header cannot judge (decoded with libtiff)
  libsqlite3-dev         # state store (GRDB)
  libwebp-dev            # WebP validation (still and animated)
  libavif-dev libaom-dev # AVIF validation (libaom decodes AV1) and the tests' encoder
  libheif-dev            # HEIC/HEIF validation and the tests' encoder (x265)
  libjxl-dev             # JPEG XL validation and the tests' encoder
  imagemagick            # test images (ICO, BMP, TIFF), bench/bench-validate.sh
  webp libavif-bin libheif-examples libjxl-tools   # cwebp, avifenc, heif-enc, cjxl: test images, fuzz seeds, bench
  python3                # demo server, test summary, bench helpers
  nginx                  # TLS/HTTP2 tests (and the benchmarks)
  openssl                # self-signed certificates for the TLS tests
  prometheus             # promtool checks the --metrics output in the tests
  default-jdk-headless libokhttp-java libokio-java   # OkHttp's DiskLruCache reads the glide/coil folders in the tests
  tmux                   # the progress bar and completion tests read a real terminal (a tmux pane)
  man-db                 # `man imgwarm` after scripts/install.sh, in the tests
  time                   # GNU time: the peak RSS of the binary in the decode memory tests (and the benchmarks)
  strace                 # the tests count failed close(2) calls of the binary (a descriptor closed twice)
)
# scripts/package.sh (dpkg-shlibdeps, dpkg-gencontrol) and
# scripts/test-package.sh (lintian, a clean Debian root with mmdebstrap, the
# examples' YAML).
packaging=(
  dpkg-dev
  lintian
  mmdebstrap
  python3-yaml
)
# Used by the demo and the benchmarks only (no test needs them: a test that
# needs a tool fails under CI without it): installed best effort, so a
# package a mirror lacks cannot stop the build and the tests.
optional=(
  curl aria2 wget2 hyperfine   # the peers in bench/bench.sh
  sqlite3                # to look into .imgwarm/state.sqlite by hand
  valgrind               # bench/decode-cost.sh (callgrind instruction counts)
)

missing() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"; }
mode="${1:-}"
case "$mode" in
  "" | --release) ;;
  --build-deps | --install | --demo)
    # Building needs the libraries' headers and pkg-config files, not the
    # test tools, nginx, prometheus or the packaging tools.
    mapfile -t required < <(printf '%s\n' "${required[@]}" | grep -E -e '-dev$' -e '^pkg-config$')
    packaging=()
    optional=()
    if [ "$mode" = --build-deps ]; then packaging=(dpkg-dev); fi
    if [ "$mode" = --demo ]; then required+=(python3); fi
    ;;
  *) echo "setup: unknown option $mode (--release, --install, --demo, --build-deps)" >&2; exit 2 ;;
esac
mapfile -t need < <(missing "${required[@]}" "${packaging[@]}")
mapfile -t want < <(missing "${optional[@]}")
if ((${#need[@]} + ${#want[@]})); then
  echo "setup: installing ${need[*]} ${want[*]}"
  $SUDO apt-get update -qq
fi
if ((${#need[@]})); then apt_install "${need[@]}"; fi
if ((${#want[@]})); then
  apt_install "${want[@]}" || for p in "${want[@]}"; do
    apt_install "$p" || echo "setup: warning: could not install $p (used by the benchmarks only)" >&2
  done
fi

export PATH="/opt/swift/usr/bin:$PATH"
case "$mode" in
  --build-deps) ;;
  --release | --install | --demo) swift build -c release --product imgwarm ;;
  *) swift build --build-tests --explicit-target-dependency-import-check error ;;
esac
