#!/usr/bin/env bash
# Warms a cache to ship inside an iOS app bundle (docs/recipes/bundled-cache.md).
#
#   examples/ios/warm-bundle.sh MANIFEST OUT [LAYOUT...]
#
# For each LAYOUT (sdwebimage, kingfisher, nuke; default sdwebimage) it warms
# MANIFEST into OUT/<the library's folder name>, the folder to add to the Xcode
# target as a folder reference:
#   sdwebimage  OUT/WarmedImages                              (read through additionalCachePathBlock)
#   kingfisher  OUT/com.onevcat.Kingfisher.ImageCache.default (copied into Library/Caches at first launch)
#   nuke        OUT/com.github.kean.Nuke.DataCache            (copied into Library/Caches at first launch)
# Kingfisher's files get a deadline that never passes (--expiration never):
# the build and the install set their own times.
# Then it checks every file again (cache verify) and removes imgwarm's own
# state folder (.imgwarm), which has no place in an app.
# Exit status: 0 when every image was fetched and is whole; 1 when some were
# broken or missing (their lines are on stderr; the good ones are in OUT);
# 2 usage.
#
# Environment: IMGWARM, the imgwarm command (default: imgwarm on PATH);
# IMGWARM_ARGS, extra `warm` options (e.g. --header for a private CDN).
set -euo pipefail
if [ $# -lt 2 ]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2   # the comment block above
  exit 2
fi
manifest="$1" out="$2"
shift 2
layouts=("$@")
[ ${#layouts[@]} -gt 0 ] || layouts=(sdwebimage)
read -r -a imgwarm <<< "${IMGWARM:-imgwarm}"
read -r -a extra <<< "${IMGWARM_ARGS:-}"

status=0
for layout in "${layouts[@]}"; do
  case "$layout" in
    sdwebimage) folder="$out/WarmedImages"; opts=() ;;
    kingfisher) folder="$out/com.onevcat.Kingfisher.ImageCache.default"; opts=(--expiration never) ;;
    nuke)       folder="$out/com.github.kean.Nuke.DataCache"; opts=() ;;
    *) echo "warm-bundle: unknown layout $layout (sdwebimage, kingfisher, nuke)" >&2; exit 2 ;;
  esac
  echo "== $layout -> $folder"
  rc=0
  "${imgwarm[@]}" warm "$manifest" --layout "$layout" --cache "$folder" --progress none \
    ${opts[@]+"${opts[@]}"} ${extra[@]+"${extra[@]}"} || rc=$?
  [ $rc -le 1 ] || exit $rc           # usage error, or the folder cannot be used
  [ $rc -eq 0 ] || status=1
  "${imgwarm[@]}" cache verify --layout "$layout" --cache "$folder" || status=1
  # The state database, the lock and temp files stay on the build machine.
  rm -rf "$folder/.imgwarm"
done
exit $status
