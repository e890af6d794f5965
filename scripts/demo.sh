#!/usr/bin/env bash
# The "run it" command: installs what is needed, builds imgwarm (release),
# serves examples/ on loopback, warms a fresh cache from
# examples/manifest.txt, runs it again (all cached), and prints stats.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --demo >/dev/null
export PATH="/opt/swift/usr/bin:$PATH"
bin="$(swift build -c release --show-bin-path)/imgwarm"

port=8089
work="$(mktemp -d /tmp/imgwarm-demo.XXXXXX)"
manifest="examples/manifest.txt"
if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$port))==0 and 0 or 1)"; then
  port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  sed "s/127.0.0.1:8089/127.0.0.1:$port/g" examples/manifest.txt > "$work/manifest.txt"
  manifest="$work/manifest.txt"
fi

python3 -m http.server "$port" --bind 127.0.0.1 --directory examples >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$port)))" && break
  sleep 0.1
done

cache="$work/cache/com.hackemist.SDImageCache/default"
echo "== imgwarm warm $manifest --cache $cache"
# Three entries are broken on purpose; allow them so the demo exits 0.
"$bin" warm "$manifest" --cache "$cache" --max-failures 3 --report "$work/report.json" --progress lines
echo
echo "== the same again: everything is cached or blocked, no download"
"$bin" warm "$manifest" --cache "$cache" --max-failures 3 --progress none
echo
echo "== imgwarm cache stats"
"$bin" cache stats --cache "$cache"
echo
echo "== imgwarm cache path http://127.0.0.1:$port/images/sunset.jpg"
"$bin" cache path "http://127.0.0.1:$port/images/sunset.jpg" --cache "$cache"
echo
echo "== failed entries in the report"
python3 -c "
import json,sys
r=json.load(open('$work/report.json'))
for e in r['entries']:
    if e['outcome']=='failed': print(' ', e['url'], e['error'], e['status'], e.get('content_type') or '(no content type)', '-', e['reason'])
print('totals:', {k:v for k,v in r['totals'].items() if v})
"
