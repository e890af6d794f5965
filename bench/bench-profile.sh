#!/usr/bin/env bash
# Profiles `imgwarm warm` on the thumbnails corpus of bench/bench.sh (run
# that first: it makes the corpus and nginx.conf). Writes to bench-out/profile/:
#   strace-c.txt       syscall counts and time, all threads (strace -c -f)
#   strace-files.txt   per-file syscall pattern of the store path (strace -f -e trace=file,desc)
#   perf-report.txt    perf record -g, children and self, by symbol
#   perf-threads.txt   samples per thread (network thread vs validation workers)
#   callgrind.txt      callgrind_annotate of a small run (PROFILE_CALLGRIND=1; valgrind 3.19 gives up
#                      on the release binary: "Possibly corrupted debuginfo file")
#   bench/bench-profile.sh            (BENCH_DIR, BENCH_PORT as in bench.sh; PROFILE_J 16)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
work="${BENCH_DIR:-/tmp/imgwarm-bench}"
port="${BENCH_PORT:-18471}"
j="${PROFILE_J:-16}"
out="${BENCH_OUT:-$PWD/bench-out}/profile"
mkdir -p "$out"
[ -f "$work/nginx/nginx.conf" ] && [ -f "$work/inputs/thumbs.manifest" ] || { echo "run bench/bench.sh first" >&2; exit 2; }
swift build -c release --product imgwarm >&2
imgwarm="$(swift build -c release --show-bin-path)/imgwarm"
manifest="$work/inputs/thumbs.manifest"
n=$(wc -l < "$manifest")

nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
ngx=$!
trap 'kill $ngx 2>/dev/null; wait $ngx 2>/dev/null' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/nginx_status" && break; sleep 0.1; done
cat "$manifest" | xargs -n 500 curl -s -o /dev/null >/dev/null 2>&1 || true   # server's page cache warm
c="$work/profile-cache"

rm -rf "$c"
strace -c -f -o "$out/strace-c.txt" "$imgwarm" warm "$manifest" -j "$j" --cache "$c" --progress none -q
echo "strace -c -f: $n files" | cat - "$out/strace-c.txt" > "$out/strace-c.tmp" && mv "$out/strace-c.tmp" "$out/strace-c.txt"

rm -rf "$c"
head -200 "$manifest" > "$work/inputs/profile200.manifest"
strace -f -tt -e trace=file,desc,network -o "$out/strace-files.txt" \
  "$imgwarm" warm "$work/inputs/profile200.manifest" -j "$j" --cache "$c" --progress none -q

rm -rf "$c"
perf record -F 999 -g -o "$out/perf.data" -- "$imgwarm" warm "$manifest" -j "$j" --cache "$c" --progress none -q 2> "$out/perf-record.log"
perf report -i "$out/perf.data" --no-demangle --stdio --children --percent-limit 1.5 2>/dev/null | sed 's/\s\+$//' > "$out/perf-report.txt"
perf report -i "$out/perf.data" --stdio --no-children --sort comm,dso --percent-limit 0.5 2>/dev/null > "$out/perf-threads.txt"
perf report -i "$out/perf.data" --stdio --no-children --sort sym --percent-limit 0.4 -g none 2>/dev/null > "$out/perf-self.txt"

if [ "${PROFILE_CALLGRIND:-0}" = 1 ]; then
  rm -rf "$c"
  head -1000 "$manifest" > "$work/inputs/profile1000.manifest"
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
    "$imgwarm" warm "$work/inputs/profile1000.manifest" -j "$j" --cache "$c" --progress none -q 2> "$out/callgrind.log"
  callgrind_annotate --inclusive=yes "$out/callgrind.out" 2>/dev/null | head -80 > "$out/callgrind.txt"
fi
rm -rf "$c"
echo "profile: $out"
