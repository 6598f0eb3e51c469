"""The integration scripts' checks: each prints one line (ok / FAILED), and finish() ends the script with
exit 1 when any failed, naming how many. One fresh work folder per script."""
import os
import shutil
import sys


class Checklist:
    def __init__(self, name, work):
        self.name, self.failures = name, []
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)

    def __call__(self, condition, what):
        print(("ok: " if condition else "FAILED: ") + what)
        if not condition:
            self.failures.append(what)

    def finish(self):
        if self.failures:
            print("%s: %d check(s) failed" % (self.name, len(self.failures)))
            sys.exit(1)
        print("%s: all checks passed" % self.name)
