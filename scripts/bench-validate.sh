#!/usr/bin/env bash
# Validation throughput: images/s and MB/s for JPEG, PNG and GIF at
# thumbnail (~20 KB) and photo (~200 KB) sizes, one thread, release build.
# Images come from ImageMagick's plasma fractal with noise, which compresses
# like photographs (flat or random pixels would flatter or punish codecs).
#   scripts/bench-validate.sh [SECONDS_PER_GROUP]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds="${1:-3}"

command -v convert >/dev/null || { echo "bench-validate: needs ImageMagick (scripts/setup.sh installs it)" >&2; exit 2; }
swift build -c release --product validate-bench >&2
bin="$(swift build -c release --show-bin-path)/validate-bench"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for seed in 1 2 3 4; do
  photo="-attenuate 0.4 +noise Gaussian"
  convert -seed "$seed" -size 360x270 plasma:fractal $photo -quality 80 "$dir/jpeg_thumb-$seed.jpg"
  convert -seed "$seed" -size 1200x900 plasma:fractal $photo -quality 82 "$dir/jpeg_photo-$seed.jpg"
  convert -seed "$seed" -size 1200x900 plasma:fractal $photo -quality 82 -interlace Plane "$dir/jpeg_progressive_photo-$seed.jpg"
  convert -seed "$seed" -size 160x115 plasma:fractal -blur 0x2 -depth 8 "$dir/png_thumb-$seed.png"
  convert -seed "$seed" -size 540x400 plasma:fractal -blur 0x2 -depth 8 "$dir/png_photo-$seed.png"
  convert -seed "$seed" -size 180x180 plasma:fractal -colors 128 "$dir/gif_thumb-$seed.gif"
  convert -seed "$seed" -size 580x440 plasma:fractal -colors 256 "$dir/gif_photo-$seed.gif"
done
echo "validation throughput, 1 thread, $(nproc) cores, ${seconds}s per group:"
"$bin" "$seconds" "$dir"/*
