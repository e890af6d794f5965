#!/usr/bin/env bash
# Decode cost before and after a change to Sources/CImageCodecs: callgrind
# instructions inside the validator (iw_validate_* and all it calls) for
# each FILE, with the shims of REV and of the work tree, one process per file
# (so one-time costs such as the dynamic loader stay out of the count).
#   bench/decode-cost.sh REV FILE...
# Prints one line per file (instructions before, after, change) and the
# means; the format comes from the file's extension (.png .jpg .gif .webp).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"   # clang, as scripts/fuzz.sh
command -v valgrind >/dev/null || { echo "decode-cost: needs valgrind" >&2; exit 2; }
rev="$1"; shift
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/old" "$dir/new"
for f in $(git ls-tree --name-only "$rev" Sources/CImageCodecs/ Sources/CImageCodecs/include/); do
  case "$f" in *.c|*.h) git show "$rev:$f" > "$dir/old/$(basename "$f")" ;; esac
done
cp Sources/CImageCodecs/*.c Sources/CImageCodecs/*.h Sources/CImageCodecs/include/*.h "$dir/new/"
cat > "$dir/driver.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "imgwarm_codecs.h"
/* What callgrind counts: the call and everything under it. */
__attribute__((noinline)) static int measured(int (*fn)(const uint8_t *, size_t, uint64_t, iw_result *),
                                              const uint8_t *b, size_t n, iw_result *r) {
    return fn(b, n, 100000000, r);
}
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n ? n : 1);
    size_t got = fread(b, 1, n, f); fclose(f);
    const char *ext = strrchr(argv[1], '.');
    int (*fn)(const uint8_t *, size_t, uint64_t, iw_result *) =
        !ext ? NULL : !strcmp(ext, ".png") ? iw_validate_png : !strcmp(ext, ".jpg") ? iw_validate_jpeg
        : !strcmp(ext, ".gif") ? iw_validate_gif : !strcmp(ext, ".webp") ? iw_validate_webp : NULL;
    if (!fn) return 2;
    iw_result r;
    int s = measured(fn, b, got, &r);
    printf("%d %s\n", s, r.reason);
    return 0;
}
C
libs=$(grep -o 'linkedLibrary("[A-Za-z0-9_+-]*")' Package.swift | sort -u | sed 's/linkedLibrary("\(.*\)")/-l\1/')
# and the system-library targets' (pkg-config: libdeflate, libcurl), as scripts/decode-verdicts.sh.
for pc in $(grep -o 'pkgConfig: "[^"]*"' Package.swift | cut -d'"' -f2); do libs="$libs $(pkg-config --libs "$pc")"; done
# -gdwarf-4: valgrind 3.19 reads no DWARF 5 (clang's default).
for v in old new; do
  clang -O2 -gdwarf-4 -I"$dir/$v" -o "$dir/driver-$v" "$dir/driver.c" "$dir/$v"/*.c $libs -lm -ldl -lpthread
done
count() {  # instructions inside the validator for one run
  valgrind --tool=callgrind --toggle-collect='measured*' --callgrind-out-file="$dir/cg.out" "$@" >/dev/null 2>&1
  callgrind_annotate "$dir/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}'
}
printf '%-40s %14s %14s %8s\n' file "$rev" "work tree" change
n=0; sum_old=0; sum_new=0
for f in "$@"; do
  o=$(count "$dir/driver-old" "$f"); w=$(count "$dir/driver-new" "$f")
  printf '%-40s %14s %14s %7s%%\n' "$(basename "$f")" "$o" "$w" "$(awk -v o="$o" -v w="$w" 'BEGIN {printf "%+.1f", (w - o) * 100 / o}')"
  n=$((n + 1)); sum_old=$((sum_old + o)); sum_new=$((sum_new + w))
done
[ "$n" -gt 0 ] && printf '%-40s %14s %14s %7s%%\n' "mean of $n" "$((sum_old / n))" "$((sum_new / n))" \
  "$(awk -v o="$sum_old" -v w="$sum_new" 'BEGIN {printf "%+.1f", (w - o) * 100 / o}')"
