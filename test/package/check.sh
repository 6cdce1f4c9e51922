#!/usr/bin/env bash
# test/package/check.sh MODE BUILD_DIR PACKAGE_SOURCE_DIR
#
# Builds and runs the outside project in PACKAGE_SOURCE_DIR (test/package) against the Sinew
# built in BUILD_DIR, found as a user finds it:
#   install     `cmake --install` into a scratch prefix; find_package(Sinew) there, with the
#               components this build has (and fails cleanly for one it lacks: MPI when built
#               without it, a component that does not exist), then pkg-config's sinew.pc
#   build-tree  find_package(Sinew) from the build tree itself (-DSinew_DIR=BUILD_DIR)
#   deb         `cpack -G DEB`, the package unpacked into a scratch root (dpkg-deb -x): its
#               files (library, headers, CMake and pkg-config files, the sinew command with its
#               man page and bash completion), then find_package(Sinew) and `sinew --version` there
#   subproject  configures (only) test/package/subproject, which add_subdirectory()s the Sinew
#               source beside BUILD_DIR's: the library alone, static when BUILD_SHARED_LIBS is unset
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 install|build-tree|deb|subproject BUILD_DIR PACKAGE_SOURCE_DIR" >&2
  exit 2
fi
mode="$1"
build_dir="$(cd "$2" && pwd)"
source_dir="$(cd "$3" && pwd)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/sinew-package.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" 2>/dev/null || true; }

args=(-DCMAKE_BUILD_TYPE=Release)
command -v ninja >/dev/null 2>&1 && args+=(-G Ninja)
# A sanitizer build of the library only links into a program built the same way.
sanitize_flags=()
if [[ "$(cache SINEW_SANITIZE)" == "ON" ]]; then
  sanitize_flags=(-fsanitize=address,undefined -fno-omit-frame-pointer)
  args+=(-DCMAKE_CXX_FLAGS="${sanitize_flags[*]}" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined")
fi
compiler="$(cache CMAKE_CXX_COMPILER)"
[[ -n "$compiler" ]] && args+=(-DCMAKE_CXX_COMPILER="$compiler")
components=""
[[ "$(cache SINEW_MPI)" == "ON" ]] && components="MPI"

# configure NAME EXPECTED_DIR [cmake args...]: configures the test project into $tmp/NAME and
# checks that find_package(Sinew) took the package under EXPECTED_DIR.
configure() {
  local name="$1" expected="$2"
  shift 2
  echo "== configure $name"
  cmake -S "$source_dir" -B "$tmp/$name" "${args[@]}" "$@"
  local found
  found="$(sed -n 's/^Sinew_DIR:[A-Z]*=//p' "$tmp/$name/CMakeCache.txt")"
  if [[ "$found" != "$expected"* ]]; then
    echo "find_package(Sinew) found $found, not the package in $expected" >&2
    exit 1
  fi
}

build_and_run() {
  echo "== build and run $1"
  cmake --build "$tmp/$1"
  "$tmp/$1/sinew_package_test"
}

# refused NAME COMPONENTS MESSAGE [cmake args...]: find_package(Sinew COMPONENTS ...) must fail,
# saying MESSAGE.
refused() {
  local name="$1" asked="$2" message="$3"
  shift 3
  echo "== configure $name (COMPONENTS $asked: must fail)"
  if cmake -S "$source_dir" -B "$tmp/$name" "${args[@]}" -DSINEW_COMPONENTS="$asked" "$@" >"$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log"
    echo "find_package(Sinew COMPONENTS $asked) succeeded; it must fail" >&2
    exit 1
  fi
  if ! tr '\n' ' ' <"$tmp/$name.log" | tr -s ' ' | grep -qF "$message"; then
    cat "$tmp/$name.log"
    echo "find_package(Sinew COMPONENTS $asked) failed without saying: $message" >&2
    exit 1
  fi
}

case "$mode" in
  install)
    prefix="$tmp/prefix"
    echo "== cmake --install $build_dir --prefix $prefix"
    cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
    configure installed "$prefix" -DCMAKE_PREFIX_PATH="$prefix" -DSINEW_COMPONENTS="$components"
    build_and_run installed
    if [[ -z "$components" ]]; then
      refused without-mpi MPI "this Sinew was built without MPI" -DCMAKE_PREFIX_PATH="$prefix"
    fi
    refused unknown Frobnicate "Sinew has no component 'Frobnicate'" -DCMAKE_PREFIX_PATH="$prefix"

    echo "== pkg-config sinew"
    pc_dir="$(dirname "$(find "$prefix" -name sinew.pc | head -n 1)")"
    pc=(pkg-config)
    [[ "$(cache BUILD_SHARED_LIBS)" == "OFF" ]] && pc+=(--static)
    flags="$(PKG_CONFIG_PATH="$pc_dir" "${pc[@]}" --cflags --libs sinew)"
    echo "$flags"
    # shellcheck disable=SC2086  # the flags are words
    "${compiler:-c++}" "${sanitize_flags[@]}" -o "$tmp/pkg-config-test" "$source_dir/main.cpp" $flags
    LD_LIBRARY_PATH="$(dirname "$(find "$prefix" -name 'libsinew.*' | head -n 1)")" "$tmp/pkg-config-test"
    ;;
  build-tree)
    configure build-tree "$build_dir" -DSinew_DIR="$build_dir" -DSINEW_COMPONENTS="$components"
    build_and_run build-tree
    ;;
  deb)
    echo "== cpack -G DEB in $build_dir"
    (cd "$build_dir" && cpack -G DEB -B "$tmp/cpack" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; exit 1; }
    deb="$(find "$tmp/cpack" -maxdepth 1 -name '*.deb' | head -n 1)"
    [[ -n "$deb" ]] || { cat "$tmp/cpack.log"; echo "cpack wrote no .deb" >&2; exit 1; }
    echo "== $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
    root="$tmp/root"
    dpkg-deb -x "$deb" "$root"
    for f in usr/include/sinew/sinew.hpp usr/lib/cmake/Sinew/SinewConfig.cmake usr/lib/pkgconfig/sinew.pc \
             usr/bin/sinew usr/share/man/man1/sinew.1.gz usr/share/bash-completion/completions/sinew; do
      [[ -e "$root/$f" ]] || { dpkg-deb -c "$deb"; echo "the package lacks /$f" >&2; exit 1; }
    done
    ls "$root"/usr/lib/libsinew.* >/dev/null
    "$root/usr/bin/sinew" --version
    configure deb "$root/usr" -DCMAKE_PREFIX_PATH="$root/usr" -DSINEW_COMPONENTS="$components"
    build_and_run deb
    ;;
  subproject)
    echo "== configure $source_dir/subproject over $(cache CMAKE_HOME_DIRECTORY)"
    cmake -S "$source_dir/subproject" -B "$tmp/subproject" "${args[@]}" \
      -DSINEW_SOURCE_DIR="$(cache CMAKE_HOME_DIRECTORY)"
    ;;
  *)
    echo "$0: unknown mode '$mode' (install, build-tree, deb or subproject)" >&2
    exit 2
    ;;
esac
echo "== package check ($mode) passed"
