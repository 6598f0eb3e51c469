#!/usr/bin/env bash
# Moved: this path only says where the command is now (docs/development.md "Scripts").
echo 'scripts/findings_figures.sh moved to scripts/science/findings_figures.sh: run that, with the same arguments (docs/development.md "Scripts")' >&2
exit 2
