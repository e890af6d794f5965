#!/usr/bin/env bash
# Decoder verdicts before and after a change to Sources/CImageCodecs: builds
# a small C driver against the shims of REV (default: main) and of the work
# tree, runs both over fuzz/corpus/image, examples/images and ~130 mutants of
# each (truncations, byte flips, clobbered runs, header bit flips; seeded, so
# the same every run), with the default pixel limit and a 2,000-pixel one,
# and diffs status, width, height, frames and reason line by line.
#   scripts/decode-verdicts.sh [REV]     exit 0: identical verdicts
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:-main}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/old" "$dir/new" "$dir/seeds" "$dir/mut"
for f in $(git ls-tree --name-only "$rev" Sources/CImageCodecs/ Sources/CImageCodecs/include/); do
  case "$f" in *.c|*.h) git show "$rev:$f" > "$dir/old/$(basename "$f")" ;; esac
done
cp Sources/CImageCodecs/*.c Sources/CImageCodecs/*.h Sources/CImageCodecs/include/*.h "$dir/new/"
cat > "$dir/driver.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "imgwarm_codecs.h"
/* One line per file, decoder and pixel limit: every decoder on every file,
   whatever its signature, so that a change of error path shows too. */
int main(int argc, char **argv) {
    static const struct { const char *name; int (*fn)(const uint8_t *, size_t, uint64_t, iw_result *); } d[] = {
        {"png", iw_validate_png}, {"jpeg", iw_validate_jpeg}, {"gif", iw_validate_gif}};
    for (int k = 1; k < argc; k++) {
        FILE *f = fopen(argv[k], "rb");
        if (!f) continue;
        fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
        unsigned char *b = malloc(n ? n : 1);
        size_t got = fread(b, 1, n, f); fclose(f);
        for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
            uint64_t limits[] = {100000000, 2000};
            for (int l = 0; l < 2; l++) {
                iw_result r;
                int s = d[i].fn(b, got, limits[l], &r);
                printf("%s\t%s\t%llu\t%d\t%u\t%u\t%u\t%s\n", strrchr(argv[k], '/') + 1, d[i].name,
                       (unsigned long long)limits[l], s, r.width, r.height, r.frames, r.reason);
            }
        }
        free(b);
    }
    return 0;
}
C
# The libraries the package links (the shims' and a few more: harmless).
libs=$(grep -o 'linkedLibrary("[A-Za-z0-9_+-]*")' Package.swift | sort -u | sed 's/linkedLibrary("\(.*\)")/-l\1/')
# and the system-library targets' (pkg-config: libdeflate, libcurl).
for pc in $(grep -o 'pkgConfig: "[^"]*"' Package.swift | cut -d'"' -f2); do libs="$libs $(pkg-config --libs "$pc")"; done
for v in old new; do
  cc -O1 -I"$dir/$v" -o "$dir/driver-$v" "$dir/driver.c" "$dir/$v"/*.c $libs -lm -lpthread
done
cp fuzz/corpus/image/* examples/images/* "$dir/seeds/"
python3 - "$dir/seeds" "$dir/mut" <<'PY'
import os, random, sys
src, dst = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(src)):
    data = open(os.path.join(src, name), "rb").read()
    base = name.replace(" ", "_")
    open(os.path.join(dst, base), "wb").write(data)
    rnd, n = random.Random(base), len(data)
    def put(tag, b): open(os.path.join(dst, f"{base}.{tag}"), "wb").write(bytes(b))
    for i in range(25):
        put(f"t{i}", data[:rnd.randrange(0, n) if i > 2 else [0, 1, n - 1][i]])
    for i in range(60):
        b = bytearray(data)
        for _ in range(1 + i % 3):
            b[rnd.randrange(0, n)] = rnd.randrange(256)
        put(f"f{i}", b)
    for i in range(15):
        b = bytearray(data); p = rnd.randrange(0, n); l = rnd.randrange(1, 64)
        b[p:p + l] = bytes(rnd.randrange(256) for _ in range(l))
        put(f"c{i}", b)
    for i in range(30):
        b = bytearray(data); p = rnd.randrange(0, min(n, 1024)); b[p] ^= 1 << rnd.randrange(8)
        put(f"h{i}", b)
PY
"$dir/driver-old" "$dir"/mut/* > "$dir/old.txt"
"$dir/driver-new" "$dir"/mut/* > "$dir/new.txt"
echo "$(ls "$dir/mut" | wc -l) files x 3 decoders x 2 pixel limits: $(wc -l < "$dir/new.txt") verdicts"
if diff "$dir/old.txt" "$dir/new.txt"; then echo "verdicts identical to $rev"; else echo "verdicts differ from $rev"; exit 1; fi
