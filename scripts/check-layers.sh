#!/usr/bin/env bash
# Proves the direction of the engine's layers inside the one ImgWarmKit
# module (docs/architecture.md, "Layers"): each folder is type-checked as a
# module of its own together with only the folders it may import, so a
# reference the other way (a type, a function, an extension member) fails
# to compile here even though the whole module builds. Also checks each
# folder's `import` lines against the modules that folder may import.
#   scripts/check-layers.sh            all layers
#   scripts/check-layers.sh Cache      only the named layers
# Needs a debug build first (`swift build`): the flags and the compiled
# dependencies (swift-crypto, GRDB, ...) are those of ImgWarmKit's build.
# Exit 0: every layer holds; 1: a layer reaches up (compiler errors shown).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
kit=Sources/ImgWarmKit

# Layer: the folders it is made of, the layers it may import, the modules it
# may import. "Warm" is the Prefetch folder; "Inspect" (cache stats and
# verify, which decode) sits above Cache and Decode.
folders() { case "$1" in
  Support) echo Support ;; Decode) echo Decode ;; Download) echo Download ;;
  Cache) echo Cache/Backend Cache/Index Cache/Layouts Cache/Prune Cache/Store Cache/Walk ;;
  Inspect) echo Cache/Inspect ;; Report) echo Report ;; Warm) echo Prefetch ;; esac; }
may_import() { case "$1" in
  Support) echo "" ;; Decode|Download|Cache|Report) echo Support ;;
  Inspect) echo "Support Decode Cache" ;;
  Warm) echo "Support Decode Download Cache Inspect Report" ;; esac; }
system='Foundation|Glibc|Darwin|Dispatch|Synchronization'
modules() { case "$1" in
  Support) echo "CCurl|CFileScan|Collections" ;;
  Decode) echo "CImageCodecs" ;;
  Download) echo "CCurl|Collections" ;;
  Cache) echo "CFileScan|Crypto|GRDB|GRDBSQLite|Collections" ;;
  Inspect) echo "CFileScan" ;;
  Report) echo "CFileScan" ;;
  Warm) echo "Crypto|Collections" ;; esac; }

# ImgWarmKit's own compile flags, minus its sources and outputs.
yaml=.build/debug.yaml
[ -f "$yaml" ] || { echo "check-layers: no $yaml; run swift build first" >&2; exit 2; }
mapfile -t flags < <(python3 - "$yaml" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
i = text.find('"C.ImgWarmKit-')
j = text.find('args:', i)
args = json.loads(text[j + 5:text.find('\n', j)])
keep, skip = [], 0
drop1 = {'-module-name', '-emit-module-path', '-output-file-map', '-index-store-path',
         '-emit-objc-header-path', '-j2'}
drop0 = {'-emit-dependencies', '-emit-module', '-incremental', '-c', '-enable-batch-mode',
         '-serialize-diagnostics', '-parseable-output', '-emit-objc-header', '-enable-testing'}
for a in args[1:]:
    if skip: skip -= 1; continue
    if a in drop1: skip = 1; continue
    if a in drop0 or a.endswith('.swift') or a.startswith('@') or a.startswith('-j'): continue
    keep.append(a)
print('\n'.join(keep))
PY
)

status=0
for layer in ${*:-Support Decode Download Cache Inspect Report Warm}; do
  own=$(folders "$layer")
  allowed=":[0-9]+:(@preconcurrency )?(@_implementationOnly )?import ($system|$(modules "$layer"))\$"
  bad=$(for d in $own; do grep -rnE '^(@[A-Za-z_]+ )*import ' "$kit/$d"; done | grep -vE "$allowed" || true)
  if [ -n "$bad" ]; then
    echo "check-layers: $layer imports a module it may not:" >&2; echo "$bad" >&2; status=1
  fi
  files=()
  for d in $own $(for l in $(may_import "$layer"); do folders "$l"; done); do
    while IFS= read -r s; do files+=("$s"); done < <(find "$kit/$d" -name '*.swift' | sort)
  done
  start=$(date +%s)
  if swiftc -typecheck "${flags[@]}" -module-name "ImgWarmLayer$layer" "${files[@]}" 2>.build/check-layers-$layer.log; then
    echo "check-layers: $layer ok (${#files[@]} files with $(may_import "$layer" | tr ' ' ',' | sed 's/^$/nothing else/'), $(( $(date +%s) - start ))s)" >&2
  else
    echo "check-layers: $layer reaches a layer it may not import:" >&2
    grep -E '^[^ ].*error:' .build/check-layers-$layer.log | sed "s|^$PWD/||" | sort -u >&2
    status=1
  fi
done
exit $status
