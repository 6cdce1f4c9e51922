#!/usr/bin/env bash
# tools/check-docs.sh TOOLS_BUILD_DIR — the generated bash completion completes what `sinew`
# offers (commands, kb commands, a command's options, sample names), and the man page is a
# gzipped roff page of every command (test tools.completion_and_man).
set -euo pipefail
dir="$1"
# shellcheck source=/dev/null
source "$dir/sinew.bash"

# completes "WORD..." EXPECTED...: the completion of the last word lists every EXPECTED.
completes() {
  local words="$1"
  shift
  read -r -a COMP_WORDS <<<"$words"
  [[ "$words" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _sinew
  local want
  for want in "$@"; do
    if [[ " ${COMPREPLY[*]} " != *" $want "* ]]; then
      echo "completing '$words' gave '${COMPREPLY[*]}', without '$want'" >&2
      exit 1
    fi
  done
}
completes "sinew k" kb
completes "sinew " devices smoke kb train load cache options --help --version
completes "sinew kb s" show
completes "sinew kb " list show plot export import clear
completes "sinew kb show --j" --json
completes "sinew kb plot --" --out --kb --tree
completes "sinew devices --" --json --mpi --devices
completes "sinew train sax" saxpy

if [[ -f "$dir/sinew.1.gz" ]]; then
  page="$(gzip -dc "$dir/sinew.1.gz")"
  grep -q '^\.TH SINEW' <<<"$page" || { echo "sinew.1.gz is no man page" >&2; exit 1; }
  for section in "sinew devices" "sinew kb plot" "sinew train"; do
    grep -qF "$section" <<<"$page" || { echo "the man page lacks '$section'" >&2; exit 1; }
  done
fi
echo "completion and man page OK"
