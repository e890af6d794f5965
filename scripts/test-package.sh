#!/usr/bin/env bash
# The .deb and the container image's runtime stage, tested without Docker:
#  1. scripts/package.sh builds dist/imgwarm_<version>_<arch>.deb.
#  2. lintian reports no error and no warning (docs/packaging.md explains the info tags).
#  3. The package holds the binary, man page, completions, copyright and
#     changelog; Depends names the package of every NEEDED library (found
#     again here with objdump -p and dpkg -S, apart from package.sh's
#     dpkg-shlibdeps).
#  4. mmdebstrap makes a clean Debian 12 root (variant minbase, what
#     debian:bookworm-slim holds) from this machine's apt sources, and the
#     Dockerfile's runtime stage, packaging/container/install-runtime.sh,
#     installs the .deb there with apt-get, which takes Depends from the
#     mirror. Timed.
#  5. In that root: ldd resolves every library; no Swift, compiler or build
#     tree anywhere; man page and completions in place; as the image's user,
#     imgwarm warms examples/manifest.txt from a loopback server and each file
#     lands under SDWebImage's name with the served bytes.
#  6. The examples run there as their runners would run them: the Kubernetes
#     Job's args (all indexes at once, $(JOB_COMPLETION_INDEX) expanded), the
#     crontab line, the systemd unit's ExecStart lines, and the GitHub Actions
#     job's steps (its install step fetches the .deb from a loopback "release"
#     and installs it with apt; its warm step runs for each matrix shard).
# Needs root, mmdebstrap, lintian, python3-yaml (scripts/setup.sh installs
# them) and network access to the Debian mirror. Without them it fails when
# CI=true and skips with a message elsewhere.
#   scripts/test-package.sh     (PACKAGE_DEB=dist/x.deb tests that file instead of running package.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
self="$repo/scripts/test-package.sh"
helper="$repo/scripts/test_package.py"

say() { echo "test-package: $*" >&2; }
die() { echo "test-package: FAIL: $*" >&2; exit 1; }

# ----------------------------------------------------------------- in the root
# Runs as mmdebstrap's customize hook (root, /proc and /dev mounted in $R);
# the host's loopback server is reachable, chroot shares the network.
in_root() {
  R="$1"
  cd "$repo"
  local base="http://127.0.0.1:$TP_PORT" www="$TP_WORK/www"

  # The Dockerfile's runtime stage, as its RUN line runs it.
  mkdir -p "$R/tmp/dist"
  cp "$TP_DEB" packaging/container/install-runtime.sh "$R/tmp/dist/"
  local t0 t1 before
  before=$(chroot "$R" dpkg-query -W -f '${Package}\n' | grep -c .)
  t0=$(date +%s%N)
  chroot "$R" sh /tmp/dist/install-runtime.sh > "$TP_WORK/install.log" 2>&1 ||
    { tail -40 "$TP_WORK/install.log" >&2; die "install-runtime.sh failed in the clean root"; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 )) > "$TP_WORK/install-ms"
  chroot "$R" dpkg-query -W -f '${Package}\n' > "$TP_WORK/root-packages.txt"
  echo "$(( $(grep -c . "$TP_WORK/root-packages.txt") - before ))" > "$TP_WORK/added-packages"
  say "installed in the clean root in $(( (t1 - t0) / 1000000 )) ms: imgwarm + $(( $(cat "$TP_WORK/added-packages") - 1 )) packages (its Depends, ca-certificates and theirs)"

  # Nothing that builds code came along.
  local bad
  # (gcc-12-base is not one: only the doc folder libgcc-s1 needs.)
  bad=$(grep -E '^((gcc|g\+\+|cpp|clang|llvm|lld)(-[0-9.]+)?|binutils.*|build-essential|make|libc6-dev|libc-dev-bin|swift.*)$|-dev$' \
    "$TP_WORK/root-packages.txt" || true)
  [ -z "$bad" ] || die "the clean root has build packages: $bad"
  bad=$(find "$R" -xdev \( -path "$R/proc" -o -path "$R/sys" -o -path "$R/dev" \) -prune -o \
    \( -path '*bin/*' -o -path '*/libexec/*' \) \( -name 'swift*' -o -name 'clang*' -o -name 'gcc*' -o -name '*-gcc*' \
       -o -name 'cc' -o -name 'c++' -o -name 'g++*' -o -name 'cc1*' -o -name 'ld' -o -name 'ld.bfd' -o -name 'ld.gold' \
       -o -name 'ld.lld' -o -name '*-ld' -o -name '*-ld.*' -o -name 'as' -o -name '*-as' \) -print)
  [ -z "$bad" ] || die "compilers or linkers in the clean root: $bad"
  bad=$(find "$R" -xdev \( -path "$R/proc" -o -path "$R/sys" -o -path "$R/dev" \) -prune -o \
    \( -name 'libswift*' -o -name 'libFoundation*.so*' -o -name 'libdispatch.so*' -o -name '*.swiftmodule' \
       -o -name 'Package.swift' -o -name '.build' -o -name '.build-*' -o -name '*.o' \) -print)
  [ -z "$bad" ] || die "Swift runtime or build tree in the clean root: $bad"

  # Every library found, from the root's own /usr/lib.
  local ldd_out
  ldd_out=$(chroot "$R" ldd /usr/bin/imgwarm) || die "ldd /usr/bin/imgwarm failed in the clean root"
  if grep -q 'not found' <<<"$ldd_out"; then echo "$ldd_out" >&2; die "libraries missing in the clean root"; fi
  say "ldd: $(grep -c '=>' <<<"$ldd_out") libraries, all found"

  # Man page and completions, where man, bash, zsh and fish look.
  gzip -t "$R/usr/share/man/man1/imgwarm.1.gz" || die "man page is not gzip"
  zcat "$R/usr/share/man/man1/imgwarm.1.gz" | grep -q '^\.Dt IMGWARM 1' || die "man page has no .Dt IMGWARM 1"
  zcat "$R/usr/share/man/man1/imgwarm.1.gz" | grep -q '^\.It Em warm' || die "man page does not describe warm"
  chroot "$R" bash -c '. /usr/share/bash-completion/completions/imgwarm && complete -p imgwarm' >/dev/null ||
    die "the bash completion does not register imgwarm"
  head -1 "$R/usr/share/zsh/vendor-completions/_imgwarm" | grep -q '^#compdef imgwarm' || die "zsh completion lacks #compdef imgwarm"
  grep -q "complete -c 'imgwarm'" "$R/usr/share/fish/vendor_completions.d/imgwarm.fish" || die "fish completion lacks complete -c imgwarm"
  [ -s "$R/usr/share/doc/imgwarm/copyright" ] && [ -s "$R/usr/share/doc/imgwarm/changelog.gz" ] || die "copyright or changelog missing"

  # A warm as the image runs it: user imgwarm, IMGWARM_CACHE=/cache.
  sed "s#http://127.0.0.1:8089/#$base/#g" examples/manifest.txt > "$R/tmp/manifest.txt"
  local rc=0
  in_image /home/imgwarm "" imgwarm warm /tmp/manifest.txt --max-failures 3 --report report.json --progress none \
    > "$TP_WORK/warm.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$TP_WORK/warm.log" >&2; die "imgwarm warm exited $rc in the clean root"; }
  python3 "$helper" check-warm "$R/tmp/manifest.txt" "$www" "$R/cache" "$R/home/imgwarm/report.json"
  [ "$(stat -c %u:%g "$R/cache/.imgwarm")" = 10001:10001 ] || die "/cache/.imgwarm is not owned by the image's user (10001:10001)"
  in_image /home/imgwarm "" imgwarm cache verify > /dev/null || die "imgwarm cache verify failed in the clean root"

  examples_kubernetes
  examples_cron
  examples_systemd
  examples_github_actions
}

# Runs a command in the root as the image does: user imgwarm, the image's ENV,
# in directory $1, with extra NAME=VALUE environment $2 (space-separated).
in_image() {
  local dir="$1" extra="$2"
  shift 2
  # shellcheck disable=SC2086
  chroot --userspec=imgwarm:imgwarm "$R" /usr/bin/env -i HOME=/home/imgwarm \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin IMGWARM_CACHE=/cache $extra \
    /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@"
}

examples_kubernetes() {
  local job=examples/kubernetes/indexed-job.yaml n i rc pids=()
  n=$(python3 "$helper" k8s-completions "$job")
  find "$R/cache" -mindepth 1 -delete
  mkdir -p "$R/manifests"
  python3 "$helper" good-manifest "$R/tmp/manifest.txt" "$TP_WORK/www" > "$R/manifests/images.txt"
  for ((i = 0; i < n; i++)); do
    local args=()
    mapfile -d '' args < <(python3 "$helper" k8s-args "$job" "$i")
    # ENTRYPOINT ["imgwarm"] + the Job's args; the pods run at once.
    in_image /home/imgwarm "JOB_COMPLETION_INDEX=$i" imgwarm "${args[@]}" > "$TP_WORK/k8s-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    rc=0; wait "${pids[$i]}" || rc=$?
    [ "$rc" = 0 ] || { cat "$TP_WORK/k8s-$i.log" >&2; die "$job: index $i exited $rc"; }
  done
  python3 "$helper" check-warm "$R/manifests/images.txt" "$TP_WORK/www" \
    "$R/cache/com.hackemist.SDImageCache/default" "$R"/cache/report-shard-*.json
  say "$job: $n indexes at once, each image fetched once"
}

examples_cron() {
  local tab=examples/cron/crontab cmd rc
  mkdir -p "$R/etc/imgwarm/feeds" "$R/var/lib/node_exporter/textfile" "$R/srv"
  cp "$R/tmp/manifest.txt" "$R/etc/imgwarm/feeds/images.txt"
  while IFS= read -r -d '' cmd; do
    # cron runs the command with /bin/sh, PATH=/usr/bin:/bin.
    rc=0
    chroot "$R" /usr/bin/env -i HOME=/root SHELL=/bin/sh PATH=/usr/bin:/bin /bin/sh -c "$cmd" \
      > "$TP_WORK/cron.log" 2>&1 || rc=$?
    [ "$rc" = 0 ] || { cat "$TP_WORK/cron.log" >&2; die "$tab: exited $rc: $cmd"; }
  done < <(python3 "$helper" crontab "$tab")
  python3 "$helper" check-warm "$R/etc/imgwarm/feeds/images.txt" "$TP_WORK/www" "$R/srv/image-cache"
  grep -q '^imgwarm_' "$R/var/lib/node_exporter/textfile/imgwarm.prom" || die "$tab: no metrics written"
  say "$tab: runs as written"
}

examples_systemd() {
  local unit=examples/cron/imgwarm.service line rc ignore envs=() argv=() dir
  rm -rf "$R/srv/image-cache" "$R/var/lib/node_exporter/textfile/imgwarm.prom"
  mapfile -d '' envs < <(python3 "$helper" systemd "$unit" Environment)
  # What systemd does for LogsDirectory=, StateDirectory=, CacheDirectory=.
  while IFS= read -r -d '' dir; do mkdir -p "$R/var/log/$dir"; done < <(python3 "$helper" systemd "$unit" LogsDirectory)
  while IFS= read -r -d '' dir; do mkdir -p "$R/var/lib/$dir"; done < <(python3 "$helper" systemd "$unit" StateDirectory)
  while IFS= read -r -d '' dir; do mkdir -p "$R/var/cache/$dir"; done < <(python3 "$helper" systemd "$unit" CacheDirectory)
  while IFS= read -r -d '' line; do
    ignore=0
    if [ "${line:0:1}" = "-" ]; then ignore=1; line="${line:1}"; fi
    mapfile -d '' argv < <(python3 "$helper" split "$line")
    rc=0
    chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin "${envs[@]}" "${argv[@]}" \
      > "$TP_WORK/systemd.log" 2>&1 || rc=$?
    [ "$rc" = 0 ] || [ "$ignore" = 1 ] || { cat "$TP_WORK/systemd.log" >&2; die "$unit: exited $rc: $line"; }
  done < <(python3 "$helper" systemd "$unit" ExecStart)
  python3 "$helper" check-warm "$R/etc/imgwarm/feeds/images.txt" "$TP_WORK/www" "$R/srv/image-cache" \
    "$R/var/log/imgwarm/last-report.json"
  grep -q '^imgwarm_' "$R/var/lib/node_exporter/textfile/imgwarm.prom" || die "$unit: no metrics written"
  say "$unit: ExecStart lines run as written"
}

examples_github_actions() {
  local wf=examples/ci/github-actions.yml envs=() shard rc failed reports=()
  mapfile -d '' envs < <(python3 "$helper" gha-env "$wf")
  # The release assets are on the loopback server: the URL the workflow builds
  # from IMGWARM_RELEASES and IMGWARM_VERSION must name the .deb package.sh made.
  envs+=("IMGWARM_RELEASES=http://127.0.0.1:$TP_PORT/releases/download")
  chroot "$R" apt-get purge -y -q imgwarm > /dev/null
  [ ! -e "$R/usr/bin/imgwarm" ] || die "imgwarm still installed after purge"
  local ws="$R/github/workspace"
  mkdir -p "$ws/manifests"
  cp "$R/tmp/manifest.txt" "$ws/manifests/images.txt"
  gha_run() {  # a run: step as the runner runs it in the job's container: bash -e, in the workspace
    python3 "$helper" gha-step "$wf" "$1" "${2:-}" > "$R/tmp/step.sh"
    chroot "$R" /usr/bin/env -i HOME=/github/home PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      CI=true GITHUB_ACTIONS=true "${envs[@]}" /bin/bash -c 'cd /github/workspace && exec bash -e /tmp/step.sh'
  }
  gha_run "Install imgwarm" > "$TP_WORK/gha-install.log" 2>&1 ||
    { tail -30 "$TP_WORK/gha-install.log" >&2; die "$wf: the install step failed"; }
  [ "$(chroot "$R" dpkg-query -W -f '${Version}' imgwarm)" = "$TP_VERSION" ] || die "$wf: install step did not install imgwarm $TP_VERSION"
  for shard in 1 2 3; do
    rc=0
    gha_run Warm "$shard" > "$TP_WORK/gha-warm-$shard.log" 2>&1 || rc=$?
    # Exit 1 exactly when the shard holds broken images: the job fails on them.
    failed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"].get("failed", 0))' \
      "$ws/imgwarm-report-$shard.json")
    if { [ "$failed" = 0 ] && [ "$rc" != 0 ]; } || { [ "$failed" != 0 ] && [ "$rc" != 1 ]; }; then
      cat "$TP_WORK/gha-warm-$shard.log" >&2
      die "$wf: shard $shard exited $rc with $failed failed entries"
    fi
    python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$ws/imgwarm-junit-$shard.xml" ||
      die "$wf: shard $shard's JUnit file does not parse"
    reports+=("$ws/imgwarm-report-$shard.json")
  done
  python3 "$helper" check-warm "$ws/manifests/images.txt" "$TP_WORK/www" \
    "$ws/Caches/com.hackemist.SDImageCache/default" "${reports[@]}"
  say "$wf: install step (release asset + apt) and three warm shards run as written"
}

if [ "${1:-}" = "--in-root" ]; then
  in_root "$2"
  exit 0
fi

# ------------------------------------------------------------------- the host
missing=()
[ "$(id -u)" = 0 ] || missing+=("root (mmdebstrap, chroot)")
for tool in mmdebstrap lintian python3 dpkg-deb objdump; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
python3 -c 'import yaml' 2>/dev/null || missing+=("python3-yaml")
if ((${#missing[@]})); then
  if [ "${CI:-}" = true ]; then die "needs ${missing[*]} (scripts/setup.sh installs the packages)"; fi
  say "SKIPPED: needs ${missing[*]} (scripts/setup.sh installs the packages)"
  exit 0
fi

if [ -n "${PACKAGE_DEB:-}" ]; then
  deb="$PACKAGE_DEB"
else
  deb="$(scripts/package.sh | tail -1)" || die "scripts/package.sh failed (its messages are above)"
fi
[ -f "$deb" ] || die "package.sh made no .deb"
version="$(dpkg-deb -f "$deb" Version)"
depends="$(dpkg-deb -f "$deb" Depends)"

say "lintian $deb"
lintian --fail-on error,warning --display-info "$deb" || die "lintian reports errors or warnings (above)"

work="$(mktemp -d /tmp/imgwarm-test-package.XXXXXX)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The package's own files and Depends.
dpkg-deb -x "$deb" "$work/x"
for f in usr/bin/imgwarm usr/share/man/man1/imgwarm.1.gz usr/share/bash-completion/completions/imgwarm \
         usr/share/zsh/vendor-completions/_imgwarm usr/share/fish/vendor_completions.d/imgwarm.fish \
         usr/share/doc/imgwarm/copyright usr/share/doc/imgwarm/changelog.gz; do
  [ -s "$work/x/$f" ] || die "$deb lacks /$f"
done
depends_names=" $(sed 's/ *([^)]*)//g; s/[,|]/ /g' <<<"$depends" | tr -s ' ') "
while read -r soname; do
  owners="$(dpkg -S "*/$soname" 2>/dev/null | sed 's/: \/.*//' | tr ',' '\n' | sed 's/^ *//; s/:.*//' | sort -u)"
  [ -n "$owners" ] || die "no installed package ships $soname (NEEDED by imgwarm)"
  hit=""
  for p in $owners; do [[ "$depends_names" == *" $p "* ]] && hit="$p"; done
  [ -n "$hit" ] || die "imgwarm needs $soname (package $(echo $owners)), which Depends lacks: $depends"
done < <(objdump -p "$work/x/usr/bin/imgwarm" | awk '$1 == "NEEDED" { print $2 }')
say "Depends covers every NEEDED library: $depends"

# The loopback server: the example images, and the .deb as a release asset.
mkdir -p "$work/www/releases/download/v$version"
cp -r examples/images "$work/www/images"
cp "$deb" "$work/www/releases/download/v$version/"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/www" > "$work/server.log" 2>&1 &
server=$!
port=""
for _ in $(seq 100); do
  port="$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$work/server.log")"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || die "the loopback server did not start: $(cat "$work/server.log")"

# This machine's Debian sources (the mirror it can reach); mmdebstrap's
# default mirror when it has none.
sources=()
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sources=(/etc/apt/sources.list.d/debian.sources)
elif grep -qs '^deb ' /etc/apt/sources.list; then
  grep '^deb ' /etc/apt/sources.list > "$work/sources.list"
  sources=("$work/sources.list")
fi

export TP_WORK="$work" TP_PORT="$port" TP_DEB="$deb" TP_VERSION="$version"
say "mmdebstrap: clean Debian 12 root (minbase) from ${sources[*]:-the default mirror}"
t0=$(date +%s)
mmdebstrap --variant=minbase --mode=unshare --quiet \
  --customize-hook="\"$self\" --in-root \"\$1\"" \
  bookworm "$work/root" "${sources[@]}" || die "the clean-root install or a check in it failed (above)"
t1=$(date +%s)

size=$(stat -c %s "$deb")
say "passed: $(basename "$deb") $size bytes ($(( size / 1024 )) KiB); install in the clean root" \
  "$(awk '{ printf "%.1f", $1 / 1000 }' "$work/install-ms") s (apt-get update + install of imgwarm + $(( $(cat "$work/added-packages") - 1 )) packages from the mirror);" \
  "mmdebstrap + checks $((t1 - t0)) s"
say "Depends: $depends"
