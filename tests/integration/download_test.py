#!/usr/bin/env python3
"""scripts/download_tinystories.py against a local HTTP server on 127.0.0.1 (HF_ENDPOINT points there).

The server serves a generated story corpus (tests/support/make_stories.py, never TinyStories) under the hub's
path, honours Range (206 with Content-Range; 416 past the end) or, in a second mode, ignores it (200), and
records every request. Checked: the bytes each request fetched, the head cut after the last complete story,
a resumed download (Range bytes=K-, the result byte-identical to an uninterrupted one), a rerun that fetches
nothing, and a one-line error with exit 1 when the server is down.

Usage: download_test.py SOURCE_DIR WORK_DIR
"""
import http.server
import os
import re
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checklist import Checklist  # noqa: E402

SRC, WORK = sys.argv[1], sys.argv[2]
SCRIPT = os.path.join(SRC, "scripts", "download_tinystories.py")
STORY_END = b"\n<|endoftext|>\n"
MIB = 1 << 20
check = Checklist("download_test", WORK)
corpus = os.path.join(WORK, "served")
subprocess.run([sys.executable, os.path.join(SRC, "tests", "support", "make_stories.py"), "--out", corpus,
                "--single-files", "--train-stories", "6000", "--val-stories", "200"], check=True)
files = {name: open(os.path.join(corpus, name), "rb").read()
         for name in ("TinyStories-train.txt", "TinyStories-valid.txt")}
assert len(files["TinyStories-train.txt"]) > 2 * MIB, "the served train file must be larger than the head"


class Handler(http.server.BaseHTTPRequestHandler):
    honour_range = True
    requests = []  # (path, Range header or None, status, body bytes sent)

    def log_message(self, *args):
        pass

    def do_GET(self):
        prefix = "/datasets/roneneldan/TinyStories/resolve/main/"
        name = self.path[len(prefix):] if self.path.startswith(prefix) else None
        if name not in files:
            self.send_error(404)
            Handler.requests.append((self.path, self.headers.get("Range"), 404, 0))
            return
        data = files[name]
        wanted = self.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted or "")
        if Handler.honour_range and match:
            first = int(match.group(1))
            last = min(int(match.group(2)) if match.group(2) else len(data) - 1, len(data) - 1)
            if first >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                Handler.requests.append((name, wanted, 416, 0))
                return
            body, status = data[first:last + 1], 206
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(data)))
        else:
            body, status = data, 200
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        sent = 0
        try:
            for i in range(0, len(body), 1 << 16):
                self.wfile.write(body[i:i + (1 << 16)])
                sent += len(body[i:i + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client read what it wanted (a head from a server that ignores Range) and closed
        Handler.requests.append((name, wanted, status, sent))


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
endpoint = "http://127.0.0.1:%d" % server.server_address[1]


def run(out, *args, endpoint=endpoint):
    env = dict(os.environ, HF_ENDPOINT=endpoint)
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(proxy, None)
    result = subprocess.run([sys.executable, SCRIPT, "--out", out, "--train-mib", "1", *args], env=env,
                            capture_output=True, text=True, timeout=120)
    return result


def expected_head():
    head = files["TinyStories-train.txt"][:MIB]
    return head[:head.rfind(STORY_END) + len(STORY_END)]


# 1. A first download: the whole validation file, and 1 MiB of the train file cut at a story boundary.
Handler.requests = []
out = os.path.join(WORK, "first")
r = run(out)
check(r.returncode == 0, "first download exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
print(r.stdout, end="")
head_path = os.path.join(out, "TinyStories-train-head-1MB.txt")
head = open(head_path, "rb").read() if os.path.exists(head_path) else b""
check(head == expected_head(), "the head is the first 1 MiB cut after its last complete story")
check(head.endswith(STORY_END) and len(head) <= MIB and MIB - len(head) < 4096,
      "the head ends with <|endoftext|> and lost less than one story (%d bytes)" % len(head))
check(open(os.path.join(out, "TinyStories-valid.txt"), "rb").read() == files["TinyStories-valid.txt"],
      "the validation file is complete and byte-identical")
train_requests = [q for q in Handler.requests if q[0] == "TinyStories-train.txt"]
check(train_requests == [("TinyStories-train.txt", "bytes=0-%d" % (MIB - 1), 206, MIB)],
      "the train file was fetched with one Range request for exactly 1 MiB: %s" % train_requests)
check(sum(q[3] for q in Handler.requests) == MIB + len(files["TinyStories-valid.txt"]),
      "bytes fetched in all = 1 MiB + the validation file")
check(not [f for f in os.listdir(out) if f.endswith(".part") or f.endswith(".tmp")], "no .part or .tmp file left")
check("stories" in r.stdout and "MiB" in r.stdout, "it prints what it fetched")

# 2. A rerun fetches nothing.
Handler.requests = []
r = run(out)
check(r.returncode == 0 and Handler.requests == [], "a rerun with everything there makes no request (%s)"
      % Handler.requests)

# 3. Resume: an interrupted download left .part files (the first bytes); the rerun asks only for the rest.
out = os.path.join(WORK, "resumed")
os.makedirs(out)
val_cut, head_cut = 12345, 300001
with open(os.path.join(out, "TinyStories-valid.txt.part"), "wb") as f:
    f.write(files["TinyStories-valid.txt"][:val_cut])
with open(os.path.join(out, "TinyStories-train.txt.head-1MB.part"), "wb") as f:
    f.write(files["TinyStories-train.txt"][:head_cut])
Handler.requests = []
r = run(out)
check(r.returncode == 0, "resumed download exits 0 (%s)" % r.stderr.strip())
check(open(os.path.join(out, "TinyStories-train-head-1MB.txt"), "rb").read() == expected_head()
      and open(os.path.join(out, "TinyStories-valid.txt"), "rb").read() == files["TinyStories-valid.txt"],
      "resumed files are byte-identical to an uninterrupted download")
check(sorted((q[1], q[3]) for q in Handler.requests)
      == sorted([("bytes=%d-" % val_cut, len(files["TinyStories-valid.txt"]) - val_cut),
                 ("bytes=%d-%d" % (head_cut, MIB - 1), MIB - head_cut)]),
      "the resume asked only for the missing bytes: %s" % [(q[1], q[3]) for q in Handler.requests])
check("resumed at" in r.stdout, "it says it resumed")

# 4. A server that ignores Range (200 for everything): same files, the skipped prefix is not written twice.
Handler.honour_range = False
out = os.path.join(WORK, "no-range")
os.makedirs(out)
with open(os.path.join(out, "TinyStories-valid.txt.part"), "wb") as f:
    f.write(files["TinyStories-valid.txt"][:val_cut])
r = run(out)
Handler.honour_range = True
check(r.returncode == 0 and open(os.path.join(out, "TinyStories-train-head-1MB.txt"), "rb").read() == expected_head()
      and open(os.path.join(out, "TinyStories-valid.txt"), "rb").read() == files["TinyStories-valid.txt"],
      "a server without Range support gives the same files (%s)" % r.stderr.strip())

# 5. A file the server does not have: one line, exit 1, nothing left under the final name.
# 6. The server is down: one line naming the URL, exit 1.
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    dead_port = s.getsockname()[1]  # closed again: nothing listens there
out = os.path.join(WORK, "down")
r = run(out, endpoint="http://127.0.0.1:%d" % dead_port)
lines = r.stderr.strip().splitlines()
check(r.returncode == 1 and len(lines) == 1 and lines[0].startswith("download_tinystories: error: cannot reach")
      and "127.0.0.1:%d" % dead_port in lines[0], "server down: exit 1 with one line naming the URL (%d, %r)"
      % (r.returncode, r.stderr))
check(not os.path.exists(os.path.join(out, "TinyStories-valid.txt")), "server down: no file under a final name")
r = run(os.path.join(WORK, "missing"), endpoint=endpoint + "/nothing-here")
lines = r.stderr.strip().splitlines()
check(r.returncode == 1 and len(lines) == 1 and "HTTP 404" in lines[0], "a missing file: exit 1, one line with HTTP 404 (%r)"
      % r.stderr)
r = run(os.path.join(WORK, "bad"), "--train-mib", "0")
check(r.returncode == 2 and "--train-mib 0 is out of range" in r.stderr, "--train-mib 0 is refused with exit 2")

server.shutdown()
check.finish()
