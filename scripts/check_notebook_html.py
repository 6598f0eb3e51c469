#!/usr/bin/env python3
# Moved: this path only says where the command is now (docs/development.md "Scripts").
import sys

print('scripts/check_notebook_html.py moved to scripts/dev/check_notebook_html.py: run that, with the same arguments (docs/development.md "Scripts")', file=sys.stderr)
sys.exit(2)
