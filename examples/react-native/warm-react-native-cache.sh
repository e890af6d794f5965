#!/usr/bin/env bash
# Warms a React Native app's Android image caches to ship or push to a
# device (docs/recipes/react-native.md).
#
#   examples/react-native/warm-react-native-cache.sh MANIFEST OUT [PRESET]
#
# PRESET and the folder it fills under OUT (the folder's name under the
# app's cache dir, Context.getCacheDir()):
#   react-native-image  OUT/image_cache   <Image> (Fresco), pruned to 40MB
#   react-native-fetch  OUT/http-cache    fetch() (OkHttp's cache), 10MB
# Default: react-native-image. Then every image is checked again (cache
# verify) and imgwarm's own state folder (.imgwarm) is removed.
# Exit status: 0 when every image was fetched and is whole; 1 when some
# were broken or missing (named on stderr); 2 usage.
#
# Environment: IMGWARM, the imgwarm command (default: imgwarm on PATH);
# IMGWARM_ARGS, extra `warm` options (e.g. --expiration 30d for fetch()).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
manifest="$1" out="$2" preset="${3:-react-native-image}"
read -r -a imgwarm <<< "${IMGWARM:-imgwarm}"
read -r -a extra <<< "${IMGWARM_ARGS:-}"
case "$preset" in
  react-native-image) folder="$out/image_cache" ;;
  react-native-fetch) folder="$out/http-cache" ;;
  *) echo "warm-react-native-cache: unknown preset $preset (react-native-image, react-native-fetch)" >&2; exit 2 ;;
esac

status=0
rc=0
"${imgwarm[@]}" warm "$manifest" --preset "$preset" --cache "$folder" --progress none \
  ${extra[@]+"${extra[@]}"} || rc=$?
[ $rc -le 1 ] || exit $rc
[ $rc -eq 0 ] || status=1
"${imgwarm[@]}" cache prune --preset "$preset" --cache "$folder"
"${imgwarm[@]}" cache verify --preset "$preset" --cache "$folder" || status=1
rm -rf "$folder/.imgwarm"
echo "$folder: ready"
exit $status
