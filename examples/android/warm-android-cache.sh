#!/usr/bin/env bash
# Warms a Glide or Coil disk cache to ship in an Android app's assets, or to
# push to a device (docs/recipes/android-glide-coil.md).
#
#   examples/android/warm-android-cache.sh MANIFEST OUT LAYOUT [MAX_SIZE]
#
# LAYOUT and the folder it fills (the library's default folder name under
# the app's cache dir, Context.getCacheDir()):
#   glide  OUT/image_manager_disk_cache   Glide 4.x/5.x data cache
#   coil   OUT/coil3_disk_cache           Coil 3.x
#   coil2  OUT/image_cache                Coil 2.x
# MAX_SIZE (e.g. 50MiB; default 250MiB, both libraries' default limit) is
# the app's disk cache size: the folder is pruned to it, least recently
# used first, so the library does not trim it on its first open.
# Then every image is checked again (cache verify) and imgwarm's own state
# folder (.imgwarm) is removed: it has no place in an app.
# Exit status: 0 when every image was fetched and is whole; 1 when some were
# broken or missing (their lines are on stderr; the good ones are in OUT);
# 2 usage; 3 the folder holds another library version's journal.
#
# Environment: IMGWARM, the imgwarm command (default: imgwarm on PATH);
# IMGWARM_ARGS, extra `warm` options (e.g. --header for a private CDN).
set -euo pipefail
if [ $# -lt 3 ]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2   # the comment block above
  exit 2
fi
manifest="$1" out="$2" layout="$3" max_size="${4:-250MiB}"
read -r -a imgwarm <<< "${IMGWARM:-imgwarm}"
read -r -a extra <<< "${IMGWARM_ARGS:-}"
case "$layout" in
  glide) folder="$out/image_manager_disk_cache" ;;
  coil)  folder="$out/coil3_disk_cache" ;;
  coil2) folder="$out/image_cache" ;;
  *) echo "warm-android-cache: unknown layout $layout (glide, coil, coil2)" >&2; exit 2 ;;
esac

status=0
rc=0
"${imgwarm[@]}" warm "$manifest" --layout "$layout" --cache "$folder" --progress none \
  ${extra[@]+"${extra[@]}"} || rc=$?
[ $rc -le 1 ] || exit $rc             # usage error, or the folder cannot be used
[ $rc -eq 0 ] || status=1
"${imgwarm[@]}" cache prune --layout "$layout" --cache "$folder" --max-size "$max_size"
"${imgwarm[@]}" cache verify --layout "$layout" --cache "$folder" || status=1
# The state database, the lock and temp files stay on the build machine.
rm -rf "$folder/.imgwarm"
echo "$folder: $(grep -c '^CLEAN ' "$folder/journal") entries"
exit $status
