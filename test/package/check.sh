#!/usr/bin/env bash
# test/package/check.sh BUILD_DIR PACKAGE_SOURCE_DIR
#
# Installs the Sinew already built in BUILD_DIR into a temporary prefix, then configures, builds
# and runs the outside project in PACKAGE_SOURCE_DIR against it with find_package(Sinew).
# Proves the installed package config, exported targets and headers are complete.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 BUILD_DIR PACKAGE_SOURCE_DIR" >&2
  exit 2
fi
build_dir="$(cd "$1" && pwd)"
source_dir="$(cd "$2" && pwd)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/sinew-package.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

echo "== cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

args=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release)
command -v ninja >/dev/null 2>&1 && args+=(-G Ninja)
# A sanitizer build of the library only links into a program built the same way.
if grep -q '^SINEW_SANITIZE:BOOL=ON$' "$build_dir/CMakeCache.txt" 2>/dev/null; then
  args+=(-DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
         -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined")
fi
# Take the compiler the library was built with.
compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)"
[[ -n "$compiler" ]] && args+=(-DCMAKE_CXX_COMPILER="$compiler")

echo "== configure $source_dir"
cmake -S "$source_dir" -B "$tmp/build" "${args[@]}"
found="$(sed -n 's/^Sinew_DIR:PATH=//p' "$tmp/build/CMakeCache.txt")"
if [[ "$found" != "$prefix"/* ]]; then
  echo "find_package(Sinew) found $found, not the package installed in $prefix" >&2
  exit 1
fi

echo "== build"
cmake --build "$tmp/build"

echo "== run"
"$tmp/build/sinew_package_test"
