#!/usr/bin/env bash
# scripts/common.sh — shared by scripts/demo, scripts/test and scripts/bench (sourced, not run).
#
# Provides: SINEW_ROOT (the repository root), JOBS (all cores), sinew_log, sinew_ensure_packages
# (installs what a fresh Debian 12 machine lacks, silently when nothing is missing; scripts/demo
# asks only for SINEW_DEMO_PACKAGES) and
# sinew_configure_build DIR [cmake args...] (configures Release into DIR once and builds it).

SINEW_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc 2>/dev/null || echo 2)"
export DEBIAN_FRONTEND=noninteractive

# What scripts/demo needs: the library, the command line and the samples on PoCL.
SINEW_DEMO_PACKAGES=(
  cmake g++ ninja-build pkg-config
  ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd clinfo
  libclblast-dev libclfft-dev libsqlite3-dev
  libboost-dev libboost-program-options-dev libhwloc-dev
)
# What scripts/test and scripts/bench need besides (libtbb-dev: the benchmarks' std::sort(par)).
SINEW_TEST_PACKAGES=(
  libgtest-dev sqlite3 libtbb-dev
  libopenmpi-dev openmpi-bin  # sinew::Cluster (SINEW_MPI) and its tests under mpirun
  python3                     # scripts/check-code
  doxygen                     # the API reference (target docs, test docs.reference)
  help2man                    # the sinew man page, made from `sinew --help` at build time
  dpkg-dev file               # CPack's .deb (dpkg-shlibdeps), unpacked and checked by package.deb
)
SINEW_PACKAGES=("${SINEW_DEMO_PACKAGES[@]}" "${SINEW_TEST_PACKAGES[@]}")

sinew_log() { printf '==> %s\n' "$*" >&2; }

sinew_package_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

# sinew_ensure_packages [PACKAGE...]: installs the missing ones of the packages named (default:
# SINEW_PACKAGES, everything); no apt-get call at all when none is missing.
sinew_ensure_packages() {
  local wanted=("$@") missing=() pkg
  ((${#wanted[@]})) || wanted=("${SINEW_PACKAGES[@]}")
  if ! command -v dpkg-query >/dev/null 2>&1; then
    sinew_log "dpkg-query not found: not a Debian system, assuming dependencies are installed"
    return 0
  fi
  for pkg in "${wanted[@]}"; do
    sinew_package_installed "$pkg" || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0

  local sudo=()
  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo -E)
    else
      sinew_log "missing packages: ${missing[*]}"
      sinew_log "run as root (or install sudo) so that they can be installed with apt-get"
      return 1
    fi
  fi
  sinew_log "installing: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# sinew_configure_build DIR [extra cmake args...]: configures (Release, Ninja, the library and
# the samples in unity batches: SINEW_UNITY_BUILD, docs/decisions/186; $SINEW_UNITY_BUILD=OFF
# builds one file at a time) and builds everything with all cores (only the targets
# $SINEW_BUILD_TARGET, separated by spaces, when that is set).
sinew_configure_build() {
  local dir="$1"
  shift
  local generator=()
  # A directory configured earlier keeps its generator; only pick one for a fresh directory.
  if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  sinew_log "configuring $dir"
  cmake -S "$SINEW_ROOT" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSINEW_UNITY_BUILD="${SINEW_UNITY_BUILD:-ON}" "$@" >/dev/null
  sinew_log "building $dir with $JOBS jobs"
  local targets=()
  [[ -n "${SINEW_BUILD_TARGET:-}" ]] && read -r -a targets <<<"$SINEW_BUILD_TARGET"
  cmake --build "$dir" --parallel "$JOBS" ${targets[@]:+--target "${targets[@]}"}
}

# Run directly instead of sourced: say how it is meant to be used.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "scripts/common.sh is sourced by scripts/demo, scripts/test and scripts/bench" >&2
  exit 2
fi
