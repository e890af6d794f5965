#!/usr/bin/env bash
# Warms flutter_cache_manager's default store (what cached_network_image
# reads) to ship in a Flutter app's assets (docs/recipes/flutter.md).
#
#   examples/flutter/warm-flutter-cache.sh MANIFEST OUT [MAX_OBJECTS]
#
# OUT receives what the app copies at its first launch:
#   OUT/libCachedImageData.db   -> getApplicationSupportDirectory()
#   OUT/libCachedImageData/     -> getTemporaryDirectory()
# MAX_OBJECTS (default 200, the library's maxNrOfCacheObjects): more rows
# than that are refused with exit status 2, since the app's own cleanup
# removes all but that many once they are a day old; raise the app's
# maxNrOfCacheObjects and pass the same number here.
# Every image is checked again (cache verify) and imgwarm's state folder
# (.imgwarm) is removed.
# Exit status: 0 when every image was fetched and is whole; 1 when some were
# broken or missing (their lines are on stderr; the good ones are in OUT);
# 2 usage or too many objects; 3 OUT holds a database of another schema.
#
# Environment: IMGWARM, the imgwarm command (default: imgwarm on PATH);
# IMGWARM_ARGS, extra `warm` options.
set -euo pipefail
if [ $# -lt 2 ]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2   # the comment block above
  exit 2
fi
manifest="$1" out="$2" max_objects="${3:-200}"
read -r -a imgwarm <<< "${IMGWARM:-imgwarm}"
read -r -a extra <<< "${IMGWARM_ARGS:-}"

status=0
rc=0
"${imgwarm[@]}" warm "$manifest" --layout flutter --cache "$out" --progress none \
  ${extra[@]+"${extra[@]}"} || rc=$?
[ $rc -le 1 ] || exit $rc
[ $rc -eq 0 ] || status=1
"${imgwarm[@]}" cache verify --layout flutter --cache "$out" || status=1
rm -rf "$out/.imgwarm"
count=$(find "$out/libCachedImageData" -type f | wc -l)
echo "$out: $count files"
if [ "$count" -gt "$max_objects" ]; then
  echo "warm-flutter-cache: $count objects, more than maxNrOfCacheObjects $max_objects: the app would remove the rest a day after they were last read" >&2
  exit 2
fi
exit $status
