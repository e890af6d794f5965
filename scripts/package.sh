#!/usr/bin/env bash
# Builds dist/imgwarm_<version>_<arch>.deb, a package that needs no Swift:
#   /usr/bin/imgwarm                      release build, --static-swift-stdlib, stripped
#   /usr/share/man/man1/imgwarm.1.gz      from the argument parser (swift-argument-parser's
#                                         generate-manual tool)
#   bash, zsh and fish completions        from `imgwarm --generate-completion-script`
#   /usr/share/doc/imgwarm/               copyright, changelog.gz
# Depends is what dpkg-shlibdeps derives from the binary's NEEDED entries, so a
# C library linked in later (a new image format) lands in it by itself.
# Version: Sources/ImgWarmSupport/Version.swift (packaging/deb/changelog
# must have an entry for it); architecture: dpkg --print-architecture.
# Needs the Swift toolchain (/opt/swift, or swift on PATH) and dpkg-dev.
#   scripts/package.sh          (PACKAGE_SCRATCH: build folder, default .build-package)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
export PATH="/opt/swift/usr/bin:$PATH"
umask 022

die() { echo "package: $*" >&2; exit 1; }
# A command that fails without a word of its own still names itself.
trap 'echo "package: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
for tool in swift dpkg-shlibdeps dpkg-gencontrol dpkg-deb dpkg-parsechangelog strip readelf gzip; do
  command -v "$tool" >/dev/null || die "needs $tool (scripts/setup.sh installs dpkg-dev; Swift goes in /opt/swift)"
done

version="$(sed -n 's/^ *public static let string = "\([^"]*\)".*/\1/p' Sources/ImgWarmSupport/Version.swift)"
[ -n "$version" ] || die "no version found in Sources/ImgWarmSupport/Version.swift"
changelog_version="$(dpkg-parsechangelog -l packaging/deb/changelog -S Version)"
[ "$changelog_version" = "$version" ] ||
  die "packaging/deb/changelog's latest entry is $changelog_version, Version.swift says $version: add a changelog entry"
arch="$(dpkg --print-architecture)"
deb="dist/imgwarm_${version}_${arch}.deb"
scratch="${PACKAGE_SCRATCH:-.build-package}"
# File dates and the man page's date come from the changelog entry, so two
# runs on one commit give the same files.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l packaging/deb/changelog -S Timestamp)}"
manual_date="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. The binary, with the Swift runtime, Foundation and Dispatch linked in.
#    Full RELRO and immediate binding as Debian builds its binaries; no
#    $ORIGIN run path (the binary needs no library beside it).
echo "package: release build, --static-swift-stdlib" >&2
swift build -c release --static-swift-stdlib --disable-local-rpath --product imgwarm --scratch-path "$scratch" \
  -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/imgwarm"
[ "$("$bin" --version)" = "$version" ] || die "$bin --version says '$("$bin" --version)', expected $version"
needed="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
if grep -E '^libswift|^libFoundation|^libdispatch|^libBlocksRuntime' <<<"$needed"; then
  die "$bin still needs the shared Swift runtime (above): the static link did not happen"
fi
if readelf -d "$bin" | grep -E '\((RPATH|RUNPATH)\)'; then
  die "$bin has a run path (above) into the build machine"
fi

# 2. The man page, by swift-argument-parser's generate-manual tool (the
#    version Package.resolved pins), which reads `imgwarm
#    --experimental-dump-help`. Its `swift package generate-manual` plugin
#    runs the same tool, but first builds every product in release mode
#    without --static-swift-stdlib (the test server's swift-nio included),
#    and switching those flags back recompiles everything: two full release
#    builds per run. Built from the resolved checkout, the tool alone takes
#    about half a minute of CPU.
echo "package: man page (swift-argument-parser's generate-manual)" >&2
parser="$scratch/checkouts/swift-argument-parser"
[ -f "$parser/Package.swift" ] || die "no swift-argument-parser checkout in $parser"
swift build -c release --package-path "$parser" --scratch-path "$scratch/generate-manual" \
  --product generate-manual >&2
mkdir "$work/manual"
"$scratch/generate-manual/release/generate-manual" "$bin" --date "$manual_date" --output-directory "$work/manual" >&2
manual="$work/manual/imgwarm.1"
[ -s "$manual" ] || die "generate-manual wrote no imgwarm.1"

# 3. The package tree, in the layout dpkg-shlibdeps and dpkg-gencontrol
#    expect (debian/control, debian/changelog, debian/<package>/).
mkdir "$work/debian"
cp packaging/deb/control packaging/deb/changelog "$work/debian/"
root="$work/debian/imgwarm"
doc="$root/usr/share/doc/imgwarm"
install -d "$root/DEBIAN"
install -D -m 0755 "$bin" "$root/usr/bin/imgwarm"
# What dh_strip does: no symbol tables, no .comment/.note sections.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/imgwarm"
"$root/usr/bin/imgwarm" --version >/dev/null || die "the stripped binary does not run"
install -d "$root/usr/share/man/man1" "$doc" \
  "$root/usr/share/bash-completion/completions" \
  "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d"
gzip -9n < "$manual" > "$root/usr/share/man/man1/imgwarm.1.gz"
# bash-completion sources its files: the generator's #!/bin/bash line is noise
# (lintian: bash-completion-with-hashbang).
"$bin" --generate-completion-script bash | sed '1{/^#!/d}' > "$root/usr/share/bash-completion/completions/imgwarm"
"$bin" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_imgwarm"
"$bin" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/imgwarm.fish"
install -m 0644 packaging/deb/copyright "$doc/copyright"
# A native package (no Debian revision) ships its changelog as changelog.gz.
gzip -9n < packaging/deb/changelog > "$doc/changelog.gz"
find "$root" -type f ! -path '*/usr/bin/*' -exec chmod 0644 {} +

# 4. Control data: Depends from the binary's NEEDED entries (dpkg-shlibdeps
#    maps each soname to the package that ships it, with the minimum version
#    the used symbols need), Installed-Size from the tree.
#    The AVIF, HEIF and JPEG XL libraries are opened with dlopen on first
#    use (Sources/CImageCodecs/lazy_codecs.h), so no NEEDED entry names them:
#    their packages go into ${imgwarm:Lazy}, found from the library the
#    development symlink (the one the build compiled against) points at.
lazy=""
for name in avif heif jxl; do
  # awk reads to the end: an early `exit` let ldconfig die of SIGPIPE while
  # still writing (2 runs in 200 here), which pipefail made a silent failure.
  lib="$(ldconfig -p | awk -v n="lib$name.so" '$1 == n && !found { print $NF; found = 1 }')"
  [ -n "$lib" ] && lib="$(readlink -f "$lib")"
  [ -f "$lib" ] || die "no lib$name.so to find its package by (is lib$name-dev installed?)"
  pkg="$(dpkg -S "$lib" | sed -n '1s/:.*//p')"
  [ -n "$pkg" ] || die "no installed package ships $lib"
  lazy="${lazy:+$lazy, }$pkg (>= $(dpkg-query -W -f='${Version}' "$pkg"))"
done
(
  cd "$work"
  dpkg-shlibdeps -Tdebian/substvars "debian/imgwarm/usr/bin/imgwarm"
  echo "imgwarm:Lazy=$lazy" >> debian/substvars
  dpkg-gencontrol -pimgwarm -Pdebian/imgwarm -Tdebian/substvars
)
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch --no-dereference -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p dist
rm -f "dist/imgwarm_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "package: $deb ($(stat -c %s "$deb") bytes)" >&2
echo "package: $(dpkg-deb -f "$deb" Depends | sed 's/^/Depends: /')" >&2
echo "$repo/$deb"
