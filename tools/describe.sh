#!/usr/bin/env bash
# tools/describe.sh SINEW OUTDIR — writes what is generated from the command line's own --help
# (so that it never drifts from it): OUTDIR/sinew.bash, the bash completion (commands, the kb
# commands, each one's options, the samples `sinew train` takes, file names after --kb, --out,
# --file), and OUTDIR/sinew.h2m, the sections help2man adds to the man page (every command's
# --help). Run at build time by tools/CMakeLists.txt.
set -euo pipefail
if (($# != 2)); then
  echo "usage: $0 SINEW OUTDIR" >&2
  exit 2
fi
sinew="$1"
out="$2"
mkdir -p "$out"

# The names of a usage's table of commands: the lines after "commands:" up to the first blank one.
names() { awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }'; }
# The long options a --help lists.
options() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' '; }

commands="$("$sinew" --help | names | tr '\n' ' ')"
kb_commands="$("$sinew" kb --help | names | tr '\n' ' ')"
samples="$("$sinew" train --help | sed -n 's/.*(samples: \([^)]*\)).*/\1/p' | tr -d ',')"

{
  echo "# bash completion for sinew, generated from its --help by tools/describe.sh."
  echo "_sinew() {"
  echo '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" options=""'
  echo '  case "$prev" in'
  echo '    --kb | --out | -o | --file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;'
  echo '  esac'
  echo '  if ((COMP_CWORD == 1)); then'
  echo "    mapfile -t COMPREPLY < <(compgen -W \"$commands --help --version\" -- \"\$cur\")"
  echo '    return'
  echo '  fi'
  echo '  case "${COMP_WORDS[1]}" in'
  for c in $commands; do
    if [[ "$c" == kb ]]; then
      echo "    kb)"
      echo "      if ((COMP_CWORD == 2)); then"
      echo "        mapfile -t COMPREPLY < <(compgen -W \"$kb_commands --help\" -- \"\$cur\")"
      echo "        return"
      echo "      fi"
      echo '      case "${COMP_WORDS[2]}" in'
      for k in $kb_commands; do
        echo "        $k) options=\"$("$sinew" kb "$k" --help | options)\" ;;"
      done
      echo "      esac ;;"
    elif [[ "$c" == train ]]; then
      echo "    train)"
      echo "      if ((COMP_CWORD == 2)); then"
      echo "        mapfile -t COMPREPLY < <(compgen -W \"$samples --help\" -- \"\$cur\")"
      echo "        return"
      echo "      fi"
      echo "      options=\"$("$sinew" train --help | options)\" ;;"
    else
      echo "    $c) options=\"$("$sinew" "$c" --help | options)\" ;;"
    fi
  done
  echo '  esac'
  echo '  mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")'
  echo "}"
  echo "complete -F _sinew sinew"
} >"$out/sinew.bash.tmp"
mv "$out/sinew.bash.tmp" "$out/sinew.bash"

# help2man's include file: one section listing every command's own --help.
{
  echo "[COMMANDS]"
  for c in $commands; do
    echo ".SS sinew $c"
    echo ".nf"
    "$sinew" "$c" --help | sed 's/\\/\\e/g; s/^\./\\\&./'
    echo ".fi"
    if [[ "$c" == kb ]]; then
      for k in $kb_commands; do
        echo ".SS sinew kb $k"
        echo ".nf"
        "$sinew" kb "$k" --help | sed 's/\\/\\e/g; s/^\./\\\&./'
        echo ".fi"
      done
    fi
  done
  echo "[ENVIRONMENT]"
  echo "'sinew options' lists every SINEW_* variable, what it accepts and the value in force."
  echo "[SEE ALSO]"
  echo "The user guide and the API reference: docs/guide/ in the source, and the target docs."
} >"$out/sinew.h2m"
