#!/usr/bin/env bash
# The CI step of docs/recipes/ci-artifact.md: warm, check, and leave the
# files a CI job publishes.
#
#   examples/ci/warm-and-publish.sh OUT MANIFEST...
#
# Writes, also when images are broken:
#   OUT/report.json        the JSON report, one entry per manifest line
#   OUT/junit.xml          JUnit XML: one test case per entry, broken images as failures
#   OUT/image-cache.tar.gz the cache folder (file times kept, imgwarm's state left out)
# Exit status: 0 when every image was fetched and decoded; 1 when some are
# broken or missing (the job fails after publishing); 2 usage; 3 the cache
# folder cannot be used.
#
# Environment: IMGWARM, the imgwarm command (default: imgwarm on PATH);
# IMGWARM_LAYOUT (sdwebimage, kingfisher, nuke; default sdwebimage);
# IMGWARM_CACHE, the cache folder (default OUT/cache/ + the library's folder
# name; point it at a folder your CI restores between runs so a re-run only
# fetches what is new); IMGWARM_ARGS, extra `warm` options (--header,
# --shard K/N, --max-failures N, ...).
set -euo pipefail
if [ $# -lt 2 ]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2   # the comment block above
  exit 2
fi
out="$1"
shift
read -r -a imgwarm <<< "${IMGWARM:-imgwarm}"
read -r -a extra <<< "${IMGWARM_ARGS:-}"
layout="${IMGWARM_LAYOUT:-sdwebimage}"
case "$layout" in
  sdwebimage) folder="com.hackemist.SDImageCache/default" ;;
  kingfisher) folder="com.onevcat.Kingfisher.ImageCache.default" ;;
  nuke)       folder="com.github.kean.Nuke.DataCache" ;;
  *) echo "warm-and-publish: unknown layout $layout (sdwebimage, kingfisher, nuke)" >&2; exit 2 ;;
esac
cache="${IMGWARM_CACHE:-$out/cache/$folder}"
mkdir -p "$out"

status=0
"${imgwarm[@]}" warm "$@" --layout "$layout" --cache "$cache" \
  --report "$out/report.json" --junit "$out/junit.xml" --progress lines \
  ${extra[@]+"${extra[@]}"} || status=$?
[ $status -le 1 ] || exit $status

# The artifact: the library's folder as the app reads it, with the files'
# times (Kingfisher keeps each file's expiry in its modification time).
tar -C "$cache" --exclude=./.imgwarm -czf "$out/image-cache.tar.gz" .
echo "warm-and-publish: $out/report.json, $out/junit.xml, $out/image-cache.tar.gz"
exit $status
