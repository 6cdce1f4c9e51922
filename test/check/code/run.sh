#!/usr/bin/env bash
# test/check/code/run.sh CHECKER — tests scripts/check-code itself (CTest unit.check.code_selftest)
# on the fake tree beside it (test/check/code/tree/), copied to a temporary folder. The fake tree
# is clean: its comments use words that look like run ids or machines but are none (L1 to L4,
# uint4, x2, b64, 0x1f, "v0", a device name in quotes, code in backticks), lib/tree asks for a
# node kind by its class, lib/runtime/options.cpp reads SINEW_DEVICES, and a 90-row table
# function is marked `// check-code: table`. Each case below adds one violation, expects exactly
# the line that names it (file:line: rule), and takes it out again. Prints one line per case;
# exits non-zero on the first that fails.
set -euo pipefail
checker="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tree="$work/tree"
baseline="$work/baseline"

fail() {
  echo "FAIL: $*" >&2
  [[ -n "${out:-}" ]] && printf 'checker output:\n%s\n' "$out" >&2
  exit 1
}
# run_check: runs the checker on the fake tree with the baseline file; sets out and rc.
run_check() {
  set +e
  out="$("$checker" --root "$tree" --baseline "$baseline" "$@" 2>&1)"
  rc=$?
  set -e
}
expect_fail() {  # $1: what; $2: the start of the one line expected
  run_check
  [[ $rc -eq 1 ]] || fail "$1: exit status $rc, expected 1"
  [[ "$(grep -c '' <<<"$out")" -eq 1 ]] || fail "$1: expected one line of output"
  [[ "$out" == "$2"* ]] || fail "$1: expected a line starting with: $2"
}
expect_pass() {  # $1: what
  run_check
  [[ $rc -eq 0 ]] || fail "$1: exit status $rc, expected 0"
  [[ "$out" == "code check: "*", OK"* ]] || fail "$1: unexpected output"
}
save() { cp "$tree/$1" "$work/saved"; }
restore() { cp "$work/saved" "$tree/$1"; }

cp -R "$here/tree" "$tree"
: >"$baseline"

# 1. The clean tree passes, the marked table and the look-alike words included.
expect_pass "clean fake tree"
echo "ok 1: a clean tree passes: $out"

# 2. A function of 81 lines in lib/ (declaration to closing brace); 80 pass.
{
  echo 'namespace fake {'
  echo 'int long_sum(int x) {'
  for i in $(seq 1 78); do echo "  x += $i;"; done
  echo '  return x;'
  echo '}'
  echo '}  // namespace fake'
} >"$tree/lib/schedule/long.cpp"
expect_fail "a function of 81 lines" 'lib/schedule/long.cpp:2: function-length: long_sum is 81 lines (at most 80)'
sed -i '/x += 78;/d' "$tree/lib/schedule/long.cpp"
expect_pass "a function of 80 lines"
echo "ok 2: a function over 80 lines reported, one of 80 not"

# 3. The table function without its marker.
save lib/runtime/table.cpp
sed -i 's|  // check-code: table||' "$tree/lib/runtime/table.cpp"
expect_fail "an unmarked table" 'lib/runtime/table.cpp:12: function-length: rows is 95 lines (at most 80)'
restore lib/runtime/table.cpp
echo "ok 3: a long table function without its marker reported"

# 4. Comments that name a machine, a run, a session, a measurement round.
save lib/schedule/plan.cpp
sed -i 's|^// Each unit is planned once.*|// Each unit is planned once (on the H200 machine the split ran 1.4 ms).|' "$tree/lib/schedule/plan.cpp"
expect_fail "a machine" 'lib/schedule/plan.cpp:11: comment-machine: a comment names a machine ("H200")'
restore lib/schedule/plan.cpp
sed -i 's|^// Each unit is planned once.*|// Each unit is planned once: the GPU machine showed it.|' "$tree/lib/schedule/plan.cpp"
expect_fail "a GPU machine" 'lib/schedule/plan.cpp:11: comment-machine: a comment names a machine ("GPU machine")'
restore lib/schedule/plan.cpp
for pair in "run c6=c6" "(k4)=k4" "c1-c6=c1" "k11=k11" "r1f=r1f"; do
  id="${pair%=*}"
  sed -i "s|^// Each unit is planned once.*|// Each unit is planned once, as $id showed.|" "$tree/lib/schedule/plan.cpp"
  expect_fail "the run id $id" "lib/schedule/plan.cpp:11: comment-run-id: a comment names a run (\"${pair#*=}\")"
  restore lib/schedule/plan.cpp
done
sed -i 's|^int plan(|/* This is the 14th session'"'"'s plan. */\nint plan(|' "$tree/lib/schedule/plan.cpp"
expect_fail "a session" 'lib/schedule/plan.cpp:12: comment-session: a comment names a session ("14th session")'
restore lib/schedule/plan.cpp
echo '/// The units of a plan (round 3 measured them).' >>"$tree/include/sinew/fake.hpp"
expect_fail "a round" 'include/sinew/fake.hpp:10: comment-round: a comment names a measurement round ("round 3")'
sed -i '$d' "$tree/include/sinew/fake.hpp"
expect_pass "the comments restored"
echo "ok 4: comments naming a machine, a run (run c6, (k4), c1-c6, k11, r1f), a session and a round reported"

# 5. A dynamic_cast to a node class outside lib/tree (also to one deriving from a node class).
save lib/schedule/plan.cpp
sed -i 's|^  int units = n.units();|  if (dynamic_cast<const WhileNode*>(\&n)) return 0;\n  int units = n.units();|' \
  "$tree/lib/schedule/plan.cpp"
expect_fail "a node cast" 'lib/schedule/plan.cpp:13: node-cast: dynamic_cast to the node class WhileNode in plan'
restore lib/schedule/plan.cpp
echo "ok 5: a dynamic_cast to a node class outside lib/tree reported (inside lib/tree not)"

# 6. A SINEW_ variable read outside lib/runtime/options.cpp.
save tools/main.cpp
sed -i 's|std::getenv("HOME")|std::getenv("SINEW_QUIET")|' "$tree/tools/main.cpp"
expect_fail "a SINEW_ read" 'tools/main.cpp:4: env-read: reads $SINEW_QUIET (in main) outside lib/runtime/options.cpp'
restore tools/main.cpp
echo "ok 6: a SINEW_ variable read outside the one reader reported"

# 7. The baseline: accepted violations pass, unrelated edits keep their keys, a line that no
#    longer occurs fails (the baseline only shrinks).
save lib/schedule/plan.cpp
sed -i 's|^// Each unit is planned once.*|// Each unit is planned once (k4 on the H100).|' "$tree/lib/schedule/plan.cpp"
echo 'int too_long() {' >>"$tree/lib/schedule/long.cpp"
for i in $(seq 1 80); do echo "  // line $i" >>"$tree/lib/schedule/long.cpp"; done
echo '  return 0; }' >>"$tree/lib/schedule/long.cpp"
run_check --write-baseline
[[ $rc -eq 0 ]] || fail "--write-baseline: exit status $rc"
[[ "$(grep -vc '^#' "$baseline")" -eq 3 ]] || { out="$(cat "$baseline")"; fail "--write-baseline: expected 3 lines"; }
grep -q '^function-length lib/schedule/long.cpp:too_long$' "$baseline" || { out="$(cat "$baseline")"; fail "baseline key of a function"; }
expect_pass "violations in the baseline"
sed -i '1i // schedule/plan.cpp moved down a line.' "$tree/lib/schedule/plan.cpp"
sed -i '1i // and long.cpp too.' "$tree/lib/schedule/long.cpp"
expect_pass "violations in the baseline, moved by unrelated edits"
restore lib/schedule/plan.cpp
run_check
[[ $rc -eq 1 ]] || fail "stale baseline: exit status $rc, expected 1"
grep -q -E "stale-baseline: 'comment-machine lib/schedule/plan.cpp:" <<<"$out" || fail "stale baseline: no stale-baseline line for the machine"
grep -q -E "stale-baseline: 'comment-run-id lib/schedule/plan.cpp:" <<<"$out" || fail "stale baseline: no stale-baseline line for the run id"
[[ "$(grep -c '' <<<"$out")" -eq 2 ]] || fail "stale baseline: expected two lines"
echo "ok 7: a baseline accepts its violations, keeps its keys under unrelated edits, and fails when a line is stale"
