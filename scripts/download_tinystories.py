#!/usr/bin/env python3
"""Downloads TinyStories text (Eldan & Li 2023; license CDLA-Sharing-1.0) from the Hugging Face dataset
roneneldan/TinyStories into data/raw/ -- by default only what a first run needs:

  TinyStories-valid.txt              the whole validation file (~19 MB)
  TinyStories-train-head-10MB.txt    the first 10 MiB of TinyStories-train.txt, cut after its last complete story

The head comes through an HTTP Range request (bytes=0-N-1), so a first demo fetches ~30 MB, not the 1.9 GB
train file. `--full` also fetches the whole TinyStories-train.txt. Every download goes to a .part file first
and is renamed when complete; a rerun resumes a .part from where it stopped (Range bytes=K-) and skips what
is already there. A server that ignores Range (answers 200) works too: the bytes before K are skipped.

The base URL is $HF_ENDPOINT (the Hugging Face hub's variable for mirrors; default https://huggingface.co)
followed by /datasets/roneneldan/TinyStories/resolve/main/<file>.

Usage: download_tinystories.py [--out DIR] [--train-mib N] [--full]
Exit codes: 0 done, 1 download failed (one line on stderr), 2 bad arguments.
"""
import argparse
import os
import re
import sys
import urllib.error
import urllib.request

DATASET_PATH = "/datasets/roneneldan/TinyStories/resolve/main/"
STORY_END = b"\n<|endoftext|>\n"
CHUNK = 1 << 16
TIMEOUT_S = 30


class DownloadError(Exception):
    pass


def base_url():
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/") + DATASET_PATH


def mib(n):
    return "%.1f MiB" % (n / (1 << 20))


def fetch(url, part, want=None):
    """Appends to `part` the bytes of `url` from len(part) on, up to `want` bytes in all (None: to the end).
    Returns (bytes now in part, the resource's total size or None, bytes fetched by this call)."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    if want is not None and have >= want:
        return have, None, 0
    last = "" if want is None else str(want - 1)
    request = urllib.request.Request(url, headers={"Range": "bytes=%d-%s" % (have, last)})
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have > 0:  # nothing after `have`: the file is complete
            return have, have, 0
        raise DownloadError("%s: HTTP %d %s" % (url, e.code, e.reason))
    except (urllib.error.URLError, OSError) as e:
        raise DownloadError("cannot reach %s (%s)" % (url, getattr(e, "reason", e)))
    total = None
    with response:
        skip = 0
        if response.status == 206:
            match = re.match(r"bytes (\d+)-(\d+)/(\d+|\*)", response.headers.get("Content-Range", ""))
            if not match or int(match.group(1)) != have:
                raise DownloadError("%s: unexpected Content-Range %r for bytes=%d-"
                                    % (url, response.headers.get("Content-Range"), have))
            total = None if match.group(3) == "*" else int(match.group(3))
        else:  # 200: the server ignored Range and sends everything from byte 0
            length = response.headers.get("Content-Length")
            total = int(length) if length is not None else None
            skip = have
        limit = None if want is None else want - have
        fetched = 0
        try:
            with open(part, "ab") as out:
                while limit is None or fetched < limit:
                    size = CHUNK if limit is None else min(CHUNK, limit - fetched + skip)
                    block = response.read(size)
                    if not block:
                        break
                    if skip:
                        dropped = min(skip, len(block))
                        block, skip = block[dropped:], skip - dropped
                    if limit is not None:
                        block = block[:limit - fetched]
                    out.write(block)
                    fetched += len(block)
        except (OSError, ValueError) as e:
            raise DownloadError("%s: download interrupted after %s (%s); rerun to resume" % (url, mib(have + fetched), e))
    return have + fetched, total, fetched


def download_whole(name, out_dir):
    target = os.path.join(out_dir, name)
    if os.path.exists(target):
        print("download: %s already there (%s)" % (target, mib(os.path.getsize(target))))
        return
    part = target + ".part"
    resumed = os.path.getsize(part) if os.path.exists(part) else 0
    have, total, fetched = fetch(base_url() + name, part)
    if total is not None and have != total:
        raise DownloadError("%s: got %d of %d bytes; rerun to resume" % (name, have, total))
    os.replace(part, target)
    print("download: %s %s%s" % (target, mib(have),
                                 " (resumed at %s, fetched %s)" % (mib(resumed), mib(fetched)) if resumed else ""))


def download_head(out_dir, limit_bytes):
    """The first `limit_bytes` of the train file, cut after the last complete story."""
    label = "%dMB" % (limit_bytes >> 20) if limit_bytes % (1 << 20) == 0 else "%dB" % limit_bytes
    target = os.path.join(out_dir, "TinyStories-train-head-%s.txt" % label)
    if os.path.exists(target):
        print("download: %s already there (%s)" % (target, mib(os.path.getsize(target))))
        return
    part = os.path.join(out_dir, "TinyStories-train.txt.head-%s.part" % label)
    resumed = os.path.getsize(part) if os.path.exists(part) else 0
    have, total, fetched = fetch(base_url() + "TinyStories-train.txt", part, want=limit_bytes)
    if have < limit_bytes and (total is None or have < total):
        raise DownloadError("TinyStories-train.txt: got %d of the first %d bytes; rerun to resume" % (have, limit_bytes))
    with open(part, "rb") as f:
        data = f.read()
    end = data.rfind(STORY_END)
    if end < 0:
        raise DownloadError("TinyStories-train.txt: no complete story in the first %d bytes" % have)
    data = data[:end + len(STORY_END)]
    with open(target + ".tmp", "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(target + ".tmp", target)
    os.remove(part)
    print("download: %s %s: the first %s of TinyStories-train.txt cut after its last complete story (%d stories)%s"
          % (target, mib(len(data)), mib(have), data.count(STORY_END),
             " (resumed at %s, fetched %s)" % (mib(resumed), mib(fetched)) if resumed else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "raw"),
                        help="folder for the files (default: data/raw of the repository)")
    parser.add_argument("--train-mib", type=int, default=10, help="MiB of the train file's head to fetch (default 10)")
    parser.add_argument("--full", action="store_true", help="also fetch the whole TinyStories-train.txt (~1.9 GB)")
    args = parser.parse_args()
    if not 1 <= args.train_mib <= 2048:
        print("download_tinystories: error: --train-mib %d is out of range [1, 2048]" % args.train_mib, file=sys.stderr)
        return 2
    out_dir = os.path.normpath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    print("download: from %s" % base_url())
    try:
        download_whole("TinyStories-valid.txt", out_dir)
        download_head(out_dir, args.train_mib << 20)
        if args.full:
            download_whole("TinyStories-train.txt", out_dir)
    except DownloadError as e:
        print("download_tinystories: error: %s (HF_ENDPOINT sets a mirror; data/README.md lists other sources)" % e,
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
