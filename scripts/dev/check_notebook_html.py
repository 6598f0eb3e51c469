#!/usr/bin/env python3
"""Opens an executed notebook's HTML in headless Chromium and checks what a reader would see: every figure
loaded and is not blank (drawn into a canvas in the page: more than one colour), at least N of them, and no
output is an error or stderr text. Optionally saves a screenshot of the page.

Usage: check_notebook_html.py HTML --figures N [--screenshot PNG]
Exit codes: 0 checks passed, 1 a check failed (one line each) or the screenshot or a temporary file could not be
written (one line naming it), 2 bad arguments (HTML not a readable UTF-8 HTML file; a --screenshot that is the
HTML, holds or lies inside it, or is a folder, FIFO or device: one line naming it) or Chromium failed.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/: the xsapy package
from xsapy import user_input  # noqa: E402  (a user-named file read, or one line and exit 2)


def fail(message):
    user_input.fail("check_notebook_html", message)

# Runs in the page once it has loaded: every <img> loaded and non-blank, error and stderr outputs counted.
PROBE = """
<script>
window.addEventListener('load', () => {
  const images = Array.from(document.images).map((img, i) => {
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    let colours = 0;
    if (img.complete && img.naturalWidth > 0) {
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data, seen = new Set();
      for (let k = 0; k < px.length && seen.size < 3; k += 4) seen.add(px[k] + ',' + px[k + 1] + ',' + px[k + 2]);
      colours = seen.size;
    }
    return {index: i, loaded: img.complete && img.naturalWidth > 0, width: img.naturalWidth, colours: colours};
  });
  const errors = document.querySelectorAll(
      '.output_error, .output_stderr, [data-mime-type="application/vnd.jupyter.stderr"]').length;
  const pre = document.createElement('pre');
  pre.id = 'xsa-check';
  pre.textContent = JSON.stringify({images: images, errors: errors});
  document.body.appendChild(pre);
});
</script>
"""

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


def chromium(args, profile):
    cmd = ["chromium", *CHROMIUM_FLAGS, "--user-data-dir=" + profile, *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as e:
        fail("chromium failed to run (%s)" % e)


def probe_report(report):
    """True for what PROBE writes: {"images": [{index, loaded, width, colours}...], "errors": N}."""
    keys = {"index", "loaded", "width", "colours"}
    return (isinstance(report, dict) and isinstance(report.get("images"), list)
            and isinstance(report.get("errors"), int)
            and all(isinstance(i, dict) and keys <= i.keys() for i in report["images"]))


def main():
    parser = user_input.ArgumentParser("check_notebook_html")
    parser.add_argument("html")
    parser.add_argument("--figures", type=int, required=True, help="figures the notebook must show at least (>= 0)")
    parser.add_argument("--screenshot")
    args = parser.parse_args()
    if args.figures < 0:  # "at least N figures": a negative N would pass any page
        parser.error(f"--figures {args.figures}: expected an integer >= 0 (the figures the page must show at least)")
    if args.screenshot:  # checked before anything runs: the PNG replaces its path, which must hold no input
        try:
            user_input.refuse_overlap(args.screenshot, [args.html], "--screenshot")
            mode = os.stat(args.screenshot).st_mode if os.path.lexists(args.screenshot) else None
        except OSError as e:
            fail(f"{args.screenshot}: --screenshot cannot be checked ({e.strerror or e})")
        except user_input.InputError as e:
            fail(e)
        if mode is not None and not stat.S_ISREG(mode):  # renaming the PNG onto a device would replace the device
            fail(f"{args.screenshot}: --screenshot is {user_input.kind_of(mode)}, expected a PNG file to write")
    try:  # a folder, FIFO (never opened), missing or unreadable file, or bytes that are not UTF-8: one line
        html = user_input.read_text(args.html, "an HTML page")
    except user_input.InputError as e:
        fail(e)
    if not html.strip():
        fail("%s: empty file, expected an HTML page (the executed notebook)" % args.html)
    if not re.search(r"<html[\s>]", html, re.I):
        fail("%s: not an HTML page (no <html> element), expected the executed notebook's HTML" % args.html)
    try:
        work = tempfile.mkdtemp(prefix="xsa-nb-check.")
    except OSError as e:
        fail(user_input.OutputError(f"{tempfile.gettempdir()}: cannot create a temporary folder ({e.strerror or e})"))
    try:
        probed = os.path.join(work, "probed.html")
        user_input.write_atomically(probed, html.replace("</body>", PROBE + "</body>") if "</body>" in html
                                    else html + PROBE)
        r = chromium(["--virtual-time-budget=20000", "--dump-dom", "file://" + probed], os.path.join(work, "p1"))
        # The probe's element is the page's last one: a page holding its own <pre id="xsa-check"> cannot stand in.
        matches = re.findall(r'<pre id="xsa-check">(.*?)</pre>', r.stdout, re.S)
        if not matches:
            print("check_notebook_html: error: the page did not report (chromium exit %d: %s)"
                  % (r.returncode, r.stderr.strip().splitlines()[-1:] or ""), file=sys.stderr)
            return 2
        try:
            report = json.loads(matches[-1].replace("&quot;", '"').replace("&amp;", "&"))
        except (ValueError, RecursionError) as e:
            report = str(e)
        if not probe_report(report):
            fail("%s: the page's report is not the probe's (%s)" % (args.html, str(report)[:80]))
        images = report["images"]
        failures = []
        if len(images) < args.figures:
            failures.append("%d figures, expected at least %d" % (len(images), args.figures))
        for img in images:
            if not img["loaded"]:
                failures.append("figure %d did not load" % img["index"])
            elif img["colours"] < 2:
                failures.append("figure %d is blank (%d px wide, one colour)" % (img["index"], img["width"]))
        if report["errors"]:
            failures.append("%d error or stderr outputs" % report["errors"])
        if args.screenshot:
            target = os.path.abspath(args.screenshot)
            folder, name = os.path.split(target)
            tmp = os.path.join(folder, ".%s.tmp%d.png" % (os.path.splitext(name)[0], os.getpid()))
            try:  # written beside PNG and renamed onto it once chromium is done: never a half-written PNG
                r = chromium(["--window-size=1100,7000", "--virtual-time-budget=10000", "--screenshot=" + tmp,
                              "file://" + os.path.abspath(args.html)], os.path.join(work, "p2"))
                if r.returncode != 0 or not os.path.exists(tmp):
                    failures.append("no screenshot written (chromium exit %d)" % r.returncode)
                else:
                    os.replace(tmp, target)
                    print("check_notebook_html: screenshot %s" % args.screenshot)
            except OSError as e:  # e.g. a read-only folder, or a folder put at the path since the check
                fail(user_input.OutputError(user_input.write_problem(args.screenshot, e)))
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        for f in failures:
            print("check_notebook_html: FAILED: " + f)
        print("check_notebook_html: %d figures, %d of them blank or not loaded, %d error outputs"
              % (len(images), sum(1 for i in images if not i["loaded"] or i["colours"] < 2), report["errors"]))
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    user_input.run("check_notebook_html", main)
