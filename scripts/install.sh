#!/usr/bin/env bash
# Installs what building needs (the image libraries' -dev packages and
# pkg-config, nothing for tests or packaging), makes a release build and
# installs, under $PREFIX (default /usr/local):
#   bin/imgwarm
#   share/man/man1/imgwarm.1                         swift-argument-parser's generate-manual
#   share/bash-completion/completions/imgwarm        `imgwarm --generate-completion-script`
#   share/zsh/site-functions/_imgwarm
#   share/fish/vendor_completions.d/imgwarm.fish
# The same files as the .deb (scripts/package.sh), in the folders a local
# prefix uses: bash-completion and fish look in $PREFIX/share for the
# prefix they were installed with; zsh reads site-functions of its own prefix
# (for another prefix, add $PREFIX/share/zsh/site-functions to fpath).
#   scripts/install.sh                       release build, then install
#   scripts/install.sh --binary PATH         install an already built binary
#                                            (no setup, no release build)
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${PREFIX:-/usr/local}"
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) [ $# -ge 2 ] || { echo "install: --binary needs a path" >&2; exit 2; }; binary="$2"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "install: unknown argument '$1' (see scripts/install.sh --help)" >&2; exit 2 ;;
  esac
done
export PATH="/opt/swift/usr/bin:$PATH"
if [ -z "$binary" ]; then
  scripts/setup.sh --install
  swift build -c release --product imgwarm
  binary="$(swift build -c release --show-bin-path)/imgwarm"
else
  [ -x "$binary" ] || { echo "install: $binary is not an executable file" >&2; exit 2; }
fi
# The man page: swift-argument-parser's own generator (the version
# Package.resolved pins), which reads `imgwarm --experimental-dump-help`.
# Built from the resolved checkout in a scratch folder of its own (as
# scripts/package.sh does): not locking .build lets a test under `swift
# test` run this script, and the tool stays built for the next run.
parser=".build/checkouts/swift-argument-parser"
[ -f "$parser/Package.swift" ] || swift package resolve >&2
swift build --package-path "$parser" --scratch-path .build/generate-manual --product generate-manual >&2
manual_tool="$(swift build --package-path "$parser" --scratch-path .build/generate-manual --show-bin-path)/generate-manual"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$manual_tool" "$binary" --output-directory "$work" >&2
[ -s "$work/imgwarm.1" ] || { echo "install: generate-manual wrote no imgwarm.1" >&2; exit 1; }

bash_dir="$PREFIX/share/bash-completion/completions"
zsh_dir="$PREFIX/share/zsh/site-functions"
fish_dir="$PREFIX/share/fish/vendor_completions.d"
install -d "$PREFIX/bin" "$PREFIX/share/man/man1" "$bash_dir" "$zsh_dir" "$fish_dir"
install -m 0755 "$binary" "$PREFIX/bin/imgwarm"
install -m 0644 "$work/imgwarm.1" "$PREFIX/share/man/man1/imgwarm.1"
# bash-completion sources its files: no #! line.
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' > "$work/bash"
"$binary" --generate-completion-script zsh > "$work/zsh"
"$binary" --generate-completion-script fish > "$work/fish"
install -m 0644 "$work/bash" "$bash_dir/imgwarm"
install -m 0644 "$work/zsh" "$zsh_dir/_imgwarm"
install -m 0644 "$work/fish" "$fish_dir/imgwarm.fish"
echo "installed $PREFIX/bin/imgwarm ($("$PREFIX/bin/imgwarm" --version)), its man page and bash, zsh and fish completions"
