#!/usr/bin/env bash
# Fills an iOS Simulator app's image cache before UI or snapshot tests
# (docs/recipes/simulator-cache.md).
#
#   examples/ios/fill-simulator.sh CONTAINER MANIFEST [LAYOUT]
#
# CONTAINER is the app's data container, as printed by
#   xcrun simctl get_app_container booted BUNDLE_ID data
# LAYOUT is the app's image library (sdwebimage, kingfisher, nuke; default
# sdwebimage). The images go where that library's default cache reads them:
#   sdwebimage  CONTAINER/Library/Caches/com.hackemist.SDImageCache/default   (SDImageCache.shared)
#   kingfisher  CONTAINER/Library/Caches/com.onevcat.Kingfisher.ImageCache.default   (ImageCache.default)
#   nuke        CONTAINER/Library/Caches/com.github.kean.Nuke.DataCache   (ImagePipeline.Configuration.withDataCache)
# Run it while the app is not running (Kingfisher lists its folder once, at
# launch). Exit status: 0 when every image is in place; 1 when some failed
# (the others are in place); 2 usage; 3 the folder cannot be used.
#
# Environment: IMGWARM, the imgwarm command (default: imgwarm on PATH; on a
# Mac, the container image with the container's path mounted at the same
# place, see the recipe); IMGWARM_ARGS, extra `warm` options.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2   # the comment block above
  exit 2
fi
container="$1" manifest="$2" layout="${3:-sdwebimage}"
read -r -a imgwarm <<< "${IMGWARM:-imgwarm}"
read -r -a extra <<< "${IMGWARM_ARGS:-}"
if [ ! -d "$container/Library" ]; then
  echo "fill-simulator: $container/Library: no such folder (is this the app's data container?)" >&2
  exit 2
fi
case "$layout" in
  sdwebimage) folder="com.hackemist.SDImageCache/default" ;;
  kingfisher) folder="com.onevcat.Kingfisher.ImageCache.default" ;;
  nuke)       folder="com.github.kean.Nuke.DataCache" ;;
  *) echo "fill-simulator: unknown layout $layout (sdwebimage, kingfisher, nuke)" >&2; exit 2 ;;
esac
cache="$container/Library/Caches/$folder"
"${imgwarm[@]}" warm "$manifest" --layout "$layout" --cache "$cache" --progress none ${extra[@]+"${extra[@]}"}
