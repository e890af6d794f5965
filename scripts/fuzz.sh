#!/usr/bin/env bash
# libFuzzer runs of the manifest line parser and of image validation
# (fuzz/README.md). Builds the fuzz targets with swiftc -sanitize=fuzzer,address
# from the sources they test, runs each for SECONDS (default 60), and fails
# (exit 1) when a fuzzer finds a crash, a hang (> 10 s for one input), a
# memory error, a broken invariant or (gif-diff) a GIF verdict that differs
# from giflib's own decoding; the input is kept in .build/fuzz/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
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

swiftflags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 5)
echo "fuzz: building the manifest target" >&2
build swiftc "${swiftflags[@]}" -module-name ImgWarmFuzzManifest -o "$out/fuzz-manifest" \
  -Xcc -fmodule-map-file="$PWD/Sources/CCurl/module.modulemap" \
  fuzz/harness/ManifestFuzz.swift fuzz/harness/Shims.swift \
  Sources/ImgWarmKit/Prefetch/Manifest.swift \
  Sources/ImgWarmKit/Download/DownloadTypes.swift Sources/ImgWarmKit/Download/URLText.swift \
  Sources/ImgWarmKit/Support/Redaction.swift Sources/ImgWarmKit/Support/Version.swift \
  Sources/ImgWarmKit/Support/ParsedURL.swift Sources/ImgWarmKit/Support/URISyntax.swift \
  -lcurl
echo "fuzz: building the image target" >&2
build swiftc "${swiftflags[@]}" -module-name ImgWarmFuzzImage -o "$out/fuzz-image" \
  -Xcc -fmodule-map-file="$out/module/module.modulemap" \
  fuzz/harness/ImageFuzz.swift Sources/ImgWarmKit/Decode/*.swift "${objs[@]}" \
  -lpng16 -ljpeg -lgif -lwebp -lwebpdemux -lz -lavif -laom -lheif -ljxl -ljxl_threads

echo "fuzz: building the gif-diff target" >&2
# The GIF LZW check against giflib's own decoding (Tests/CGifReference): C only.
build clang "${cflags[@]}" -fsanitize=fuzzer -I Tests/CGifReference/include -o "$out/fuzz-gif-diff" \
  fuzz/harness/gif_diff.c Tests/CGifReference/gif_reference.c "$out/obj/gif_validate.o" -lgif

# A Swift runtime backtrace on top of ASan's report only adds noise.
export SWIFT_BACKTRACE=enable=no
# Leaks of system libraries on their own error paths (fuzz/lsan.supp says
# which and why); a leak with an imgwarm frame still fails the run.
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
status=0
for target in manifest image gif-diff; do
  work="$out/corpus-$target"
  mkdir -p "$work"
  echo "fuzz: $target for ${seconds}s" >&2
  # The first corpus folder collects what the run finds (outside the repo);
  # the committed seeds are only read. -max_len: manifest lines are capped
  # at 64 KiB anyway; images stay small so each run covers more inputs.
  limit=(-max_total_time="$seconds")
  if [ -n "${IMGWARM_FUZZ_RUNS:-}" ]; then
    rm -rf "$work" && mkdir -p "$work"
    limit+=(-runs="$IMGWARM_FUZZ_RUNS" -seed=1)
  fi
  if ! "$out/fuzz-$target" "$work" "fuzz/corpus/$target" \
      "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -artifact_prefix="$out/$target-" -print_final_stats=1 >"$out/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; input and log in $out/ ($target.log):" >&2
    grep -E "ERROR|invariant|Fatal error|SUMMARY|Test unit written" "$out/$target.log" | head -20 >&2 || tail -30 "$out/$target.log" >&2
    status=1
  else
    echo "fuzz: $target ok ($(grep -E '^stat::number_of_executed_units' "$out/$target.log" | awk '{print $2}') inputs)" >&2
  fi
done
exit $status
