#!/usr/bin/env bash
# test/check/run.sh CHECKER — tests scripts/check-includes itself (CTest unit.check.include_order_selftest)
# on the fake tree beside it (test/check/tree/), copied to a temporary folder with a
# docs/ARCHITECTURE.md holding the checker's own --graph. The fake tree has exactly two
# violations: lib/decompose/decompose.cpp includes exec/executor.hpp (decompose -> exec), and
# lib/kb/kb.cpp includes platform/error.hpp, which includes platform/cl.hpp (OpenCL from kb,
# transitively). Prints one line per case; exits non-zero on the first that fails.
set -euo pipefail
checker="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  [[ -n "${out:-}" ]] && printf 'checker output:\n%s\n' "$out" >&2
  exit 1
}
# run_check: runs the checker on $work/tree; sets out and rc.
run_check() {
  set +e
  out="$("$checker" --root "$work/tree" 2>&1)"
  rc=$?
  set -e
}
expect_line() {  # the output has a line that starts with $1
  grep -q -F -x -e "$1" <<<"$(cut -c1-${#1} <<<"$out")" || fail "no line starting with: $1"
}
expect_lines() {  # the output has exactly $1 lines
  [[ "$(grep -c '' <<<"$out")" -eq "$1" ]] || fail "expected $1 line(s) of output"
}

cp -R "$here/tree" "$work/tree"
mkdir -p "$work/tree/docs"
{
  echo "# Fake architecture"
  echo
  echo "<!-- module-graph:begin -->"
  "$checker" --graph
  echo "<!-- module-graph:end -->"
} >"$work/tree/docs/ARCHITECTURE.md"

# 1. The fake tree: fails with both violations, and nothing else.
run_check
[[ $rc -eq 1 ]] || fail "fake tree: exit status $rc, expected 1"
expect_line 'lib/decompose/decompose.cpp:3: #include "exec/executor.hpp": decompose -> exec: decompose may include only decompose, tree, platform'
expect_line 'lib/kb/kb.cpp:5: #include "platform/error.hpp": kb -> platform, reaching lib/platform/cl.hpp through lib/platform/error.hpp: kb knows no OpenCL'
expect_lines 2
echo "ok 1: a module violation and a transitive OpenCL include from kb reported"

# 2. Without them: passes with the one summary line.
sed -i '\|"exec/executor.hpp"|d' "$work/tree/lib/decompose/decompose.cpp"
sed -i '\|"platform/error.hpp"|d' "$work/tree/lib/kb/kb.cpp"
run_check
[[ $rc -eq 0 ]] || fail "clean fake tree: exit status $rc, expected 0"
[[ "$out" == "include order: 14 files, 21 includes, OK" ]] || fail "clean fake tree: unexpected output"
echo "ok 2: a clean tree passes: $out"

# 3. kb reaching CL/cl_platform.h through public headers (kb.hpp -> tree.hpp -> types.hpp):
#    kb.hpp breaks the order, and both kb files reach OpenCL.
cp "$work/tree/include/sinew/kb.hpp" "$work/kb.hpp"
echo '#include <sinew/tree.hpp>' >>"$work/tree/include/sinew/kb.hpp"
run_check
[[ $rc -eq 1 ]] || fail "kb.hpp including tree.hpp: exit status $rc, expected 1"
expect_line 'include/sinew/kb.hpp:4: #include <sinew/tree.hpp>: kb -> tree: kb may include only kb, platform'
expect_line 'include/sinew/kb.hpp:4: #include <sinew/tree.hpp>: kb -> tree, reaching <CL/cl_platform.h> through include/sinew/tree.hpp -> include/sinew/types.hpp: kb knows no OpenCL'
expect_line 'lib/kb/kb.cpp:3: #include <sinew/kb.hpp>: kb -> kb, reaching <CL/cl_platform.h> through include/sinew/kb.hpp -> include/sinew/tree.hpp -> include/sinew/types.hpp: kb knows no OpenCL'
expect_lines 3
cp "$work/kb.hpp" "$work/tree/include/sinew/kb.hpp"
echo "ok 3: kb reaching OpenCL through public headers reported"

# 4. A public header the table does not know.
echo '#pragma once' >"$work/tree/include/sinew/extra.hpp"
run_check
[[ $rc -eq 1 ]] || fail "unknown public header: exit status $rc, expected 1"
expect_line 'include/sinew/extra.hpp: a public header the rules do not know: add it to the table'
expect_lines 1
rm "$work/tree/include/sinew/extra.hpp"
echo "ok 4: an unknown public header reported"

# 5. The doc's graph differing from the table.
sed -i 's/^| kb | platform;/| kb | platform, tree;/' "$work/tree/docs/ARCHITECTURE.md"
run_check
[[ $rc -eq 1 ]] || fail "stale doc: exit status $rc, expected 1"
expect_line 'docs/ARCHITECTURE.md:3: the module graph differs from the rules'
expect_lines 1
echo "ok 5: a doc whose graph differs reported"
