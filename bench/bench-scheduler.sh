#!/usr/bin/env bash
# The scheduler's targets (docs/performance.md): latency profile at
# 40 and 120 ms (defaults vs the best fixed -j vs curl --parallel), loopback
# defaults vs -j 16, a 429 origin, an HTTP/1.1-only origin's connections,
# --rate and --limit-rate. Alternated rounds, medians, ratios and CPU seconds.
#
#   bench/bench-scheduler.sh                     everything
#   bench/bench-scheduler.sh latency loopback    some parts (latency loopback throttle h1conns rate limitrate)
#
# Environment: BENCH_DIR (/dev/shm/imgwarm-bench-sched: corpus and nginx on tmpfs),
# BENCH_TARGET (/dev/shm/imgwarm-bench-sched/out), BENCH_PORT (18571), BENCH_ROUNDS (3),
# BENCH_LAT_FILES (8000), BENCH_LAT_JS ("64 128 256"), BENCH_LAT_DELAYS ("40 120": ms, of those two), BENCH_THUMBS (8000: loopback),
# BENCH_THROTTLE (3000 entries, origin limit BENCH_THROTTLE_LIMIT 200/s), BENCH_RATE_SECONDS (20),
# BENCH_IMGWARM (a built binary; default: swift build -c release).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
work="${BENCH_DIR:-/dev/shm/imgwarm-bench-sched}"
export BENCH_TARGET="${BENCH_TARGET:-$work/out}"
port="${BENCH_PORT:-18571}"
rounds="${BENCH_ROUNDS:-3}"
latfiles="${BENCH_LAT_FILES:-8000}"
latjs="${BENCH_LAT_JS:-64 128 256}"
thumbs="${BENCH_THUMBS:-8000}"
throttle="${BENCH_THROTTLE:-3000}"
limit="${BENCH_THROTTLE_LIMIT:-200}"
rateseconds="${BENCH_RATE_SECONDS:-20}"
outdir="${BENCH_OUT:-$PWD/bench-out}"
parts="${*:-latency loopback throttle h1conns rate limitrate}"
mkdir -p "$work" "$outdir"
results="$outdir/scheduler.txt"
: > "$results"

if [ -n "${BENCH_IMGWARM:-}" ]; then
  imgwarm="$BENCH_IMGWARM"
else
  swift build -c release --product imgwarm >&2
  imgwarm="$(swift build -c release --show-bin-path)/imgwarm"
fi
log() { echo "$*"; echo "$*" >> "$results"; }
log "imgwarm scheduler bench $(date -u +%FT%TZ)  commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
log "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) (shared: figures are noisy; compare ratios)"
log "peers: $(curl --version | head -1 | cut -d' ' -f1-2), $(nginx -v 2>&1)"

python3 bench/bench.py corpus "$work" thumbs "$(( latfiles > thumbs ? (latfiles > throttle ? latfiles : throttle) : (thumbs > throttle ? thumbs : throttle) ))" 5 20
python3 bench/bench.py corpus "$work" large 200 50 300

http=$port; tls40=$((port + 1)); tls120=$((port + 2)); d40=$((port + 3)); d120=$((port + 4)); tlslim=$((port + 5))
ngx="$work/nginx"
mkdir -p "$ngx/logs" "$ngx/tmp"
[ -s "$ngx/cert.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$ngx/key.pem" -out "$ngx/cert.pem" 2>/dev/null
tlsconf() {  # port upstream-or-empty extra
  cat <<EOT
  server {
    listen 127.0.0.1:$1 ssl http2;
    ssl_certificate $ngx/cert.pem;
    ssl_certificate_key $ngx/key.pem;
    http2_max_concurrent_streams 256;
    $3
  }
EOT
}
cat > "$ngx/nginx.conf" <<EOF
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
  log_format timed '\$msec \$status \$body_bytes_sent';
  limit_req_zone \$server_port zone=origin:1m rate=${limit}r/s;
  server {
    listen 127.0.0.1:$http;
    root $work/corpus;
    access_log $ngx/logs/http.log timed;
  }
  upstream o40 { server 127.0.0.1:$d40; keepalive 256; }
  upstream o120 { server 127.0.0.1:$d120; keepalive 256; }
$(tlsconf $tls40 "" "location / { proxy_pass http://o40; proxy_http_version 1.1; proxy_set_header Connection \"\"; }")
$(tlsconf $tls120 "" "location / { proxy_pass http://o120; proxy_http_version 1.1; proxy_set_header Connection \"\"; }")
$(tlsconf $tlslim "" "root $work/corpus; access_log $ngx/logs/limited.log timed;
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

for part in $parts; do
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
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
log ""
log "results: $results"
