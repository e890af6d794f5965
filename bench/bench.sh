#!/usr/bin/env bash
# imgwarm against its peers on loopback. Idempotent: the corpus is
# made once under the work dir and kept.
#
#   bench/bench.sh                 full size: 20,000 thumbnails (5-20 KB), 5,000 large (50-300 KB)
#   bench/bench.sh --small         quick: 2,000 thumbnails, 500 large
#   bench/bench.sh --only thumbs   one part (thumbs|large|latency); --skip-extra skips the
#                                    cached re-run / 1M-manifest / prune measurements
#   bench/bench.sh --scheduler [PART...]
#                                  the scheduler's targets instead (docs/performance.md), all parts
#                                  or some of: latency loopback throttle h1conns rate limitrate
#
# Environment: BENCH_DIR (/tmp/imgwarm-bench; with --small /tmp/imgwarm-bench-small), BENCH_J (16), BENCH_ROUNDS (3),
# BENCH_THUMBS / BENCH_LARGE (file counts), BENCH_PORT (18471), BENCH_OUT (bench-out),
# BENCH_TARGET (where the tools write: $BENCH_DIR/out; e.g. /dev/shm/x to take the disk out),
# BENCH_CACHED (100000), BENCH_MANIFEST_LINES (1000000), BENCH_PRUNE_FILES (1000000),
# BENCH_LAT_J (64), BENCH_LAT_FILES (8000), BENCH_DELAY_MS (40),
# BENCH_BUILD (static: the binary as scripts/package.sh ships it; dynamic: plain swift build -c release),
# BENCH_DROP (auto: drop the page cache before each run unless corpus and targets are both on tmpfs; yes; no),
# IMGWARM_BIN (measure that binary instead of building one).
# With --scheduler: BENCH_DIR (/dev/shm/imgwarm-bench-sched: corpus and nginx on tmpfs), BENCH_PORT (18571),
# BENCH_LAT_FILES (8000), BENCH_LAT_JS ("64 128 256"), BENCH_LAT_DELAYS ("40 120": ms, of those two),
# BENCH_THUMBS (8000: loopback), BENCH_THROTTLE (3000 entries, origin limit BENCH_THROTTLE_LIMIT 200/s),
# BENCH_RATE_SECONDS (20), BENCH_BUILD (dynamic); results in $BENCH_OUT/scheduler.txt.
#
# Scheduler: latency profile at 40 and 120 ms (defaults vs the best fixed -j
# vs curl --parallel), loopback defaults vs -j 16, a 429 origin, an
# HTTP/1.1-only origin's connections, --rate and --limit-rate. Alternated
# rounds, medians, ratios and CPU seconds (bench_scheduler.py).
#
# Latency profile: nginx over TLS with HTTP/2 (a self-signed certificate made
# with openssl here) proxies to an origin on loopback (bench.py delayserver)
# that answers each request 40 ms late; imgwarm, curl --parallel and wget2 at
# -j BENCH_LAT_J, and imgwarm at its defaults, fetch BENCH_LAT_FILES thumbnails
# and each achieved request rate is reported against the bound -j / 40 ms.
#
# Each round runs every tool once, in a rotated order, each into a new folder
# (removed at the end: about rounds x 8 x the corpus size of disk), with the
# page cache dropped when the kernel lets us:
#   imgwarm warm M -j N (validation on, fresh cache)   curl --parallel -K config
#   imgwarm -n: the same with --no-validate (imgwarm's cost apart from decoding)
#   aria2c -i list -j N    wget2 -i list --max-threads N
#   curl+verify: curl --parallel, then imgwarm cache verify (the same work as imgwarm)
#   limits: curl --parallel to /dev/null (network + server), cp -r of the corpus (disk)
# and prints each time, the CPU seconds of the tool and of nginx, the CPU
# floor ((tool + nginx CPU) / cores), each ratio imgwarm/tool and the median.
# Results also go to $BENCH_OUT/results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
export PATH="/opt/swift/usr/bin:$PATH"

work="${BENCH_DIR:-}"
j="${BENCH_J:-16}"
rounds="${BENCH_ROUNDS:-3}"
port="${BENCH_PORT:-18471}"
thumbs="${BENCH_THUMBS:-20000}"
large="${BENCH_LARGE:-5000}"
cached="${BENCH_CACHED:-100000}"
mlines="${BENCH_MANIFEST_LINES:-1000000}"
prunefiles="${BENCH_PRUNE_FILES:-1000000}"
outdir="${BENCH_OUT:-$repo/bench-out}"
latj="${BENCH_LAT_J:-64}"
latfiles="${BENCH_LAT_FILES:-8000}"
tlsport=$((port + 1))
delayport=$((port + 2))
only=""
extra=1
scheduler=""
while (($#)); do
  case "$1" in
    --scheduler) shift; scheduler="${*:-latency loopback throttle h1conns rate limitrate}"; break ;;
    --small) thumbs="${BENCH_THUMBS:-2000}"; large="${BENCH_LARGE:-500}"; latfiles="${BENCH_LAT_FILES:-2000}"
             work="${work:-/tmp/imgwarm-bench-small}" ;;
    --only) only="$2"; shift ;;
    --skip-extra) extra=0 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

if [ -n "$scheduler" ]; then
  work="${work:-/dev/shm/imgwarm-bench-sched}"
  port="${BENCH_PORT:-18571}"
  thumbs="${BENCH_THUMBS:-8000}"
  export BENCH_TARGET="${BENCH_TARGET:-$work/out}"
  BENCH_BUILD="${BENCH_BUILD:-dynamic}"
fi
work="${work:-/tmp/imgwarm-bench}"   # --small keeps its own corpus in /tmp/imgwarm-bench-small

# ---------------------------------------------------------------- packages
need=()
for pair in nginx:nginx curl:curl aria2c:aria2 wget2:wget2 hyperfine:hyperfine convert:imagemagick \
            /usr/bin/time:time python3:python3 openssl:openssl ss:iproute2; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if ((${#need[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "bench: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# ---------------------------------------------------------------- build
# The binary as it ships (scripts/package.sh: the Swift runtime linked in,
# same flags, same scratch folder), unless BENCH_BUILD=dynamic. It matters
# here: the page cache is dropped before every run, and a build that loads
# 57 shared libraries starts in 0.17-0.18 s from a cold cache against
# 0.10-0.12 s for the static one (curl 0.03-0.04 s), a tenth of a large run.
IMGWARM_BIN="${IMGWARM_BIN:-${BENCH_IMGWARM:-}}"
if [ -n "${IMGWARM_BIN:-}" ]; then
  imgwarm="$IMGWARM_BIN"          # a given build, e.g. another branch's, or a quick check of this script
elif [ "${BENCH_BUILD:-static}" = dynamic ]; then
  swift build -c release --product imgwarm >&2
  imgwarm="$(swift build -c release --show-bin-path)/imgwarm"
else
  scratch="${PACKAGE_SCRATCH:-.build-package}"
  swift build -c release --static-swift-stdlib --disable-local-rpath --product imgwarm --scratch-path "$scratch" \
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now >&2
  imgwarm="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/imgwarm"
fi

mkdir -p "$work" "$outdir"
results="$outdir/results.txt"
[ -n "$scheduler" ] && results="$outdir/scheduler.txt"
: > "$results"
log() { echo "$*"; echo "$*" >> "$results"; }

# ---------------------------------------------------------------- nginx, shared
ngx="$work/nginx"
mkdir -p "$ngx/logs" "$ngx/tmp"
# The TLS servers: a self-signed certificate for 127.0.0.1 (the clients
# run with --insecure / -k / --no-check-certificate).
[ -s "$ngx/cert.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$ngx/key.pem" -out "$ngx/cert.pem" 2>/dev/null
# What every nginx of the bench starts with, up to the servers.
nginx_head() {
  cat <<EOT
worker_processes auto;
worker_rlimit_nofile $(ulimit -Hn);
pid $ngx/nginx.pid;
error_log $ngx/logs/error.log warn;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  types { image/jpeg jpg; image/png png; image/gif gif; }
  client_body_temp_path $ngx/tmp; proxy_temp_path $ngx/tmp; fastcgi_temp_path $ngx/tmp;
  uwsgi_temp_path $ngx/tmp; scgi_temp_path $ngx/tmp;
EOT
}
# A TLS + HTTP/2 server: port, then what it does.
tls_server() {
  cat <<EOT
  server {
    listen 127.0.0.1:$1 ssl http2;
    ssl_certificate $ngx/cert.pem;
    ssl_certificate_key $ngx/key.pem;
    http2_max_concurrent_streams 256;
    $2
  }
EOT
}

# ---------------------------------------------------------------- --scheduler
scheduler_bench() {
  local throttle="${BENCH_THROTTLE:-3000}" limit="${BENCH_THROTTLE_LIMIT:-200}" rateseconds="${BENCH_RATE_SECONDS:-20}"
  local latjs="${BENCH_LAT_JS:-64 128 256}"
  log "imgwarm scheduler bench $(date -u +%FT%TZ)  commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  log "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) (shared: figures are noisy; compare ratios)"
  log "peers: $(curl --version | head -1 | cut -d' ' -f1-2), $(nginx -v 2>&1)"
  local most=$latfiles
  ((thumbs > most)) && most=$thumbs
  ((throttle > most)) && most=$throttle
  python3 bench/bench.py corpus "$work" thumbs "$most" 5 20
  python3 bench/bench.py corpus "$work" large 200 50 300
  local http=$port tls40=$((port + 1)) tls120=$((port + 2)) d40=$((port + 3)) d120=$((port + 4)) tlslim=$((port + 5))
  cat > "$ngx/nginx.conf" <<EOF
$(nginx_head)
  log_format timed '\$msec \$status \$body_bytes_sent';
  limit_req_zone \$server_port zone=origin:1m rate=${limit}r/s;
  server {
    listen 127.0.0.1:$http;
    root $work/corpus;
    access_log $ngx/logs/http.log timed;
  }
  upstream o40 { server 127.0.0.1:$d40; keepalive 256; }
  upstream o120 { server 127.0.0.1:$d120; keepalive 256; }
$(tls_server $tls40 "location / { proxy_pass http://o40; proxy_http_version 1.1; proxy_set_header Connection \"\"; }")
$(tls_server $tls120 "location / { proxy_pass http://o120; proxy_http_version 1.1; proxy_set_header Connection \"\"; }")
$(tls_server $tlslim "root $work/corpus; access_log $ngx/logs/limited.log timed;
    location / { limit_req zone=origin burst=$((limit / 10)) nodelay; limit_req_status 429; error_page 429 = @throttled; }
    location @throttled { add_header Retry-After 1 always; return 429 \"slow down\n\"; }")
}
EOF
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
  nginx -p "$ngx" -c "$ngx/nginx.conf" & pids+=($!)
  python3 bench/bench.py delayserver "$work/corpus" "$d40" 40 & pids+=($!)
  python3 bench/bench.py delayserver "$work/corpus" "$d120" 120 & pids+=($!)
  for _ in $(seq 100); do
    [ "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$tls40/thumbs/")" = 404 ] \
      && [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$d120/thumbs/")" = 404 ] && break
    sleep 0.1
  done
  local part delay tls
  for part in $scheduler; do
    case "$part" in
      latency)
        for delay in ${BENCH_LAT_DELAYS:-40 120}; do
          tls=$tls40; [ "$delay" = 120 ] && tls=$tls120
          python3 bench/bench_scheduler.py latency "$work" "$latfiles" "$rounds" "$imgwarm" "$results" "https://127.0.0.1:$tls" "$delay" "$latjs"
        done ;;
      loopback)
        python3 bench/bench_scheduler.py loopback "$work" "$thumbs" "$((rounds * 2 - 1))" "$imgwarm" "$results" "http://127.0.0.1:$http" ;;
      throttle)
        python3 bench/bench_scheduler.py throttle "$work" "$throttle" "$imgwarm" "$results" "https://127.0.0.1:$tlslim" "$ngx/logs/limited.log" "$limit" ;;
      h1conns)
        python3 bench/bench_scheduler.py h1conns "$work" 2000 "$imgwarm" "$results" "http://127.0.0.1:$d40" "$d40" ;;
      rate)
        python3 bench/bench_scheduler.py rate "$work" "$((50 * rateseconds))" "$imgwarm" "$results" "http://127.0.0.1:$http" "$ngx/logs/http.log" 50 ;;
      limitrate)
        # About 20 MB of the large corpus (50-300 KB each): 20 s at 1M.
        python3 bench/bench_scheduler.py limitrate "$work" 150 "$imgwarm" "$results" "http://127.0.0.1:$http" 1M ;;
      *) echo "bench: unknown scheduler part $part" >&2; exit 2 ;;
    esac
  done
  log ""
  log "results: $results"
}
if [ -n "$scheduler" ]; then
  scheduler_bench
  exit 0
fi
log "imgwarm bench $(date -u +%FT%TZ)  $($imgwarm --version 2>/dev/null | head -1)  commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
log "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
log "peers: $(curl --version | head -1 | cut -d' ' -f1-2), $(aria2c --version | head -1), $(wget2 --version 2>/dev/null | head -1), $(nginx -v 2>&1)"
log "work dir $work; targets ${BENCH_TARGET:-$work/out}; thumbs $thumbs, large $large; -j $j; $rounds rounds"

# ---------------------------------------------------------------- corpus
python3 bench/bench.py corpus "$work" thumbs "$thumbs" 5 20
python3 bench/bench.py corpus "$work" large "$large" 50 300

# ---------------------------------------------------------------- nginx
cat > "$ngx/nginx.conf" <<EOF
$(nginx_head)
  tcp_nopush on;
  server {
    listen 127.0.0.1:$port;
    root $work/corpus;
    location = /nginx_status { stub_status; }
  }
  # Latency profile: TLS + HTTP/2 in front of the slow origin.
  upstream slow_origin {
    server 127.0.0.1:$delayport;
    keepalive 256;
  }
$(tls_server "$tlsport" "location / { proxy_pass http://slow_origin; proxy_http_version 1.1; proxy_set_header Connection \"\"; }")
}
EOF
nginx_pid=""
delay_pid=""
stop_nginx() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=""; fi
  if [ -n "$delay_pid" ]; then kill "$delay_pid" 2>/dev/null || true; wait "$delay_pid" 2>/dev/null || true; delay_pid=""; fi
}
cleanup_targets() { if [ -n "${targets:-}" ]; then rm -rf "$targets"; fi; }
trap 'stop_nginx; cleanup_targets' EXIT
trap 'stop_nginx; cleanup_targets; exit 130' INT TERM
nginx -p "$ngx" -c "$ngx/nginx.conf" &
nginx_pid=$!
python3 bench/bench.py delayserver "$work/corpus" "$delayport" "${BENCH_DELAY_MS:-40}" &
delay_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/nginx_status" && break; sleep 0.1; done
requests() { curl -s "http://127.0.0.1:$port/nginx_status" | awk '/^ *[0-9]+ +[0-9]+ +[0-9]+/{print $3}'; }

# Every timed run writes into a folder of its own (see tools_for in
# bench.py); the folders go at the end. Leftovers of an earlier bench are
# removed first, then the disk gets a minute: ext4 without a journal skips
# inodes freed in the last 60 s, which makes creating files slower.
targets="${BENCH_TARGET:-$work/out}"
if [ -d "$targets" ] && [ -n "$(ls -A "$targets" 2>/dev/null)" ]; then
  echo "bench: removing the outputs of an earlier run from $targets, then waiting 65 s for the disk to settle"
  rm -rf "$targets"; sync; sleep 65
fi
mkdir -p "$targets"

base="http://127.0.0.1:$port"
for c in thumbs large; do
  [ -n "$only" ] && [ "$only" != "$c" ] && continue
  python3 bench/bench.py inputs "$work" "$c" "$base"
  python3 bench/bench.py rounds "$work" "$c" "$rounds" "$j" "$imgwarm" "$results"
done

if [ -z "$only" ] || [ "$only" = latency ]; then
  # Up once the origin answers (404 for a folder) through nginx's TLS port.
  for _ in $(seq 100); do
    [ "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$tlsport/thumbs/")" = 404 ] && break; sleep 0.1
  done
  python3 bench/bench.py latency "$work" thumbs "$latfiles" "$latj" "$rounds" "$imgwarm" "$results" \
    "https://127.0.0.1:$tlsport"
fi

if ((extra)); then
  # ------------------------------------------------------------ cached re-run
  log ""
  log "=== cached re-run: $cached entries, all in the cache ==="
  cdir="$work/cached-cache"
  cman="$(python3 bench/bench.py cachedfill "$work" "$cached" "$base" "$cdir")"
  first="$(head -1 "$cman")"
  want="$cdir/$(python3 -c 'import hashlib,sys; print(hashlib.md5(sys.argv[1].encode()).hexdigest())' "$first").jpg"
  got="$("$imgwarm" cache path "$first" --cache "$cdir" || true)"
  [ "$got" = "$want" ] || log "WARNING: imgwarm names $first as $got, bench wrote $want"
  for run in 1 2 3; do
    # Run 1 starts from a cold page cache (a cron run, a volume just
    # mounted): every lookup reads directory and inode blocks from disk.
    temp="warm page cache"
    if [ "$run" = 1 ]; then
      temp="cold page cache"
      { sync; echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null || temp="page cache not dropped (not permitted)"
    fi
    before="$(requests)"
    s=$(date +%s.%N)
    set +e
    "$imgwarm" warm "$cman" -j "$j" --cache "$cdir" --progress none > "$outdir/cached-run.out" 2>&1
    rc=$?
    set -e
    e=$(date +%s.%N)
    after="$(requests)"
    log "run $run ($temp): $(python3 -c "print(f'{$e-$s:.3f}')") s, exit $rc, requests to nginx: $((after - before - 1))  ($(tr '\n' ' ' < "$outdir/cached-run.out" | cut -c1-200))"
  done

  # ------------------------------------------------------------ 1M-line manifest
  log ""
  log "=== $mlines-line manifest, --dry-run: peak RSS ==="
  big="$work/inputs/big-$mlines.manifest"
  python3 bench/bench.py bigmanifest "$big" "$mlines" "$base"
  rm -rf "$work/dry-cache"
  set +e
  /usr/bin/time -v "$imgwarm" warm "$big" --dry-run --cache "$work/dry-cache" --progress none \
    > /dev/null 2> "$outdir/dryrun.time"
  rc=$?
  set -e
  log "exit $rc, peak RSS $(awk -F': ' '/Maximum resident/{printf "%.1f MB", $2/1000}' "$outdir/dryrun.time"), wall $(awk -F': ' '/Elapsed/{print $2}' "$outdir/dryrun.time")"

  # ------------------------------------------------------------ prune
  log ""
  # (`cache prune --help` exits 0 with the help of `cache` when prune is missing)
  if "$imgwarm" cache --help 2>/dev/null | grep -qE '^ +prune '; then
    log "=== cache prune over $prunefiles files (--dry-run) vs find -printf ==="
    pdir="$work/prune-cache"
    if [ "$(find "$pdir" -maxdepth 1 -type f 2>/dev/null | wc -l)" != "$prunefiles" ]; then
      rm -rf "$pdir"; mkdir -p "$pdir"
      python3 - "$pdir" "$prunefiles" <<'EOF'
import hashlib, os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, hashlib.md5(b"u%d" % i).hexdigest() + ".jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xd9")
EOF
    fi
    for run in 1 2; do
      s=$(date +%s.%N); find "$pdir" -type f -printf '%A@ %s\n' > /dev/null; e=$(date +%s.%N)
      log "find -printf: $(python3 -c "print(f'{$e-$s:.3f}')") s"
      /usr/bin/time -v "$imgwarm" cache prune --max-age 30d --max-size 1G --dry-run --cache "$pdir" \
        > /dev/null 2> "$outdir/prune.time" || true
      log "imgwarm cache prune --dry-run: wall $(awk -F': ' '/Elapsed/{print $2}' "$outdir/prune.time"), peak RSS $(awk -F': ' '/Maximum resident/{printf "%.1f MB", $2/1000}' "$outdir/prune.time")"
    done
  else
    log "=== cache prune: skipped, 'imgwarm cache prune' is not in this build ==="
  fi
fi
log ""
log "results: $results"
