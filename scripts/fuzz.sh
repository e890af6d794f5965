#!/usr/bin/env bash
# libFuzzer runs of the manifest line parser, of image validation, of the GIF
# LZW check against giflib, of the PNG inflate paths against each other and
# of the index readers (journals, flutter rows)
# (fuzz/README.md). Builds the fuzz targets with swiftc -sanitize=fuzzer,address
# against the engine's targets (each compiled from its folder), runs each
# for SECONDS (default 60), and fails
# (exit 1) when a fuzzer finds a crash, a hang (> 10 s for one input), a
# memory error, a broken invariant, (gif-diff) a GIF verdict that differs
# from giflib's own decoding, (png-inflate) a PNG verdict of the fast
# inflate path that differs from zlib's path or (index) a name that is no
# plain file name, or fails the index's rule, reaching an unlink or a
# rename; the input is kept in .build/fuzz/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
# IMGWARM_FUZZ_TARGETS="png-inflate gif-diff": run only the named targets
# (all are built).
# IMGWARM_FUZZ_RUNS=N: instead, N inputs per target from a fixed seed (-seed=1,
# a new corpus folder): the same inputs on every machine, so a CI run checks
# the decoders against a known set rather than a random draw (scripts/test.sh
# uses it under CI); SECONDS then only caps the time.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds="${1:-60}"
out=.build/fuzz
mkdir -p "$out/obj" "$out/module"

# gold warns about every ASan helper symbol: keep the build quiet unless it fails.
build() { "$@" >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 2; }; }

# The C codecs, instrumented for coverage and ASan like the Swift code.
cflags=(-O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CImageCodecs/include)
objs=()
for c in Sources/CImageCodecs/*.c; do
  o="$out/obj/$(basename "$c" .c).o"
  build clang "${cflags[@]}" -c "$c" -o "$o"
  objs+=("$o")
done
cat > "$out/module/module.modulemap" <<MAP
module CImageCodecs {
    header "$PWD/Sources/CImageCodecs/include/imgwarm_codecs.h"
    export *
}
MAP

# CFileScan: the decoders hand freed memory back through its malloc_trim
# wrapper (Sources/ImgWarmSupport/BufferAllocator.swift) after a large decode.
mkdir -p "$out/module-fs"
build clang "${cflags[@]}" -I Sources/CFileScan/include -c Sources/CFileScan/fs.c -o "$out/obj/fs.o"
cat > "$out/module-fs/module.modulemap" <<MAP
module CFileScan {
    header "$PWD/Sources/CFileScan/include/imgwarm_fs.h"
    export *
}
MAP

swiftflags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 5)
# The engine's targets (Sources/ImgWarm*), each compiled from its folder as a
# module with the fuzzer's instrumentation, in dependency order; what they
# import from other packages (swift-collections, swift-crypto, GRDB) comes
# uninstrumented from the debug build, so `swift build` must have run.
dbg=.build/debug
[ -d "$dbg/Modules" ] || { echo "fuzz: no $dbg/Modules: run swift build first" >&2; exit 2; }
deps_archive="$out/deps.a"
rm -f "$deps_archive"
# Every object of the other packages' targets (the linker takes only the
# members the harness needs).
find "$dbg"/ -name '*.o' -path '*.build/*' -print0 \
  | grep -zvE '/(ImgWarm[A-Za-z]*|imgwarm|validate_bench|validate-bench|TestSupport|CImageFixtures|CGifReference|CImageCodecs|CFileScan|[A-Za-z]*Tests|NIO[A-Za-z]*|CNIO[A-Za-z]*|ArgumentParser[A-Za-z]*|imgwarmPackage[A-Za-z]*|generate_[a-z_]*|[A-Za-z_-]*tool)\.build/' \
  | xargs -0 ar rcs "$deps_archive"
# engine_modules OUTDIR FLAGS-ARRAY-NAME MODULE...: compiles each module's folder.
engine_modules() {
  local dir="$1"; shift
  local -n mflags="$1"; shift
  mkdir -p "$dir"
  for m in "$@"; do
    build swiftc "${mflags[@]}" -enable-testing -wmo -module-name "$m" -package-name imgwarm \
      -emit-module -emit-module-path "$dir/$m.swiftmodule" -c -o "$dir/$m.o" \
      -I "$dir" -I "$dbg/Modules" \
      -Xcc -fmodule-map-file="$PWD/Sources/CCurl/module.modulemap" -I/usr/include/x86_64-linux-gnu \
      -Xcc -fmodule-map-file="$out/module/module.modulemap" -Xcc -fmodule-map-file="$out/module-fs/module.modulemap" \
      -Xcc -fmodule-map-file="$PWD/.build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap" \
      $(for h in .build/checkouts/swift-crypto/Sources/C*/include/module.modulemap; do echo "-Xcc -fmodule-map-file=$PWD/$h"; done) \
      $(find "Sources/$m" -name '*.swift' | sort)
  done
}
libs=(-lcurl -lsqlite3 -lpng16 -ljpeg -lgif -lwebp -lwebpdemux -lz -ltiff -lavif -laom -lheif -ljxl -ljxl_threads -ldeflate -ldl)
echo "fuzz: building the engine's targets" >&2
engine_modules "$out/engine" swiftflags ImgWarmSupport ImgWarmDecode ImgWarmDownload ImgWarmCache ImgWarmInspect ImgWarmReport ImgWarmWarm
eng() { for m in "$@"; do echo "$out/engine/$m.o"; done; }
harness() {  # harness NAME SOURCE MODULES...
  local name="$1" src="$2"; shift 2
  echo "fuzz: building the $name target" >&2
  build swiftc "${swiftflags[@]}" -module-name "ImgWarmFuzz$name" -package-name imgwarm -o "$out/fuzz-$name" \
    -I "$out/engine" -I "$dbg/Modules" \
    -Xcc -fmodule-map-file="$PWD/Sources/CCurl/module.modulemap" \
    -Xcc -fmodule-map-file="$out/module/module.modulemap" -Xcc -fmodule-map-file="$out/module-fs/module.modulemap" \
    -Xcc -fmodule-map-file="$PWD/.build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap" \
    $(for h in .build/checkouts/swift-crypto/Sources/C*/include/module.modulemap; do echo "-Xcc -fmodule-map-file=$PWD/$h"; done) \
    "$src" $(eng "$@") "${objs[@]}" "$out/obj/fs.o" "$deps_archive" "${libs[@]}"
}
harness manifest fuzz/harness/ManifestFuzz.swift ImgWarmSupport ImgWarmDecode ImgWarmDownload ImgWarmCache ImgWarmInspect ImgWarmReport ImgWarmWarm
harness image fuzz/harness/ImageFuzz.swift ImgWarmSupport ImgWarmDecode
harness index fuzz/harness/IndexFuzz.swift ImgWarmSupport ImgWarmCache
echo "fuzz: building the decode-memory target" >&2
# The decoders' heap peak against DecodeMemory's estimate: malloc is
# interposed (fuzz/harness/peak_malloc.c), so this target has no ASan (its
# allocator would take the same names); the C codecs and the targets are
# built again without it.
mkdir -p "$out/obj-plain" "$out/module-peak"
plain=()
for c in Sources/CImageCodecs/*.c; do
  o="$out/obj-plain/$(basename "$c" .c).o"
  build clang -O1 -g -fsanitize=fuzzer-no-link -I Sources/CImageCodecs/include -c "$c" -o "$o"
  plain+=("$o")
done
build clang -O1 -g -c fuzz/harness/peak_malloc.c -o "$out/obj-plain/peak_malloc.o"
build clang -O1 -g -I Sources/CFileScan/include -c Sources/CFileScan/fs.c -o "$out/obj-plain/fs.o"
cat > "$out/module-peak/module.modulemap" <<MAP
module CPeakMalloc {
    header "$PWD/fuzz/harness/peak_malloc.h"
    export *
}
MAP
plainflags=(-sanitize=fuzzer -parse-as-library -O -g -swift-version 5)
engine_modules "$out/engine-plain" plainflags ImgWarmSupport ImgWarmDecode
build swiftc "${plainflags[@]}" -module-name ImgWarmFuzzDecodeMemory -package-name imgwarm \
  -o "$out/fuzz-decode-memory" -I "$out/engine-plain" -I "$dbg/Modules" \
  -Xcc -fmodule-map-file="$PWD/Sources/CCurl/module.modulemap" \
  -Xcc -fmodule-map-file="$out/module/module.modulemap" -Xcc -fmodule-map-file="$out/module-fs/module.modulemap" \
  -Xcc -fmodule-map-file="$out/module-peak/module.modulemap" \
  fuzz/harness/DecodeMemoryFuzz.swift "$out/engine-plain/ImgWarmSupport.o" "$out/engine-plain/ImgWarmDecode.o" \
  "${plain[@]}" "$out/obj-plain/fs.o" "$out/obj-plain/peak_malloc.o" "$deps_archive" -Xlinker --export-dynamic \
  "${libs[@]}"

# decode-memory seeds: the image corpus and large valid images of every
# decoded format (the estimate matters where the decoders allocate much),
# remade on every run.
seeds_mem="$out/seeds-decode-memory"
rm -rf "$seeds_mem" && mkdir -p "$seeds_mem"
cp fuzz/corpus/image/* "$seeds_mem/"
python3 - "$seeds_mem" <<'PY'
import struct, sys, zlib
out = sys.argv[1]
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
for k, (w, h, color, interlaced) in enumerate([(1500, 1500, 6, 0), (1200, 900, 2, 1), (2000, 2000, 0, 0), (800, 600, 4, 0)]):
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    raw = b''.join(b'\x01' + bytes((x * 7 + y) & 0xff for x in range(w * channels)) for y in range(h))
    png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, color, 0, 0, interlaced))
    png += chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
    open(f'{out}/large-{k}.png', 'wb').write(png)
PY

# Large valid seeds of the other decoded formats, made by the encoders
# scripts/setup.sh installs (ImageMagick, webp, libavif-bin,
# libheif-examples, libjxl-tools): smooth pictures, so each stays far below
# -max_len while its decoder allocates much. An AVIF grid (libavif decodes
# each tile with a decoder of its own) also comes with its grid item's
# ispe rewritten to 16x16. A missing encoder fails the run under CI (as a
# test's missing tool does, Tests/TestSupport/Tools.swift) and only skips
# its seeds elsewhere.
encoder() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "${CI:-}" = true ]; then
    echo "fuzz: $1 not found: the decode-memory seeds need it (CI=true: scripts/setup.sh installs it)" >&2
    exit 2
  fi
  echo "fuzz: warning: $1 not found, its decode-memory seeds are left out (install it, or run scripts/setup.sh)" >&2
  return 1
}
gen="$out/seeds-gen"
rm -rf "$gen" && mkdir -p "$gen"
if encoder convert; then
  convert -size 2000x2000 gradient:'#203040-#e0c080' -depth 8 "$gen/rgb.png"
  convert -size 1200x1200 gradient:'#203040-#e0c080' -depth 8 \( -size 1200x1200 gradient:white-'#00000080' \) \
    -alpha off -compose copy_opacity -composite "$gen/rgba.png"
  convert -size 800x800 gradient:'#102030-#f0e0d0' -depth 8 "$gen/frame-0.png"
  convert -size 800x800 gradient:'#f0e0d0-#102030' -depth 8 "$gen/frame-1.png"
  convert "$gen/rgb.png" -quality 85 -interlace none "$seeds_mem/large-baseline.jpg"
  convert -size 3000x3000 gradient:'#203040-#e0c080' -quality 85 -interlace Plane "$seeds_mem/large-progressive.jpg"
  convert -size 2500x2500 gradient:'#203040-#e0c080' -quality 90 -sampling-factor 1x1 -interlace Plane \
    "$seeds_mem/large-progressive-444.jpg"
  convert -size 1500x1500 gradient:'#203040-#e0c080' -colors 64 "$seeds_mem/large.gif"
  convert -delay 10 "$gen/frame-0.png" "$gen/frame-1.png" -colors 64 "$seeds_mem/large-animated.gif"
  if encoder cwebp; then
    cwebp -quiet -q 75 "$gen/rgb.png" -o "$seeds_mem/large-lossy.webp"
    cwebp -quiet -lossless "$gen/rgb.png" -o "$seeds_mem/large-lossless.webp"
    cwebp -quiet -q 75 "$gen/rgba.png" -o "$seeds_mem/large-lossy-alpha.webp"
  fi
  if encoder img2webp; then
    # img2webp says what it wrote on stderr: shown only when it fails.
    img2webp -loop 0 -lossy "$gen/frame-0.png" -lossless "$gen/frame-1.png" -o "$seeds_mem/large-animated.webp" \
      >"$gen/img2webp.log" 2>&1 || { cat "$gen/img2webp.log" >&2; exit 2; }
  fi
  if encoder avifenc; then
    avifenc -j 1 -s 10 "$gen/rgb.png" "$seeds_mem/large.avif" >/dev/null
    avifenc -j 1 -s 10 "$gen/rgba.png" "$seeds_mem/large-alpha.avif" >/dev/null
    # 4 x 4 tiles of 200x200 out of the 800x800 frame.
    avifenc -j 1 -s 10 --grid 4x4 "$gen/frame-0.png" "$seeds_mem/large-grid.avif" >/dev/null
    python3 - "$seeds_mem/large-grid.avif" "$seeds_mem/large-grid-ispe.avif" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
at = data.find(b'ispe\0\0\0\0' + struct.pack('>II', 800, 800))
assert at > 0, 'no ispe of the grid'
data[at + 8:at + 16] = struct.pack('>II', 16, 16)
open(sys.argv[2], 'wb').write(data)
PY
  fi
  if encoder heif-enc; then
    heif-enc -q 50 "$gen/rgb.png" -o "$seeds_mem/large.heic" >/dev/null
    heif-enc -q 50 "$gen/rgba.png" -o "$seeds_mem/large-alpha.heic" >/dev/null
  fi
  if encoder cjxl; then
    cjxl -e 3 -d 1 "$gen/rgb.png" "$seeds_mem/large.jxl" >/dev/null 2>&1
    cjxl -e 3 -d 0 "$gen/rgba.png" "$seeds_mem/large-lossless-alpha.jxl" >/dev/null 2>&1
  fi
fi

echo "fuzz: building the png-inflate target" >&2
build clang -fsanitize=fuzzer,address -O1 -g -I Sources/CImageCodecs/include -o "$out/fuzz-png-inflate" \
  fuzz/harness/png_inflate_fuzz.c "$out/obj/png_validate.o" "$out/obj/inflate_agree.o" "$out/obj/decode_limits.o" -lpng16 -lz -ldeflate

# png-inflate seeds: the PNG and APNG seeds of the image corpus, and small
# PNGs/APNGs whose zlib streams come in every form zlib writes (stored,
# fixed and dynamic Huffman, Huffman-only, RLE, windows of 512 B to 32 KiB,
# the image data split over several IDATs), remade on every run.
seeds_png="$out/seeds-png-inflate"
rm -rf "$seeds_png" && mkdir -p "$seeds_png"
cp fuzz/corpus/image/*.png fuzz/corpus/image/*.apng "$seeds_png/"
python3 - "$seeds_png" <<'PY'
import random, struct, sys, zlib
out = sys.argv[1]
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
def rows(w, h, channels, interlaced, rnd):
    # Filter bytes 0-4 and pixels with runs, so streams have matches.
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)] if interlaced else [(0, 0, 1, 1)]
    data = b''
    for x0, y0, dx, dy in passes:
        pw, ph = max(0, (w - x0 + dx - 1) // dx), max(0, (h - y0 + dy - 1) // dy)
        for _ in range(ph if pw else 0):
            data += bytes([rnd.randrange(5)]) + bytes(rnd.choice([7, 7, 7, rnd.randrange(256)]) for _ in range(pw * channels))
    return data
def deflate(raw, level, wbits, strategy):
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, 8, strategy)
    return c.compress(raw) + c.flush()
forms = [(0, 15, zlib.Z_DEFAULT_STRATEGY), (1, 15, zlib.Z_DEFAULT_STRATEGY), (9, 15, zlib.Z_DEFAULT_STRATEGY),
         (6, 15, zlib.Z_FIXED), (6, 15, zlib.Z_HUFFMAN_ONLY), (6, 15, zlib.Z_RLE), (6, 9, zlib.Z_DEFAULT_STRATEGY),
         (6, 12, zlib.Z_FILTERED)]
images = [(16, 8, 2, 0), (12, 6, 0, 1), (24, 4, 6, 0), (9, 7, 4, 1)]
rnd = random.Random(15)
n = 0
for w, h, color, interlaced in images:
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    raw = rows(w, h, channels, interlaced, rnd)
    ihdr = chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, color, 0, 0, interlaced))
    for level, wbits, strategy in forms:
        z = deflate(raw, level, wbits, strategy)
        parts = [z] if n % 3 else [z[:len(z) // 3], b'', z[len(z) // 3:]]
        png = b'\x89PNG\r\n\x1a\n' + ihdr + b''.join(chunk(b'IDAT', p) for p in parts) + chunk(b'IEND', b'')
        open(f'{out}/gen-{n:02d}.png', 'wb').write(png)
        n += 1
# APNG: the default image and two frames (the second a sub-rectangle).
w, h = 10, 6
ihdr = chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
for k, (level, wbits, strategy) in enumerate(forms[:4]):
    seq, body = 0, b''
    for f, (fw, fh) in enumerate([(w, h), (w, h), (4, 3)]):
        body += chunk(b'fcTL', struct.pack('>IIIIIHHBB', seq, fw, fh, 0, 0, 1, 10, 0, 0)); seq += 1
        z = deflate(rows(fw, fh, 3, 0, rnd), level, wbits, strategy)
        if f == 0: body += chunk(b'IDAT', z)
        else: body += chunk(b'fdAT', struct.pack('>I', seq) + z); seq += 1
    apng = b'\x89PNG\r\n\x1a\n' + ihdr + chunk(b'acTL', struct.pack('>II', 3, 0)) + body + chunk(b'IEND', b'')
    open(f'{out}/gen-anim-{k}.apng', 'wb').write(apng)
PY

echo "fuzz: building the gif-diff target" >&2
# The GIF LZW check against giflib's own decoding (Tests/CGifReference): C only.
build clang "${cflags[@]}" -fsanitize=fuzzer -I Tests/CGifReference/include -o "$out/fuzz-gif-diff" \
  fuzz/harness/gif_diff.c Tests/CGifReference/gif_reference.c "$out/obj/gif_validate.o" "$out/obj/decode_limits.o" -lgif

# A Swift runtime backtrace on top of ASan's report only adds noise.
export SWIFT_BACKTRACE=enable=no
# Leaks of system libraries on their own error paths (fuzz/lsan.supp says
# which and why); a leak with an imgwarm frame still fails the run.
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
status=0
for target in ${IMGWARM_FUZZ_TARGETS:-manifest image gif-diff png-inflate index decode-memory}; do
  seeds="fuzz/corpus/$target"
  [ "$target" = png-inflate ] && seeds="$seeds_png"
  [ "$target" = decode-memory ] && seeds="$seeds_mem"
  # Large images are what the estimate is for: longer inputs there.
  max_len=16384
  [ "$target" = decode-memory ] && max_len=1048576
  work="$out/corpus-$target"
  mkdir -p "$work"
  echo "fuzz: $target for ${seconds}s" >&2
  # The first corpus folder collects what the run finds (outside the repo);
  # the committed seeds are only read. -max_len: manifest lines are capped
  # at 64 KiB anyway; images stay small so each run covers more inputs.
  limit=(-max_total_time="$seconds")
  if [ -n "${IMGWARM_FUZZ_RUNS:-}" ]; then
    rm -rf "$work" && mkdir -p "$work"
    runs="$IMGWARM_FUZZ_RUNS"
    # decode-memory decodes inputs of up to 1 MiB whole (no ASan, but a
    # large PNG a run): a tenth of the runs of the others, at most 10,000.
    if [ "$target" = decode-memory ]; then runs=$(( runs / 10 < 10000 ? runs / 10 : 10000 )); fi
    limit+=(-runs="$runs" -seed=1)
  fi
  if ! "$out/fuzz-$target" "$work" "$seeds" \
      "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
      -artifact_prefix="$out/$target-" -print_final_stats=1 >"$out/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; input and log in $out/ ($target.log):" >&2
    grep -E "ERROR|invariant|Fatal error|SUMMARY|Test unit written|paths differ|  (fast|zlib): " "$out/$target.log" | head -20 >&2 || tail -30 "$out/$target.log" >&2
    status=1
  else
    echo "fuzz: $target ok ($(grep -E '^stat::number_of_executed_units' "$out/$target.log" | awk '{print $2}') inputs)" >&2
  fi
done
exit $status
