#!/usr/bin/env bash
# Times `imgwarm cache prune --dry-run` against `find -printf '%A@ %s'` on
# the same cache of N small files (default 1,000,000), and reports the peak
# RSS of prune. Usage: scripts/bench-prune.sh [N]   (KEEP=1 keeps the folder;
# BENCH_DIR chooses where it goes, default /tmp/imgwarm-bench-cache).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000000}"
DIR="${BENCH_DIR:-/tmp/imgwarm-bench-cache}"
export PATH="/opt/swift/usr/bin:$PATH"

if [ ! -x /usr/bin/time ]; then
    apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
fi

cleanup() { if [ "${KEEP:-0}" != 1 ]; then echo "removing $DIR"; rm -rf "$DIR"; fi; }
trap cleanup EXIT

# A small C generator: a flat SDWebImage-style folder of md5 names with
# realistic extensions, 200 B..6 KB each, atimes spread over 90 days and
# mtimes over 120 days, plus a hidden state folder that prune must skip.
# C rather than Python: a million open/write/utimensat calls in seconds.
if [ "$(find "$DIR" -maxdepth 1 -type f 2>/dev/null | head -c 1 | wc -c)" = 0 ] || [ "$(cat "$DIR/.bench-count" 2>/dev/null)" != "$N" ]; then
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
/* Names look like md5 hex (a 128-bit mix of the index): SDWebImage's layout. */
static unsigned long long mix(unsigned long long x) {
    x += 0x9e3779b97f4a7c15ULL; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL; return x ^ (x >> 31);
}
int main(int argc, char **argv) {
    long n = atol(argv[2]);
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
    static char data[8192];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (char)mix(i);
    const char *exts[] = {".jpg", ".png", ".webp", ".gif", "", ".jpeg"};
    time_t now = time(NULL);
    for (long i = 0; i < n; i++) {
        unsigned long long a = mix(2 * i), b = mix(2 * i + 1);
        char name[64];
        snprintf(name, sizeof name, "%016llx%016llx%s", a, b, exts[a % 6]);
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { perror(name); return 1; }
        size_t len = 200 + b % 6000;
        if (write(fd, data, len) != (ssize_t)len) { perror("write"); return 1; }
        struct timespec t[2];
        t[0].tv_sec = now - (time_t)(a % (90 * 86400)); t[0].tv_nsec = (long)(b % 1000000000);
        t[1].tv_sec = now - (time_t)(b % (120 * 86400)); t[1].tv_nsec = (long)(a % 1000000000);
        futimens(fd, t);
        close(fd);
    }
    return 0;
}
C
    cc -O2 -o "$GEN" "$GEN.c"
    echo "generating $N files in $DIR"
    time "$GEN" "$DIR" "$N"
    echo "$N" > "$DIR/.bench-count"
fi

echo "building imgwarm (release, .build-release)"
swift build -c release --scratch-path .build-release --product imgwarm 2>&1 | tail -1
BIN=.build-release/release/imgwarm

# 30 days and 500 MB: about two thirds expire, then a trim of the rest.
PRUNE=("$BIN" cache prune --cache "$DIR" --max-age 30d --max-size 500M --dry-run)

# Warm the page cache (dentries and inodes) for both.
find "$DIR" -type f -printf '%A@ %s\n' > /dev/null
"${PRUNE[@]}" > /dev/null

ms() { date +%s%N; }
find_times=(); prune_times=(); rss=()
for run in 1 2 3; do
    t0=$(ms); find "$DIR" -type f -printf '%A@ %s\n' > /dev/null; t1=$(ms)
    find_times+=($(( (t1 - t0) / 1000000 )))
    t0=$(ms); /usr/bin/time -f '%M' -o /tmp/imgwarm-bench-rss "${PRUNE[@]}" > /dev/null; t1=$(ms)
    prune_times+=($(( (t1 - t0) / 1000000 )))
    rss+=($(cat /tmp/imgwarm-bench-rss))
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
F=$(median "${find_times[@]}"); P=$(median "${prune_times[@]}"); R=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
echo "files:            $N (+ hidden .imgwarm/)"
echo "find runs (ms):   ${find_times[*]}"
echo "prune runs (ms):  ${prune_times[*]}"
echo "find median:      ${F} ms"
echo "prune median:     ${P} ms  (dry run, listing to /dev/null)"
awk -v p="$P" -v f="$F" 'BEGIN { printf "ratio prune/find: %.2f\n", p / f }'
echo "prune peak RSS:   $((R / 1024)) MiB ($R KiB, /usr/bin/time Maximum resident set size)"
"${PRUNE[@]}" | tail -1
