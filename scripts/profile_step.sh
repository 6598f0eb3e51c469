#!/usr/bin/env bash
# Moved: this path only says where the command is now (docs/development.md "Scripts").
echo 'scripts/profile_step.sh moved to scripts/perf/profile_step.sh: run that, with the same arguments (docs/development.md "Scripts")' >&2
exit 2
