# shellcheck shell=bash
# Sourced by the shell scripts for their command line (docs/development.md "Scripts"): a bad argument is one line
# on stderr and exit 2, before any work starts; --help prints the script's leading comment.

# usage_error PROG MESSAGE: "PROG: error: MESSAGE (see --help)" on stderr, exit 2.
usage_error() {
  echo "$1: error: $2 (see --help)" >&2
  exit 2
}

# need_value PROG FLAG COUNT: exit 2 unless FLAG has a value after it (COUNT: the script's $# with FLAG as $1).
need_value() {
  [ "$3" -ge 2 ] || usage_error "$1" "$2 needs a value"
}

# need_count PROG WHAT VALUE MIN: exit 2 unless VALUE is a whole number from MIN to 999,999,999, written without
# leading zeros (so the caller can use it as it is: bash reads 010 as octal 8 and 08 as an error).
need_count() {
  if ! [[ $3 =~ ^(0|[1-9][0-9]{0,8})$ ]] || [ "$3" -lt "$4" ]; then
    usage_error "$1" "$2 '$3': expected a whole number from $4 to 999999999, without leading zeros"
  fi
}

# print_help FILE: the comment block after FILE's first line, without its '#'.
print_help() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"
}
