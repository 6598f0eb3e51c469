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

# need_count PROG WHAT VALUE MIN: exit 2 unless VALUE is a whole number >= MIN (and at most 9 digits).
need_count() {
  [[ $3 =~ ^[0-9]{1,9}$ ]] && [ "$((10#$3))" -ge "$4" ] || usage_error "$1" "$2 '$3': expected a whole number >= $4"
}

# print_help FILE: the comment block after FILE's first line, without its '#'.
print_help() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"
}
