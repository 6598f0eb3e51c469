#!/usr/bin/env python3
# Moved: this path only says where the command is now (docs/development.md "Scripts").
import sys

print('scripts/plot_findings.py moved to scripts/plots/plot_findings.py: run that, with the same arguments (docs/development.md "Scripts")', file=sys.stderr)
sys.exit(2)
