#!/usr/bin/env python3
"""Downloads TinyStories text (Eldan & Li 2023; license CDLA-Sharing-1.0) from the Hugging Face dataset
roneneldan/TinyStories into data/raw/ -- by default only what a first run needs:

  TinyStories-valid.txt              the whole validation file (~19 MB)
  TinyStories-train-head-10MB.txt    the first 10 MiB of TinyStories-train.txt, cut after its last complete story

The head comes through an HTTP Range request (bytes=0-N-1), so a first demo fetches ~30 MB, not the 1.9 GB
train file. `--full` also fetches the whole TinyStories-train.txt. Every download goes to a .part file first
and is renamed only when verified; a rerun resumes a .part from where it stopped and skips what is already there.
A server that ignores Range (answers 200) works too: its bytes from 0 replace the .part.

A resumed file is one version of the remote file, never the old one's first bytes and a new one's rest: beside
each .part, <part>.validator.json records the validator of the response its first byte came from (its strong
ETag, else its Last-Modified), and the resume (Range bytes=K-) sends it as If-Range, so a server whose file
changed answers 200 with the whole new file, which replaces the .part. A .part without a recorded validator
(the response had none, or the record is gone) is not resumed: it is fetched again from byte 0. A 206 or 416
whose ETag (or Last-Modified) differs from the recorded one, from a server that ignored If-Range, is not
spliced either: the .part is discarded and the file fetched again from byte 0.

What is verified (a failed check renames nothing into place):
  - every response against its request: 200 (the whole resource from byte 0), 206 (its Content-Range starts
    at the byte asked for, ends where asked and its length equals Content-Length; on a resume, the validator
    recorded for the .part), 416 (complete only when the .part already holds the total the server states, of
    the recorded version); any other status is an error;
  - the resource's total size agrees between every response for that file, and the bytes received equal
    the length announced;
  - the finished file has exactly the resource's size (the head: exactly the bytes asked for, or the whole
    resource when it is smaller, then cut after its last complete story); a .part longer than the resource
    is discarded and fetched again;
  - download-manifest.json beside the data records each finished file's size and sha256; a file already
    there is used only when it matches its record.
A connection that makes no progress for --timeout seconds (default 30) is abandoned. Redirects go to
http(s) URLs only, at most 10 of them.

The base URL is $HF_ENDPOINT (the Hugging Face hub's variable for mirrors; default https://huggingface.co)
followed by /datasets/roneneldan/TinyStories/resolve/main/<file>.

Usage: download_tinystories.py [--out DIR] [--train-mib N] [--full] [--timeout S]
Exit codes: 0 done, 1 download failed (one line on stderr), 2 bad arguments or an --out folder that cannot be
created (one line on stderr, before anything is fetched).
"""
import argparse
import hashlib
import http.client
import json
import os
import re
import signal
import sys
import urllib.error
import urllib.parse
import urllib.request

DATASET_PATH = "/datasets/roneneldan/TinyStories/resolve/main/"
STORY_END = b"\n<|endoftext|>\n"
CHUNK = 1 << 16
MANIFEST = "download-manifest.json"
MANIFEST_SCHEMA = "xsa.download-manifest/1"
VALIDATOR = ".validator.json"  # beside a .part: {"etag": "\"...\""} or {"last_modified": "..."} (see the docstring)
PROG = "download_tinystories"
# What may be recorded and sent back as If-Range: a strong entity tag (quoted, no control characters or spaces;
# a weak one, W/"...", cannot validate a range: RFC 9110 13.1.5), or an HTTP date's printable text.
STRONG_ETAG = re.compile(r'"[^"\x00-\x20\x7f]{0,200}"')
HTTP_DATE = re.compile(r"[ -~]{1,100}")


class DownloadError(Exception):
    pass


def one_line(text, limit=400):
    """Text that may hold a peer's bytes (a status line, a header) as one printable line, at most `limit` long."""
    text = "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256 else "?" for c in text.strip())
    return text if len(text) <= limit else text[:limit] + "..."


def mib(n):
    return "%.1f MiB" % (n / (1 << 20))


def base_url():
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    parsed = urllib.parse.urlsplit(endpoint)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise DownloadError("HF_ENDPOINT %r is not an http(s) URL with a host" % endpoint)
    try:
        parsed.port  # raises ValueError for a port that is not a number in [0, 65535]
    except ValueError:
        raise DownloadError("HF_ENDPOINT %r has an invalid port" % endpoint)
    return endpoint + DATASET_PATH


class Watchdog:
    """Raises DownloadError when no progress was reported for `seconds` (SIGALRM, so it also bounds a peer
    that trickles its status line or headers a byte at a time, which a socket timeout alone does not)."""

    def __init__(self, seconds, what):
        self.seconds, self.what = seconds, what

    def _expired(self, signum, frame):
        raise DownloadError("%s: no progress for %g s (stalled connection); rerun to resume" % (self.what, self.seconds))

    def __enter__(self):
        self.previous = signal.signal(signal.SIGALRM, self._expired)
        self.progress()
        return self

    def progress(self):
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)
        return False


class HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects (the hub sends its files from a CDN) only to http(s) URLs; urllib alone would also
    follow ftp://. A loop ends after max_redirections with urllib's HTTPError."""
    max_redirections = 10

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urllib.parse.urlsplit(newurl).scheme not in ("http", "https"):
            raise urllib.error.HTTPError(req.full_url, code, "redirect to a non-HTTP URL %r" % newurl, headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def parse_content_range(value):
    """'bytes FIRST-LAST/TOTAL' -> (first, last, total or None for '*'); None when malformed."""
    match = re.fullmatch(r"bytes (\d{1,19})-(\d{1,19})/(\d{1,19}|\*)", (value or "").strip())
    if not match or int(match.group(2)) < int(match.group(1)):
        return None
    total = None if match.group(3) == "*" else int(match.group(3))
    if total is not None and int(match.group(2)) >= total:
        return None
    return int(match.group(1)), int(match.group(2)), total


def parse_unsatisfied_range(value):
    """A 416's 'bytes */TOTAL' -> TOTAL; None when absent or malformed."""
    match = re.fullmatch(r"bytes \*/(\d{1,19})", (value or "").strip())
    return int(match.group(1)) if match else None


def response_validator(headers):
    """The validator of a response a .part starts with, as recorded beside it: {"etag": ...} for a strong ETag,
    else {"last_modified": ...}; None when it has neither, so the .part will not be resumed."""
    etag = (headers.get("ETag") or "").strip()
    if STRONG_ETAG.fullmatch(etag):
        return {"etag": etag}
    modified = (headers.get("Last-Modified") or "").strip()
    return {"last_modified": modified} if HTTP_DATE.fullmatch(modified) else None


def changed_version(recorded, headers):
    """True when a response that would keep a .part's bytes (a 206 or 416 to a resume) names another version of
    the file than the recorded validator: its ETag differs (a recorded ETag), or its Last-Modified does (a
    recorded date). A response without that header cannot tell; it stands as the server's answer to If-Range."""
    key, header = ("etag", "ETag") if "etag" in recorded else ("last_modified", "Last-Modified")
    value = headers.get(header)
    return value is not None and value.strip() != recorded[key]


def read_validator(part):
    """The validator recorded beside `part`, or None when there is none or it is unreadable or malformed."""
    if not os.path.isfile(part + VALIDATOR):  # missing, or a FIFO whose open would block
        return None
    try:
        with open(part + VALIDATOR, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(record, dict) and len(record) == 1:
        (key, value), = record.items()
        pattern = {"etag": STRONG_ETAG, "last_modified": HTTP_DATE}.get(key)
        if pattern and isinstance(value, str) and pattern.fullmatch(value):
            return record
    return None


def record_validator(part, validator):
    """Records (or, for None, removes) the validator of the response `part` now starts with."""
    if validator is None:
        discard_file(part + VALIDATOR)
    else:
        write_atomically(part + VALIDATOR, (json.dumps(validator) + "\n").encode())


def parse_length(value):
    """Content-Length -> int, None when absent; DownloadError when present but not one non-negative number."""
    if value is None:
        return None
    if not re.fullmatch(r"\d{1,19}", value.strip()):
        raise DownloadError("malformed Content-Length %r" % value)
    return int(value.strip())


class Downloader:
    def __init__(self, out_dir, timeout_s):
        self.out_dir, self.timeout_s = out_dir, timeout_s
        self.opener = urllib.request.build_opener(HttpOnlyRedirects)
        self.totals = {}  # file name -> the total size its responses stated
        self.manifest_path = os.path.join(out_dir, MANIFEST)
        self.manifest = self._read_manifest()

    # --- the manifest: each finished file's size and sha256 ---
    def _read_manifest(self):
        if not os.path.lexists(self.manifest_path):
            return {"schema": MANIFEST_SCHEMA, "files": {}}
        if not os.path.isfile(self.manifest_path):  # a folder, or a FIFO whose open would block
            raise DownloadError("%s: not a regular file; remove it and the files it lists to download again"
                                % self.manifest_path)
        try:
            with open(self.manifest_path, encoding="utf-8") as f:
                manifest = json.load(f)
        except (OSError, ValueError, RecursionError) as e:
            raise DownloadError("%s: cannot read it (%s); remove it and the files it lists to download again"
                                % (self.manifest_path, e))
        files = manifest.get("files") if isinstance(manifest, dict) else None
        well_formed = isinstance(files, dict) and manifest.get("schema") == MANIFEST_SCHEMA and all(
            isinstance(r, dict) and isinstance(r.get("size"), int) and isinstance(r.get("sha256"), str)
            for r in files.values())
        if not well_formed:
            raise DownloadError("%s: not a %s manifest; remove it and the files it lists to download again"
                                % (self.manifest_path, MANIFEST_SCHEMA))
        return manifest

    def _record(self, name, path, **source):
        self.manifest["files"][name] = dict(size=os.path.getsize(path), sha256=sha256_of(path), **source)
        write_atomically(self.manifest_path, (json.dumps(self.manifest, indent=2, sort_keys=True) + "\n").encode())

    def already_there(self, name):
        """True when `name` is in place and matches its manifest record; DownloadError when it does not."""
        path = os.path.join(self.out_dir, name)
        if not os.path.lexists(path):
            return False
        record = self.manifest["files"].get(name)
        if record is None:
            raise DownloadError("%s is there but %s has no record of it, so it cannot be verified; remove it to "
                                "download it again" % (path, MANIFEST))
        if not os.path.isfile(path):
            raise DownloadError("%s is not a regular file; remove it to download it again" % path)
        size = os.path.getsize(path)
        if size != record["size"]:
            raise DownloadError("%s has %d bytes, %s records %d; remove it to download it again"
                                % (path, size, MANIFEST, record["size"]))
        if sha256_of(path) != record["sha256"]:
            raise DownloadError("%s: sha256 differs from %s (the file changed after its download); remove it to "
                                "download it again" % (path, MANIFEST))
        say("download: %s already there (%s, sha256 verified)" % (path, mib(size)))
        return True

    # --- one verified transfer ---
    def _agree_total(self, name, total):
        if total is None:
            return
        if self.totals.setdefault(name, total) != total:
            raise DownloadError("%s: the server stated a total of %d bytes, earlier %d" % (name, total, self.totals[name]))

    def fetch(self, name, part, want=None):
        """Appends to `part` the bytes of file `name` from len(part) on, up to `want` bytes in all (None: to the
        end), each response checked against its request. Returns (bytes now in part, the resource's total
        size or None when no response stated it, bytes fetched by this call)."""
        have = os.path.getsize(part) if os.path.exists(part) else 0
        validator = read_validator(part) if have else None
        if have and validator is None:  # which version its bytes are of is unknown: they cannot be resumed
            say("download: %s: no validator (ETag or Last-Modified) recorded for its %s, so it cannot be resumed "
                "safely; fetching %s from byte 0" % (part, mib(have), name))
            have = discard(part)
        if want is not None and have > want:  # never written by this script: start again
            have = discard(part)
        if want is not None and have == want:
            return have, self.totals.get(name), 0
        for _ in range(2):  # a second time only from byte 0, after discarding a .part that could not be resumed
            result = self._transfer(name, part, have, want, validator)
            if result is not None:
                return result
            have, validator = discard(part), None
        raise DownloadError("%s: the server keeps answering a request from byte 0 as a resume" % name)

    def _transfer(self, name, part, have, want, validator):
        """One request; None when the .part cannot be resumed (longer than the resource, or the server's file
        changed since its first byte): the caller discards it and asks again from byte 0."""
        url = base_url() + name
        last = None if want is None else want - 1
        headers = {"Range": "bytes=%d-%s" % (have, "" if last is None else last)}
        if have:  # a resume: only of the version the .part's bytes came from, else the whole file (200)
            headers["If-Range"] = next(iter(validator.values()))
        request = urllib.request.Request(url, headers=headers)
        with Watchdog(self.timeout_s, url) as watchdog:
            try:
                response = self.opener.open(request, timeout=self.timeout_s)
            except urllib.error.HTTPError as e:
                if e.code != 416:
                    raise DownloadError("%s: HTTP %d %s" % (url, e.code, e.reason))
                total = parse_unsatisfied_range(e.headers.get("Content-Range"))
                if total is None:
                    raise DownloadError("%s: HTTP 416 without the resource's size (Content-Range %r)"
                                        % (url, e.headers.get("Content-Range")))
                self._agree_total(name, total)
                if have > total:
                    return None
                if have and changed_version(validator, e.headers):
                    say("download: %s changed on the server since %s was started (a 416 for another version); "
                        "fetching it again from byte 0" % (name, part))
                    return None
                if have == total:  # the .part already holds the whole resource
                    return have, total, 0
                raise DownloadError("%s: HTTP 416 for bytes=%d- although the file has %d bytes" % (url, have, total))
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
                reason = e.reason if isinstance(e, urllib.error.URLError) else e
                raise DownloadError("cannot reach %s (%s)" % (url, str(reason) or type(reason).__name__))
            watchdog.progress()
            with response:
                skip, total, length = self._check_response(url, name, response, have, last)
                if response.status == 206 and have and changed_version(validator, response.headers):
                    # a server that ignored If-Range: its bytes are of another version than the .part's
                    say("download: %s changed on the server since %s was started (a 206 with another %s); "
                        "fetching it again from byte 0" % (name, part, "ETag" if "etag" in validator
                                                           else "Last-Modified"))
                    return None
                if skip or not have:  # the body starts at byte 0: the .part becomes this response's version
                    have = discard(part)
                    record_validator(part, response_validator(response.headers))
                have, fetched = self._write_body(url, part, response, watchdog, have, length, want)
                return have, total, fetched

    def _check_response(self, url, name, response, have, last):
        """Returns (bytes of the body to skip, the resource's total or None, the body's announced length or None)."""
        try:
            length = parse_length(response.headers.get("Content-Length"))
        except DownloadError as e:
            raise DownloadError("%s: %s" % (url, e))
        if response.status == 206:
            value = response.headers.get("Content-Range")
            span = parse_content_range(value)
            if span is None:
                raise DownloadError("%s: HTTP 206 with a malformed Content-Range %r" % (url, value))
            first, end, total = span
            expected_end = last if total is None or last is not None and last < total else total - 1
            if first != have or (expected_end is not None and end != expected_end):
                raise DownloadError("%s: HTTP 206 with Content-Range %r for bytes=%d-%s" % (
                    url, value, have, "" if last is None else last))
            if length is not None and length != end - first + 1:
                raise DownloadError("%s: Content-Length %d disagrees with Content-Range %r" % (url, length, value))
            self._agree_total(name, total)
            return 0, total, end - first + 1
        if response.status == 200:  # the server ignored Range and sends everything from byte 0
            self._agree_total(name, length)
            return have, length, length
        raise DownloadError("%s: unexpected HTTP %d %s" % (url, response.status, response.reason))

    def _write_body(self, url, part, response, watchdog, have, length, want):
        """Appends the body to `part` (up to `want` bytes in all). Checks that the bytes received equal the length
        announced. Returns (bytes in part, bytes fetched)."""
        limit = None if want is None else want - have
        received = fetched = unreported = 0
        if have == 0:
            open(part, "wb").close()
        try:
            with open(part, "ab") as out:
                while limit is None or fetched < limit:
                    block = response.read1(CHUNK)
                    if not block:
                        break
                    received += len(block)
                    unreported += len(block)
                    if limit is not None:
                        block = block[:limit - fetched]
                    out.write(block)
                    fetched += len(block)
                    if unreported >= CHUNK:
                        watchdog.progress()
                        unreported = 0
        except (http.client.HTTPException, OSError, ValueError) as e:
            raise DownloadError("%s: download interrupted after %s (%s); rerun to resume"
                                % (url, mib(have + fetched), str(e) or type(e).__name__))
        done = limit is not None and fetched == limit
        if length is not None and received != length and not done:
            raise DownloadError("%s: got %d of the %d bytes announced; rerun to resume" % (url, received, length))
        return have + fetched, fetched

    # --- the files ---
    def download_whole(self, name):
        target = os.path.join(self.out_dir, name)
        if self.already_there(name):
            return
        part = target + ".part"
        have, total, fetched = self.fetch(name, part)
        resumed = have - fetched  # the .part's bytes kept (0 when it was discarded: not a resume)
        if total is None:
            raise DownloadError("%s: the server did not state the file's size, so it cannot be verified" % name)
        if have != total:
            raise DownloadError("%s: got %d of %d bytes; rerun to resume" % (name, have, total))
        self._record(name, part, url=base_url() + name, resource_size=total)
        os.replace(part, target)
        discard(part)  # its validator
        say("download: %s %s%s" % (target, mib(have),
                                   " (resumed at %s, fetched %s)" % (mib(resumed), mib(fetched)) if resumed else ""))

    def download_head(self, limit_bytes):
        """The first `limit_bytes` of the train file, cut after the last complete story."""
        label = "%dMB" % (limit_bytes >> 20) if limit_bytes % (1 << 20) == 0 else "%dB" % limit_bytes
        name = "TinyStories-train-head-%s.txt" % label
        target = os.path.join(self.out_dir, name)
        if self.already_there(name):
            return
        part = os.path.join(self.out_dir, "TinyStories-train.txt.head-%s.part" % label)
        have, total, fetched = self.fetch("TinyStories-train.txt", part, want=limit_bytes)
        resumed = have - fetched  # the .part's bytes kept (0 when it was discarded: not a resume)
        complete = have == limit_bytes if total is None or total >= limit_bytes else have == total
        if not complete:
            raise DownloadError("TinyStories-train.txt: got %d of the first %d bytes; rerun to resume"
                                % (have, limit_bytes if total is None else min(limit_bytes, total)))
        with open(part, "rb") as f:
            data = f.read()
        end = data.rfind(STORY_END)
        if end < 0:
            raise DownloadError("TinyStories-train.txt: no complete story in the first %d bytes" % have)
        data = data[:end + len(STORY_END)]
        write_atomically(target + ".verified", data)
        self._record(name, target + ".verified", url=base_url() + "TinyStories-train.txt", resource_size=total,
                     head_bytes=have)
        os.replace(target + ".verified", target)
        discard(part)  # and its validator
        say("download: %s %s: the first %s of TinyStories-train.txt cut after its last complete story "
            "(%d stories)%s" % (target, mib(len(data)), mib(have), data.count(STORY_END),
                                " (resumed at %s, fetched %s)" % (mib(resumed), mib(fetched)) if resumed else ""))


def say(text):
    """Prints a progress line at once; a stdout that cannot take it (> /dev/full, a closed pipe) is an OSError
    naming stdout, which main() prints as one line (and fd 1 goes to /dev/null: no second error at exit)."""
    try:
        print(text, flush=True)
    except OSError as e:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        raise OSError(e.errno, e.strerror, "stdout") from None


def discard_file(path):
    if os.path.lexists(path):
        os.remove(path)


def discard(part):
    """Removes a .part and the validator recorded beside it; returns 0, the bytes it now holds."""
    discard_file(part)
    discard_file(part + VALIDATOR)
    return 0


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_atomically(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


class OneLineArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage and the error on two lines; the tools print one
        print("%s: error: %s (see --help)" % (PROG, message), file=sys.stderr)
        sys.exit(2)


def main():
    parser = OneLineArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "raw"),
                        help="folder for the files (default: data/raw of the repository)")
    parser.add_argument("--train-mib", type=int, default=10, help="MiB of the train file's head to fetch (default 10)")
    parser.add_argument("--full", action="store_true", help="also fetch the whole TinyStories-train.txt (~1.9 GB)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds without progress after which a connection is abandoned (default 30)")
    args = parser.parse_args()
    if not 1 <= args.train_mib <= 2048:
        parser.error("--train-mib %d is out of range [1, 2048]" % args.train_mib)
    if not 0.1 <= args.timeout <= 3600:
        parser.error("--timeout %g is out of range [0.1, 3600]" % args.timeout)
    out_dir = os.path.normpath(args.out)
    # An --out that is no folder or cannot be made one is bad input (exit 2), said before anything is fetched.
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        print("%s: error: --out %s is not a folder" % (PROG, one_line(out_dir)), file=sys.stderr)
        return 2
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        print("%s: error: --out %s: cannot create the folder (%s)" % (PROG, one_line(out_dir), e.strerror or e),
              file=sys.stderr)
        return 2
    try:
        say("download: from %s" % base_url())
        downloader = Downloader(out_dir, args.timeout)
        downloader.download_whole("TinyStories-valid.txt")
        downloader.download_head(args.train_mib << 20)
        if args.full:
            downloader.download_whole("TinyStories-train.txt")
    except DownloadError as e:
        print("%s: error: %s (HF_ENDPOINT sets a mirror; data/README.md lists other sources)" % (PROG, one_line(str(e))),
              file=sys.stderr)
        return 1
    except OSError as e:  # the local disk: full, read-only, a folder where a file should go
        print("%s: error: %s" % (PROG, one_line("%s: %s" % (e.filename or out_dir, e.strerror or e))), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: error: interrupted; rerun to resume" % PROG, file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
