#!/usr/bin/env python3
"""scripts/download_tinystories.py against a hostile local server on 127.0.0.1 (an ephemeral port; HF_ENDPOINT
points there; every request bounded in time; the server stops with the test).

The server serves a generated story corpus (tests/support/make_stories.py, never TinyStories) under the hub's
path. HF_ENDPOINT's first path segment picks a scenario: `ok` honours Range (206 with Content-Range, 416 past
the end), `norange` ignores it (200), and every other scenario breaks one rule a response must keep (a short
body, a Content-Range that starts elsewhere, a total that changes, a malformed header or chunk, a redirect
loop, a stall, a peer that does not speak HTTP, ...). Checked for each: the exit code, exactly one stderr line
(none on success) and no traceback, and the bytes on disk -- a success leaves files byte-identical to the
server's and a manifest with their sizes and sha256; a failure renames nothing into place. Every response of
the well-behaved server carries a strong ETag and honours If-Range (a mismatch: 200, the whole file), so a
resume is checked to be of one version: a file that changed between two runs (same size, new bytes and ETag)
ends entirely the new version, whether the server answers the If-Range with 200 or ignores it (a 206 or 416
with the new ETag: restarted from byte 0); a .part without a recorded validator (a weak ETag) restarts from
byte 0; a Last-Modified date stands in for a missing ETag. Then a full disk (RLIMIT_FSIZE) and a full stdout
(/dev/full), a manifest that no longer matches the files, and a small fuzz of the response parser (seeded
random responses).

Usage: download_test.py SOURCE_DIR WORK_DIR
"""
import hashlib
import json
import os
import random
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checklist import Checklist  # noqa: E402

SRC, WORK = sys.argv[1], sys.argv[2]
SCRIPT = os.path.join(SRC, "scripts", "download_tinystories.py")
PREFIX = "/datasets/roneneldan/TinyStories/resolve/main/"
STORY_END = b"\n<|endoftext|>\n"
MIB = 1 << 20
VALID, TRAIN, HEAD = "TinyStories-valid.txt", "TinyStories-train.txt", "TinyStories-train-head-1MB.txt"
check = Checklist("download_test", WORK)
corpus = os.path.join(WORK, "served")
subprocess.run([sys.executable, os.path.join(SRC, "tests", "support", "make_stories.py"), "--out", corpus,
                "--single-files", "--train-stories", "6000", "--val-stories", "200"], check=True)
files = {name: open(os.path.join(corpus, name), "rb").read() for name in (TRAIN, VALID)}
assert len(files[TRAIN]) > 2 * MIB, "the served train file must be larger than the head"
head_bytes = files[TRAIN][:MIB]
EXPECTED_HEAD = head_bytes[:head_bytes.rfind(STORY_END) + len(STORY_END)]
# An earlier version of the validation file: the same size, other bytes (so another ETag).
OLD = {VALID: files[VALID].translate(bytes.maketrans(b"ae", b"AE"))}
assert len(OLD[VALID]) == len(files[VALID]) and OLD[VALID] != files[VALID]
VALIDATOR = ".validator.json"  # beside a .part, written by the downloader: the validator its first byte came with
DATE_OLD, DATE_NEW = "Mon, 01 Jan 2024 00:00:00 GMT", "Tue, 02 Jan 2024 00:00:00 GMT"


def etag_of(data):
    """The strong ETag the server sends for a version of a file."""
    return '"%s"' % hashlib.sha256(data).hexdigest()[:16]


# --- the server: raw HTTP/1.1 written by hand, so that a scenario can break any rule ---
class Handler(socketserver.StreamRequestHandler):
    log = []  # (scenario, file, Range header, status, body bytes sent, If-Range header)
    counters = {}

    def setup(self):
        self.request.settimeout(10)  # a handler never outlives a client by long
        super().setup()

    def send(self, status, headers, body=b""):
        head = "HTTP/1.1 %s\r\n" % status + "".join("%s: %s\r\n" % kv for kv in headers) + "\r\n"
        self.wfile.write(head.encode("latin-1"))
        sent = 0
        try:
            for i in range(0, len(body), 1 << 16):
                self.wfile.write(body[i:i + (1 << 16)])
                sent += len(body[i:i + (1 << 16)])
        except OSError:
            pass  # the client read what it wanted and closed
        return sent

    def handle(self):
        try:
            request_line = self.rfile.readline(65537).decode("latin-1")
            headers = {}
            while True:
                line = self.rfile.readline(65537).decode("latin-1")
                if line in ("\r\n", "\n", ""):
                    break
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            parts = request_line.split()
            path = parts[1] if len(parts) == 3 else ""
            scenario, _, rest = path.lstrip("/").partition("/")
            name = ("/" + rest)[len(PREFIX):] if ("/" + rest).startswith(PREFIX) else None
            rng = headers.get("range")
            self.scenario_name, self.if_range = scenario, headers.get("if-range")
            getattr(self, "scenario_" + scenario, self.scenario_missing)(name, rng)
        except OSError:
            pass

    def record(self, name, rng, status, sent):
        Handler.log.append((self.scenario_name, name, rng, status, sent, self.if_range))

    def nth(self, key):
        Handler.counters[key] = Handler.counters.get(key, 0) + 1
        return Handler.counters[key]

    # A well-behaved server, and its pieces: each misbehaving scenario below changes one of them. Every response
    # carries the version's validators (default: a strong ETag); an If-Range that is none of them gets the whole
    # file (200), as RFC 9110 13.1.5 says, unless honour_if_range is False.
    def serve(self, name, rng, honour_range=True, status_of=None, range_of=None, length_of=None, cut_body=None,
              versions=None, validators=None, honour_if_range=True):
        data = (versions or {}).get(name, files.get(name))
        if data is None:
            self.send("404 Not Found", [("Content-Length", "0")])
            return self.record(name, rng, 404, 0)
        tags = validators(data) if validators else [("ETag", etag_of(data))]
        same_version = self.if_range is None or not honour_if_range or self.if_range in [v for _, v in tags]
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
        if honour_range and match and same_version:
            first = int(match.group(1))
            last = min(int(match.group(2)) if match.group(2) else len(data) - 1, len(data) - 1)
            if first >= len(data):
                self.send("416 Range Not Satisfiable", [("Content-Range", "bytes */%d" % len(data)),
                                                        ("Content-Length", "0")] + tags)
                return self.record(name, rng, 416, 0)
            body, status = data[first:last + 1], "206 Partial Content"
            content_range = (range_of or (lambda f, l, t: "bytes %d-%d/%d" % (f, l, t)))(first, last, len(data))
            headers = [("Content-Range", content_range)] + tags
        else:
            body, status, headers = data, "200 OK", list(tags)
        headers.append(("Content-Length", (length_of or (lambda n: str(n)))(len(body))))
        if cut_body:
            body = body[:cut_body(len(body))]
        sent = self.send(status_of or status, headers, body)
        self.record(name, rng, int((status_of or status)[:3]), sent)

    def scenario_missing(self, name, rng):
        self.send("404 Not Found", [("Content-Length", "0")])

    def scenario_ok(self, name, rng):
        self.serve(name, rng)

    def scenario_norange(self, name, rng):
        self.serve(name, rng, honour_range=False)

    # A file that changes between two runs: the old version, cut short (the first run stops with a .part), then
    # `ok` serves the new one. `ignoreifrange` serves the new one but answers a stale If-Range with its range.
    def scenario_oldcut(self, name, rng):
        self.serve(name, rng, versions=OLD, cut_body=lambda n: n // 2)

    def scenario_ignoreifrange(self, name, rng):
        self.serve(name, rng, honour_if_range=False)

    def scenario_weakcut(self, name, rng):  # a weak ETag only: no validator a resume could use
        self.serve(name, rng, versions=OLD, cut_body=lambda n: n // 2,
                   validators=lambda d: [("ETag", "W/" + etag_of(d))])

    def scenario_lmoldcut(self, name, rng):  # Last-Modified only, of the old version, cut short
        self.serve(name, rng, versions=OLD, cut_body=lambda n: n // 2, validators=lambda d: [("Last-Modified", DATE_OLD)])

    def scenario_lmcut(self, name, rng):  # Last-Modified only, cut short, of the version `lm` serves too
        self.serve(name, rng, cut_body=lambda n: n // 2, validators=lambda d: [("Last-Modified", DATE_NEW)])

    def scenario_lm(self, name, rng):
        self.serve(name, rng, validators=lambda d: [("Last-Modified", DATE_NEW)])

    def scenario_short(self, name, rng):  # announces the length, sends half, closes
        self.serve(name, rng, cut_body=lambda n: n // 2)

    def scenario_shortnorange(self, name, rng):
        self.serve(name, rng, honour_range=False, cut_body=lambda n: n - 1000)

    def scenario_wrongstart(self, name, rng):  # answers every range from byte 0
        self.serve(name, rng, range_of=lambda f, l, t: "bytes 0-%d/%d" % (l - f, t))

    def scenario_trainlonger(self, name, rng):  # states more of the train file than asked (the head stays 1 MiB)
        if name != TRAIN:
            return self.serve(name, rng)
        self.serve(name, rng, range_of=lambda f, l, t: "bytes %d-%d/%d" % (f, l + 10, t), length_of=lambda n: str(n + 11))

    def scenario_lenmismatch(self, name, rng):  # Content-Length disagrees with Content-Range
        self.serve(name, rng, length_of=lambda n: str(n - 7), cut_body=lambda n: n - 7)

    def scenario_badrange(self, name, rng):
        self.serve(name, rng, range_of=lambda f, l, t: "bytes=%d-%d of %d" % (f, l, t))

    def scenario_totalflip(self, name, rng):  # the train file's total changes between responses
        flip = name == TRAIN and self.nth("totalflip") > 1
        self.serve(name, rng, range_of=lambda f, l, t: "bytes %d-%d/%d" % (f, l, t + (7 if flip else 0)))

    def scenario_always416(self, name, rng):
        self.send("416 Range Not Satisfiable", [("Content-Range", "bytes */%d" % len(files.get(name, b""))),
                                                ("Content-Length", "0")])

    def scenario_nosize416(self, name, rng):
        self.send("416 Range Not Satisfiable", [("Content-Length", "0")])

    def scenario_status500(self, name, rng):
        self.send("500 Internal Server Error", [("Content-Length", "0")])

    def scenario_status204(self, name, rng):
        self.send("204 No Content", [])

    def scenario_chunkednolen(self, name, rng):  # valid chunked encoding, but no size stated anywhere
        body = files[name]
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 50000]), body[i:i + 50000])
                          for i in range(0, len(body), 50000))
        self.send("200 OK", [("Transfer-Encoding", "chunked")], chunks + b"0\r\n\r\n")

    def scenario_badchunk(self, name, rng):
        self.send("200 OK", [("Transfer-Encoding", "chunked")], b"zz\r\nhello\r\n0\r\n\r\n")

    def scenario_badlength(self, name, rng):
        self.send("200 OK", [("Content-Length", "12abc")], b"hello")

    def scenario_neglength(self, name, rng):
        self.send("200 OK", [("Content-Length", "-5")], b"hello")

    def scenario_longheader(self, name, rng):
        self.send("200 OK", [("X-Long", "a" * 70000), ("Content-Length", "5")], b"hello")

    def scenario_manyheaders(self, name, rng):
        self.send("200 OK", [("X-H%d" % i, "v") for i in range(150)] + [("Content-Length", "5")], b"hello")

    def scenario_notHTTP(self, name, rng):
        self.wfile.write(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")

    def scenario_binary(self, name, rng):
        self.wfile.write(bytes(random.Random(7).getrandbits(8) for _ in range(300)))

    def scenario_hangup(self, name, rng):
        pass  # closes without a word

    def scenario_silent(self, name, rng):
        time.sleep(8)  # accepts, reads the request, never answers

    def scenario_trickleheaders(self, name, rng):
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
            self.wfile.write(bytes([byte]))
            time.sleep(0.2)

    def scenario_tricklebody(self, name, rng):
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(files[name]))
        for byte in files[name][:60]:
            self.wfile.write(bytes([byte]))
            time.sleep(0.2)

    def scenario_loop(self, name, rng):
        self.send("302 Found", [("Location", "/loop" + PREFIX + (name or "")), ("Content-Length", "0")])

    def scenario_ftpredirect(self, name, rng):
        self.send("302 Found", [("Location", "ftp://127.0.0.1:1/x"), ("Content-Length", "0")])

    def scenario_redirect(self, name, rng):  # a well-behaved CDN hop, as the hub does
        self.send("302 Found", [("Location", "/ok" + PREFIX + (name or "")), ("Content-Length", "0")])

    def scenario_fuzz(self, name, rng):
        r = random.Random(Handler.fuzz_seed * 1000 + self.nth("fuzz"))
        data = files.get(name, b"")[:4000]
        status = r.choice(["200 OK", "206 Partial Content", "416 Range Not Satisfiable", "302 Found", "999 X",
                           "abc", "200", ""])
        headers = [(r.choice(["Content-Length", "Content-Range", "Transfer-Encoding", "Location", "X"]),
                    r.choice(["%d" % len(data), "-1", "bytes 0-%d/%d" % (len(data) - 1, len(data)), "bytes */5",
                              "chunked", "/fuzz" + PREFIX + (name or ""), "", "\x00\xff", "9" * 30]))
                   for _ in range(r.randrange(0, 5))]
        raw = ("HTTP/1.1 %s\r\n" % status + "".join("%s: %s\r\n" % kv for kv in headers) + "\r\n").encode("latin-1")
        raw += data[:r.randrange(0, len(data) + 1)]
        if r.random() < 0.3:  # flip some bytes anywhere
            raw = bytearray(raw)
            for _ in range(r.randrange(1, 6)):
                raw[r.randrange(len(raw))] = r.randrange(256)
            raw = bytes(raw)
        self.wfile.write(raw)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


Handler.fuzz_seed = 0
server = Server(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]
deadline = time.monotonic() + 240  # the whole test stops by itself


def endpoint(scenario):
    return "http://127.0.0.1:%d/%s" % (port, scenario)


def run(out, *args, hf=None, timeout_s="2", max_file_bytes=None, stdout=None):
    """The downloader on `out`; max_file_bytes: RLIMIT_FSIZE (a write past it fails with EFBIG, as on a full disk);
    stdout: a path its stdout goes to (e.g. /dev/full), else captured."""
    assert time.monotonic() < deadline, "download_test: over its time budget"
    env = dict(os.environ, HF_ENDPOINT=hf if hf is not None else endpoint("ok"))
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(proxy, None)
    start = time.monotonic()
    command = [sys.executable, SCRIPT, "--out", out, "--train-mib", "1", "--timeout", timeout_s, *args]
    if max_file_bytes:  # set in the child before it execs the script (no preexec_fn: the server runs threads)
        command = [sys.executable, "-c", "import os, resource, sys; n = int(sys.argv[1]); "
                   "resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])",
                   str(max_file_bytes)] + command
    sink = open(stdout, "w") if stdout else subprocess.PIPE
    try:
        result = subprocess.run(command, env=env, stdout=sink, stderr=subprocess.PIPE, text=True, timeout=60)
        result.stdout = result.stdout or ""
    except subprocess.TimeoutExpired as e:  # a hang: a failed check, never a stuck test
        result = subprocess.CompletedProcess(command, None, e.stdout or "", "hung for 60 s")
    finally:
        if stdout:
            sink.close()
    result.seconds = time.monotonic() - start
    return result


def one_line(r):
    lines = r.stderr.splitlines()
    return len(lines) == 1 and lines[0].startswith("download_tinystories: error: ") and "Traceback" not in r.stderr


def placed(out):
    """Files under a final name (not .part / .tmp / the manifest) in `out`."""
    return sorted(f for f in os.listdir(out) if not f.endswith((".part", ".tmp", ".verified", ".json"))) \
        if os.path.isdir(out) else []


def read(path):
    return open(path, "rb").read() if os.path.exists(path) else None


def sha(data):
    return hashlib.sha256(data).hexdigest()


def partial(out, part_name, data, validator=None):
    """A .part left by an interrupted download: `data`, and (when given) the validator recorded beside it as the
    downloader records it ({"etag": ...} or {"last_modified": ...})."""
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, part_name), "wb").write(data)
    if validator:
        json.dump(validator, open(os.path.join(out, part_name + VALIDATOR), "w"))


def manifest(out):
    path = os.path.join(out, "download-manifest.json")
    return json.load(open(path)) if os.path.exists(path) else {}


def expect_success(out, what):
    check(read(os.path.join(out, VALID)) == files[VALID], "%s: the validation file is byte-identical" % what)
    check(read(os.path.join(out, HEAD)) == EXPECTED_HEAD,
          "%s: the head is the first 1 MiB cut after its last complete story" % what)
    m = manifest(out).get("files", {})
    check(m.get(VALID, {}).get("size") == len(files[VALID]) and m.get(VALID, {}).get("sha256") == sha(files[VALID])
          and m.get(HEAD, {}).get("size") == len(EXPECTED_HEAD) and m.get(HEAD, {}).get("sha256") == sha(EXPECTED_HEAD),
          "%s: download-manifest.json records each file's size and sha256" % what)
    check(placed(out) == sorted([HEAD, VALID]) and not [f for f in os.listdir(out) if f.endswith((".part", ".tmp",
                                                                                                 VALIDATOR))],
          "%s: no .part, .tmp or validator file left" % what)


def requests_of(scenario):
    return [q for q in Handler.log if q[0] == scenario]


# 1. A first download: the whole validation file, and 1 MiB of the train file cut at a story boundary.
out = os.path.join(WORK, "first")
r = run(out)
print(r.stdout, end="")
check(r.returncode == 0 and r.stderr == "", "first download exits 0, stderr empty (%d: %s)" % (r.returncode, r.stderr))
expect_success(out, "first download")
train_requests = [(q[2], q[3], q[4]) for q in requests_of("ok") if q[1] == TRAIN]
check(train_requests == [("bytes=0-%d" % (MIB - 1), 206, MIB)],
      "the train file was fetched with one Range request for exactly 1 MiB: %s" % train_requests)
check(sum(q[4] for q in requests_of("ok")) == MIB + len(files[VALID]), "bytes fetched in all = 1 MiB + the validation file")
check("stories" in r.stdout and "MiB" in r.stdout, "it prints what it fetched")

# 2. A rerun fetches nothing, and verifies what is there against the manifest.
Handler.log = []
r = run(out)
check(r.returncode == 0 and Handler.log == [] and r.stdout.count("sha256 verified") == 2,
      "a rerun with everything there makes no request and verifies both files (%s)" % Handler.log)

# 3. Resume: an interrupted download left .part files (the first bytes) and their validators; the rerun asks only
# for the rest, of that version (If-Range: its ETag).
out = os.path.join(WORK, "resumed")
val_cut, head_cut = 12345, 300001
HEAD_PART = "TinyStories-train.txt.head-1MB.part"
partial(out, VALID + ".part", files[VALID][:val_cut], {"etag": etag_of(files[VALID])})
partial(out, HEAD_PART, files[TRAIN][:head_cut], {"etag": etag_of(files[TRAIN])})
Handler.log = []
r = run(out)
check(r.returncode == 0, "resumed download exits 0 (%s)" % r.stderr.strip())
expect_success(out, "resumed download")
check(sorted((q[2], q[4], q[5]) for q in Handler.log)
      == sorted([("bytes=%d-" % val_cut, len(files[VALID]) - val_cut, etag_of(files[VALID])),
                 ("bytes=%d-%d" % (head_cut, MIB - 1), MIB - head_cut, etag_of(files[TRAIN]))]),
      "the resume asked only for the missing bytes, If-Range the recorded ETag: %s"
      % [(q[2], q[4], q[5]) for q in Handler.log])
check("resumed at" in r.stdout, "it says it resumed")

# 3b. A resume is of one version of the remote file. An interrupted first run records the validator of the
# response its .part starts with; the rerun resumes with it as If-Range.
out = os.path.join(WORK, "resume-recorded")
r = run(out, hf=endpoint("short"))
recorded = json.load(open(os.path.join(out, VALID + ".part" + VALIDATOR))) \
    if os.path.exists(os.path.join(out, VALID + ".part" + VALIDATOR)) else None
check(r.returncode == 1 and recorded == {"etag": etag_of(files[VALID])},
      "an interrupted download records the response's strong ETag beside its .part (%s)" % recorded)
half = len(read(os.path.join(out, VALID + ".part")) or b"")
Handler.log = []
r = run(out)
check(r.returncode == 0 and [(q[2], q[3], q[5]) for q in Handler.log if q[1] == VALID]
      == [("bytes=%d-" % half, 206, etag_of(files[VALID]))] and "resumed at" in r.stdout,
      "the rerun resumes it with If-Range: that ETag, 206 (%s, %s)" % (r.stderr.strip(), Handler.log))
expect_success(out, "resume with a recorded ETag")

# The file changed on the server between the runs (same size, new bytes, new ETag): the If-Range with the old
# ETag gets the whole new file (200), which replaces the .part: the file is entirely the new version.
out = os.path.join(WORK, "changed")
r = run(out, hf=endpoint("oldcut"))
part = read(os.path.join(out, VALID + ".part")) or b""
check(r.returncode == 1 and part and OLD[VALID].startswith(part) and not files[VALID].startswith(part),
      "the first run stops with a .part of the old version (%d bytes)" % len(part))
Handler.log = []
r = run(out)
valid_requests = [(q[2], q[3], q[5]) for q in Handler.log if q[1] == VALID]
check(r.returncode == 0 and valid_requests == [("bytes=%d-" % len(part), 200, etag_of(OLD[VALID]))],
      "the resume sends If-Range: the old ETag and gets 200 (%s, %s)" % (r.stderr.strip(), valid_requests))
check(read(os.path.join(out, VALID)) == files[VALID] and sha(read(os.path.join(out, VALID)) or b"") == sha(files[VALID]),
      "a file changed between runs ends entirely the new version (sha256), never old bytes spliced with new")
check(not any(VALID in line and "resumed at" in line for line in r.stdout.splitlines()),
      "nor does it say it resumed (%r)" % r.stdout)
expect_success(out, "a file changed between runs")

# The same with a server that ignores If-Range and answers the range (206) with the new ETag: detected, the
# .part discarded and the file fetched again from byte 0.
out = os.path.join(WORK, "changed-ignored")
run(out, hf=endpoint("oldcut"))
part = read(os.path.join(out, VALID + ".part")) or b""
Handler.log = []
r = run(out, hf=endpoint("ignoreifrange"))
valid_requests = [(q[2], q[3]) for q in Handler.log if q[1] == VALID]
check(r.returncode == 0 and valid_requests == [("bytes=%d-" % len(part), 206), ("bytes=0-", 206)]
      and "changed on the server" in r.stdout,
      "a 206 with another ETag than the .part's: not spliced, fetched again from byte 0 (%s, %s)"
      % (r.stderr.strip(), valid_requests))
check(read(os.path.join(out, VALID)) == files[VALID], "and the file is entirely the new version")
expect_success(out, "a server that ignores If-Range")
# ... and a .part that holds the whole old version: the server's 416 (with the new ETag) does not complete it.
out = os.path.join(WORK, "changed-complete")
partial(out, VALID + ".part", OLD[VALID], {"etag": etag_of(OLD[VALID])})
Handler.log = []
r = run(out, hf=endpoint("ignoreifrange"))
valid_requests = [(q[2], q[3]) for q in Handler.log if q[1] == VALID]
check(r.returncode == 0 and valid_requests == [("bytes=%d-" % len(OLD[VALID]), 416), ("bytes=0-", 206)]
      and read(os.path.join(out, VALID)) == files[VALID],
      "a 416 with another ETag: the old .part is not taken as complete (%s, %s)" % (r.stderr.strip(), valid_requests))

# No validator recorded (the first response had only a weak ETag): the .part is not resumed, but fetched again
# from byte 0 without If-Range.
out = os.path.join(WORK, "no-validator")
r = run(out, hf=endpoint("weakcut"))
check(r.returncode == 1 and read(os.path.join(out, VALID + ".part"))
      and not os.path.exists(os.path.join(out, VALID + ".part" + VALIDATOR)),
      "a weak ETag is not recorded as a validator (%s)" % sorted(os.listdir(out)))
Handler.log = []
r = run(out)
valid_requests = [(q[2], q[3], q[5]) for q in Handler.log if q[1] == VALID]
check(r.returncode == 0 and valid_requests == [("bytes=0-", 206, None)] and "no validator" in r.stdout
      and read(os.path.join(out, VALID)) == files[VALID],
      "without a recorded validator the download restarts from byte 0 (%s, %s)" % (r.stderr.strip(), valid_requests))
expect_success(out, "no validator")

# Last-Modified stands in for a missing ETag: recorded, sent as If-Range; a newer date gets the whole new file.
out = os.path.join(WORK, "last-modified")
r = run(out, hf=endpoint("lmoldcut"))
recorded = read(os.path.join(out, VALID + ".part" + VALIDATOR))
check(r.returncode == 1 and recorded is not None and json.loads(recorded) == {"last_modified": DATE_OLD},
      "without an ETag, Last-Modified is recorded (%r)" % recorded)
Handler.log = []
r = run(out, hf=endpoint("lm"))
valid_requests = [(q[3], q[5]) for q in Handler.log if q[1] == VALID]
check(r.returncode == 0 and valid_requests == [(200, DATE_OLD)] and read(os.path.join(out, VALID)) == files[VALID],
      "If-Range: the old date gets 200, the whole new version (%s, %s)" % (r.stderr.strip(), valid_requests))
out = os.path.join(WORK, "last-modified-same")
run(out, hf=endpoint("lmcut"))
Handler.log = []
r = run(out, hf=endpoint("lm"))
valid_requests = [(q[3], q[5]) for q in Handler.log if q[1] == VALID]
check(r.returncode == 0 and valid_requests == [(206, DATE_NEW)] and read(os.path.join(out, VALID)) == files[VALID]
      and "resumed at" in r.stdout,
      "If-Range: the same date resumes (206) (%s, %s)" % (r.stderr.strip(), valid_requests))

# 4. A server that ignores Range (200 for everything): same files; a redirect hop to it works too.
for scenario in ("norange", "redirect"):
    out = os.path.join(WORK, scenario)
    partial(out, VALID + ".part", files[VALID][:val_cut], {"etag": etag_of(files[VALID])})
    r = run(out, hf=endpoint(scenario))
    check(r.returncode == 0, "%s: exits 0 (%s)" % (scenario, r.stderr.strip()))
    expect_success(out, scenario)

# 5. A 416 on resume: complete only when the .part holds the stated total; longer: discarded and fetched again.
out = os.path.join(WORK, "complete-part")
partial(out, VALID + ".part", files[VALID], {"etag": etag_of(files[VALID])})  # finished, never renamed (a crash)
Handler.log = []
r = run(out)
check(r.returncode == 0 and read(os.path.join(out, VALID)) == files[VALID]
      and [q[3] for q in Handler.log if q[1] == VALID] == [416],
      "a .part that already holds the stated total: the 416 completes it, nothing fetched (%s)" % r.stderr.strip())
out = os.path.join(WORK, "long-part")
partial(out, VALID + ".part", files[VALID] + b"extra bytes from somewhere else", {"etag": etag_of(files[VALID])})
partial(out, HEAD_PART, files[TRAIN][:MIB + 10], {"etag": etag_of(files[TRAIN])})
Handler.log = []
r = run(out)
check(r.returncode == 0 and [(q[2], q[3]) for q in Handler.log if q[1] == VALID]
      == [("bytes=%d-" % (len(files[VALID]) + 31), 416), ("bytes=0-", 206)],
      "a .part longer than the resource: the 416 states the size, it is discarded and fetched again (%s, %s)"
      % (r.stderr.strip(), [(q[2], q[3]) for q in Handler.log]))
expect_success(out, "long .part")
out = os.path.join(WORK, "always416")
partial(out, VALID + ".part", files[VALID][:val_cut], {"etag": etag_of(files[VALID])})
r = run(out, hf=endpoint("always416"))
check(r.returncode == 1 and one_line(r) and "416" in r.stderr and placed(out) == []
      and read(os.path.join(out, VALID + ".part")) == files[VALID][:val_cut],
      "a 416 while the .part is short of the total: one line, exit 1, the .part untouched (%r)" % r.stderr)

# 6. Every broken response: exit 1, one stderr line naming the problem, nothing renamed into place.
FAILURES = [  # (scenario, a word the line must hold, a .part of the validation file to start from)
    ("short", "of the", None), ("shortnorange", "of the", None), ("wrongstart", "Content-Range", val_cut),
    ("trainlonger", "Content-Range", None), ("lenmismatch", "disagrees", None), ("badrange", "Content-Range", None),
    ("nosize416", "416", val_cut), ("status500", "HTTP 500", None), ("status204", "HTTP 204", None),
    ("chunkednolen", "size", None), ("badchunk", "interrupted", None), ("badlength", "Content-Length", None),
    ("neglength", "Content-Length", None), ("longheader", "cannot reach", None), ("manyheaders", "cannot reach", None),
    ("notHTTP", "cannot reach", None), ("binary", "cannot reach", None), ("hangup", "cannot reach", None),
    ("silent", "no progress", None), ("trickleheaders", "no progress", None), ("tricklebody", "no progress", None),
    ("loop", "HTTP 302", None), ("ftpredirect", "non-HTTP", None), ("missing", "HTTP 404", None),
]
for scenario, word, part_bytes in FAILURES:
    out = os.path.join(WORK, "fail-" + scenario)
    os.makedirs(out)
    if part_bytes:
        partial(out, VALID + ".part", files[VALID][:part_bytes], {"etag": etag_of(files[VALID])})
    r = run(out, hf=endpoint(scenario))
    check(r.returncode == 1 and one_line(r) and word in r.stderr and r.seconds < 20,
          "%s: exit 1 with one line holding %r in %.1f s (%d: %r)" % (scenario, word, r.seconds, r.returncode, r.stderr))
    check(placed(out) == [] or (scenario == "trainlonger" and placed(out) == [VALID]),
          "%s: nothing unverified renamed into place (%s)" % (scenario, placed(out)))
    part = read(os.path.join(out, VALID + ".part"))
    check(part is None or files[VALID].startswith(part), "%s: the .part holds only the file's own bytes" % scenario)
    if scenario == "wrongstart":
        check(part == files[VALID][:val_cut], "wrongstart: a response for other bytes is not appended to the .part")
    if scenario == "trainlonger":
        check(read(os.path.join(out, VALID)) == files[VALID], "trainlonger: the validation file is still fine")

# The train file's total changes between the head's response and the whole file's (--full): refused.
out = os.path.join(WORK, "totalflip")
r = run(out, "--full", hf=endpoint("totalflip"))
check(r.returncode == 1 and one_line(r) and "total" in r.stderr and TRAIN not in placed(out),
      "a total that changes between responses for one file: exit 1, one line, not placed (%r)" % r.stderr)

# A full disk (writes past RLIMIT_FSIZE fail with EFBIG, as ENOSPC would, root or not) and a full stdout
# (/dev/full): one line naming the problem, exit 1, nothing renamed into place, no traceback.
out = os.path.join(WORK, "full-disk")
r = run(out, max_file_bytes=len(files[VALID]) // 3)
check(r.returncode == 1 and one_line(r) and "File too large" in r.stderr and placed(out) == []
      and files[VALID].startswith(read(os.path.join(out, VALID + ".part")) or b""),
      "a full disk: exit 1, one line, nothing placed, the .part a prefix of the file (%r)" % r.stderr)
out = os.path.join(WORK, "full-device")
r = run(out, stdout="/dev/full")
check(r.returncode == 1 and one_line(r) and "stdout" in r.stderr and "No space left" in r.stderr,
      "stdout on a full device: exit 1, one line naming stdout (%r)" % r.stderr)

# 7. Bad settings: one line, exit 1 (2 for a bad argument or an --out that is no folder), nothing written.
file_out = os.path.join(WORK, "a-file")
open(file_out, "w").write("x")
r = run(file_out)
check(r.returncode == 2 and one_line(r) and "is not a folder" in r.stderr, "--out that is a file (%r)" % r.stderr)
for hf in ("ftp://127.0.0.1/x", "not a url", "http://", "file:///etc", "http://127.0.0.1:99999"):
    r = run(os.path.join(WORK, "bad-endpoint"), hf=hf)
    check(r.returncode == 1 and one_line(r) and "HF_ENDPOINT" in r.stderr, "HF_ENDPOINT=%r: exit 1, one line (%r)"
          % (hf, r.stderr))
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    dead_port = s.getsockname()[1]  # closed again: nothing listens there
r = run(os.path.join(WORK, "down"), hf="http://127.0.0.1:%d" % dead_port)
check(r.returncode == 1 and one_line(r) and "cannot reach" in r.stderr and "127.0.0.1:%d" % dead_port in r.stderr
      and placed(os.path.join(WORK, "down")) == [], "server down: exit 1, one line naming the URL (%r)" % r.stderr)
plain = socket.socket()  # a plain-HTTP peer that answers a TLS ClientHello with an HTTP error at once
plain.bind(("127.0.0.1", 0))
plain.listen(4)
plain.settimeout(30)


def answer_plain():
    try:
        conn, _ = plain.accept()
        with conn:
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass


threading.Thread(target=answer_plain, daemon=True).start()
r = run(os.path.join(WORK, "tls"), hf="https://127.0.0.1:%d/ok" % plain.getsockname()[1])
plain.close()
check(r.returncode == 1 and one_line(r) and "SSL" in r.stderr, "a TLS error: exit 1, one line (%r)" % r.stderr)
for args, word in ((("--train-mib", "0"), "--train-mib 0 is out of range"), (("--timeout", "0"), "--timeout 0"),
                   (("--train-mib", "x"), "invalid int value"), (("--bogus",), "unrecognized")):
    r = run(os.path.join(WORK, "bad-args"), *args)
    check(r.returncode == 2 and one_line(r) and word in r.stderr, "%s: exit 2, one line (%r)" % (" ".join(args), r.stderr))

# 8. The manifest on reuse: a changed file, a truncated one, one it has no record of, a manifest that is not one.
for what, change, word in (
        ("a changed byte", lambda d: open(os.path.join(d, VALID), "r+b").write(b"X"), "sha256 differs"),
        ("a truncated file", lambda d: os.truncate(os.path.join(d, VALID), 1000), "records"),
        ("no record", lambda d: os.remove(os.path.join(d, "download-manifest.json")), "no record"),
        ("a broken manifest", lambda d: open(os.path.join(d, "download-manifest.json"), "w").write("{"), "cannot read"),
        ("a FIFO as the manifest (an open would block)", lambda d: (os.remove(os.path.join(d, "download-manifest.json")),
                                                                    os.mkfifo(os.path.join(d, "download-manifest.json"))),
         "not a regular file")):
    out = os.path.join(WORK, "reuse-" + what.replace(" ", "-"))
    shutil.copytree(os.path.join(WORK, "first"), out)
    change(out)
    Handler.log = []
    r = run(out)
    check(r.returncode == 1 and one_line(r) and word in r.stderr and Handler.log == [],
          "%s: exit 1, one line holding %r, no request (%r)" % (what, word, r.stderr))

# 9. Fuzz: seeded random responses (status, headers, truncated and flipped bytes). Whatever comes, the
# downloader exits 0 with files identical to the server's, or 1 with one line; never a traceback or a hang.
outcomes = {0: 0, 1: 0}
for seed in range(1, 31):
    Handler.fuzz_seed, Handler.counters = seed, {}
    out = os.path.join(WORK, "fuzz-%d" % seed)
    r = run(out, hf=endpoint("fuzz"), timeout_s="1")
    ok = r.returncode == 1 and one_line(r) and placed(out) == [] or r.returncode == 0 and r.stderr == "" and \
        read(os.path.join(out, VALID)) == files[VALID] and read(os.path.join(out, HEAD)) == EXPECTED_HEAD
    outcomes[r.returncode] = outcomes.get(r.returncode, 0) + 1
    if not ok:
        check(False, "fuzz seed %d: exit %d, stderr %r" % (seed, r.returncode, r.stderr))
check(sum(outcomes.values()) == 30 and set(outcomes) <= {0, 1},
      "fuzz: 30 random responses, each a verified success or one line with exit 1 (%s)" % outcomes)

server.shutdown()
check.finish()
