#!/usr/bin/env bash
# Validation throughput: images/s and MB/s per format at thumbnail and
# photo sizes, one thread, release build: JPEG, PNG and GIF (ImageMagick),
# WebP still, lossless and animated (cwebp, img2webp), APNG (the PNG frames
# assembled here), AVIF (avifenc), HEIC (heif-enc), JPEG XL (cjxl), and the
# header-checked BMP, ICO and TIFF (ImageMagick).
# Images come from ImageMagick's plasma fractal with noise, which compresses
# like photographs (flat or random pixels would flatter or punish codecs).
#   bench/bench-validate.sh [SECONDS_PER_GROUP]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds="${1:-3}"

for tool in convert cwebp img2webp avifenc heif-enc cjxl python3; do
  command -v "$tool" >/dev/null || { echo "bench-validate: needs $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done
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
  # The other formats from the same kind of picture, as PNG sources.
  convert -seed "$seed" -size 360x270 plasma:fractal $photo "$dir/src_thumb-$seed.png"
  convert -seed "$seed" -size 1200x900 plasma:fractal $photo "$dir/src_photo-$seed.png"
  for size in thumb photo; do
    src="$dir/src_$size-$seed.png"
    cwebp -quiet -q 80 "$src" -o "$dir/webp_$size-$seed.webp"
    avifenc -s 8 "$src" "$dir/avif_$size-$seed.avif" >/dev/null
    heif-enc -q 60 "$src" -o "$dir/heic_$size-$seed.heic" >/dev/null
    cjxl "$src" "$dir/jxl_$size-$seed.jxl" -d 1.5 >/dev/null 2>&1
  done
  cwebp -quiet -lossless "$dir/png_thumb-$seed.png" -o "$dir/webp_lossless_thumb-$seed.webp"
  convert -seed "$seed" -size 180x180 plasma:fractal -blur 0x2 "PNG24:$dir/f1-$seed.png"
  convert -seed "$((seed + 10))" -size 180x180 plasma:fractal -blur 0x2 "PNG24:$dir/f2-$seed.png"
  convert -seed "$((seed + 20))" -size 180x180 plasma:fractal -blur 0x2 "PNG24:$dir/f3-$seed.png"
  img2webp -loop 0 -lossy "$dir/f1-$seed.png" "$dir/f2-$seed.png" "$dir/f3-$seed.png" -o "$dir/webp_animated_thumb-$seed.webp" >/dev/null 2>&1
  # APNG: ImageMagick 6 writes none, so the three frames' IDAT streams are
  # put into acTL/fcTL/fdAT chunks here.
  python3 - "$dir/apng_thumb-$seed.png" "$dir/f1-$seed.png" "$dir/f2-$seed.png" "$dir/f3-$seed.png" <<'PY'
import struct, sys, zlib
def chunks(path):
    d = open(path, 'rb').read(); i = 8
    while i < len(d):
        n = int.from_bytes(d[i:i + 4], 'big'); yield d[i + 4:i + 8], d[i + 8:i + 8 + n]; i += 12 + n
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
frames = [list(chunks(p)) for p in sys.argv[2:]]
ihdr = dict(frames[0])[b'IHDR']; w, h = struct.unpack('>II', ihdr[:8])
out = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + chunk(b'acTL', struct.pack('>II', len(frames), 0))
seq = 0
for k, f in enumerate(frames):
    assert dict(f)[b'IHDR'] == ihdr, 'frames differ in IHDR'
    out += chunk(b'fcTL', struct.pack('>IIIIIHHBB', seq, w, h, 0, 0, 1, 10, 0, 0)); seq += 1
    for t, d in f:
        if t != b'IDAT': continue
        if k == 0: out += chunk(b'IDAT', d)
        else: out += chunk(b'fdAT', struct.pack('>I', seq) + d); seq += 1
open(sys.argv[1], 'wb').write(out + chunk(b'IEND', b''))
PY
  # Animated AVIF (a 3-frame sequence) and JPEG XL (from the APNG).
  avifenc -s 8 "$dir/f1-$seed.png" "$dir/f2-$seed.png" "$dir/f3-$seed.png" "$dir/avif_sequence_thumb-$seed.avif" >/dev/null
  cjxl "$dir/apng_thumb-$seed.png" "$dir/jxl_animated_thumb-$seed.jxl" -d 1.5 >/dev/null 2>&1
  convert "$dir/png_thumb-$seed.png" "$dir/bmp_thumb-$seed.bmp"
  convert "$dir/png_thumb-$seed.png" -resize 64x64 "$dir/ico_thumb-$seed.ico"
  convert "$dir/png_thumb-$seed.png" "$dir/tiff_thumb-$seed.tif"
  rm -f "$dir"/src_*-"$seed".png "$dir"/f[123]-"$seed".png
done
echo "validation throughput, 1 thread, $(nproc) cores, ${seconds}s per group:"
"$bin" "$seconds" "$dir"/*
