#!/usr/bin/env bash
# Times `imgwarm cache prune --dry-run` against `find -printf '%A@ %s'` on
# the same cache of N small files (default 1,000,000), and reports the peak
# RSS and CPU seconds of prune. Usage: bench/bench-prune.sh [N]
#   LAYOUT=sdwebimage|kingfisher|nuke  the layout, its file names and prune
#                      options (default sdwebimage);
#   KEEP=1             keeps the folder; BENCH_DIR chooses where it goes
#                      (default /tmp/imgwarm-bench-cache, plus -LAYOUT for
#                      the other layouts);
#   IMGWARM_BIN=path   measures that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000000}"
LAYOUT="${LAYOUT:-sdwebimage}"
case "$LAYOUT" in
    # 30 days and 500 MB: about two thirds expire, then a trim of the rest.
    sdwebimage) NAMES=0; SUFFIX=""; OPTIONS=(--max-age 30d --max-size 500M) ;;
    # Deadlines (modification dates) spread around now: about half expire;
    # then the trim by creation date.
    kingfisher) NAMES=1; SUFFIX="-kingfisher"; OPTIONS=(--max-size 500M) ;;
    # No expiry: the whole cache is trimmed by access date.
    nuke) NAMES=2; SUFFIX="-nuke"; OPTIONS=(--max-size 500M) ;;
    *) echo "LAYOUT=$LAYOUT: not sdwebimage, kingfisher or nuke" >&2; exit 2 ;;
esac
DIR="${BENCH_DIR:-/tmp/imgwarm-bench-cache$SUFFIX}"
export PATH="/opt/swift/usr/bin:$PATH"

if [ ! -x /usr/bin/time ]; then
    apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
fi

cleanup() { if [ "${KEEP:-0}" != 1 ]; then echo "removing $DIR"; rm -rf "$DIR"; fi; }
trap cleanup EXIT

# A small C generator: a flat folder of the layout's names (SDWebImage: md5
# hex with realistic extensions; Kingfisher: sha256 hex; Nuke: sha1 hex),
# 200 B..6 KB each, atimes spread over 90 days and mtimes over 120 days
# (Kingfisher: deadlines from 60 days ago to 60 days ahead), plus a hidden
# state folder that prune must skip.
# C rather than Python: a million open/write/utimensat calls in seconds.
if [ "$(find "$DIR" -maxdepth 1 -type f 2>/dev/null | head -c 1 | wc -c)" = 0 ] || [ "$(cat "$DIR/.bench-count" 2>/dev/null)" != "$N $LAYOUT" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR/.imgwarm/tmp"
    GEN="$(mktemp -d)/gen"
    cat > "$GEN.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* Names look like digests in hex (mixes of the index): md5 for SDWebImage,
 * sha256 for Kingfisher, sha1 for Nuke (argv[3]: 0, 1, 2). */
static unsigned long long mix(unsigned long long x) {
    x += 0x9e3779b97f4a7c15ULL; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL; return x ^ (x >> 31);
}
int main(int argc, char **argv) {
    long n = atol(argv[2]);
    int names = atoi(argv[3]);
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
    static char data[8192];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (char)mix(i);
    const char *exts[] = {".jpg", ".png", ".webp", ".gif", "", ".jpeg"};
    time_t now = time(NULL);
    for (long i = 0; i < n; i++) {
        unsigned long long a = mix(2 * i), b = mix(2 * i + 1);
        char name[96];
        if (names == 0) snprintf(name, sizeof name, "%016llx%016llx%s", a, b, exts[a % 6]);
        else if (names == 1) snprintf(name, sizeof name, "%016llx%016llx%016llx%016llx", a, b, mix(a), mix(b));
        else snprintf(name, sizeof name, "%016llx%016llx%08llx", a, b, mix(a) >> 32);
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { perror(name); return 1; }
        size_t len = 200 + b % 6000;
        if (write(fd, data, len) != (ssize_t)len) { perror("write"); return 1; }
        struct timespec t[2];
        t[0].tv_sec = now - (time_t)(a % (90 * 86400)); t[0].tv_nsec = (long)(b % 1000000000);
        t[1].tv_sec = now - (time_t)(b % (120 * 86400)) + (names == 1 ? 60 * 86400 : 0);
        t[1].tv_nsec = (long)(a % 1000000000);
        futimens(fd, t);
        close(fd);
    }
    return 0;
}
C
    cc -O2 -o "$GEN" "$GEN.c"
    echo "generating $N files in $DIR"
    time "$GEN" "$DIR" "$N" "$NAMES"
    echo "$N $LAYOUT" > "$DIR/.bench-count"
fi

BIN="${IMGWARM_BIN:-}"
if [ -z "$BIN" ]; then
    echo "building imgwarm (release, .build-release)"
    swift build -c release --scratch-path .build-release --product imgwarm 2>&1 | tail -1
    BIN=.build-release/release/imgwarm
fi

PRUNE=("$BIN" cache prune --cache "$DIR" --layout "$LAYOUT" "${OPTIONS[@]}" --dry-run)

# Warm the page cache (dentries and inodes) for both.
find "$DIR" -type f -printf '%A@ %s\n' > /dev/null
"${PRUNE[@]}" > /dev/null

ms() { date +%s%N; }
find_times=(); prune_times=(); rss=(); cpu=()
for run in 1 2 3; do
    t0=$(ms); find "$DIR" -type f -printf '%A@ %s\n' > /dev/null; t1=$(ms)
    find_times+=($(( (t1 - t0) / 1000000 )))
    t0=$(ms); /usr/bin/time -f '%M %U %S' -o /tmp/imgwarm-bench-rss "${PRUNE[@]}" > /dev/null; t1=$(ms)
    prune_times+=($(( (t1 - t0) / 1000000 )))
    read -r r u s < /tmp/imgwarm-bench-rss
    rss+=("$r"); cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
F=$(median "${find_times[@]}"); P=$(median "${prune_times[@]}"); R=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
echo "files:            $N, $LAYOUT names (+ hidden .imgwarm/)"
echo "prune: ${PRUNE[*]:1}"
echo "find runs (ms):   ${find_times[*]}"
echo "prune runs (ms):  ${prune_times[*]}"
echo "find median:      ${F} ms"
echo "prune median:     ${P} ms  (dry run, listing to /dev/null)"
awk -v p="$P" -v f="$F" 'BEGIN { printf "ratio prune/find: %.2f\n", p / f }'
echo "prune CPU (s):    ${cpu[*]} (user + sys; median $(median "${cpu[@]}"))"
echo "prune peak RSS:   $((R / 1024)) MiB ($R KiB, /usr/bin/time Maximum resident set size)"
"${PRUNE[@]}" | tail -1
