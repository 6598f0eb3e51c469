#!/usr/bin/env python3
# Moved: this path only says where the command is now (docs/development.md "Scripts").
import sys

print('scripts/profile_summary.py moved to scripts/perf/profile_summary.py: run that, with the same arguments (docs/development.md "Scripts")', file=sys.stderr)
sys.exit(2)
