#!/usr/bin/env bash
# Moved: this path only says where the command is now (docs/development.md "Scripts").
echo 'scripts/fuzz.sh moved to scripts/dev/fuzz.sh: run that, with the same arguments (docs/development.md "Scripts")' >&2
exit 2
