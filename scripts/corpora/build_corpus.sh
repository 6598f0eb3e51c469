#!/usr/bin/env bash
# Builds one long-document corpus from Debian packages (GitHub issue 56; docs/guide.md "Long-document corpora").
# Usage: scripts/corpora/build_corpus.sh NAME [--force] [--vocab-size N]
#   kjv            prose: the King James Bible (bible-kjv-text, decoded by bible-kjv's `bible`), a document per book
#   python-stdlib  code: Python 3.11's standard library, the .py files of libpython3.11-minimal and
#                  libpython3.11-stdlib outside test folders, a document per file
#   linux-doc      prose: the kernel's documentation (linux-doc-6.1), a document per .rst file
#   linux-source   code: the kernel's C, the .c files under kernel/, mm/ and fs/ of linux-source-6.1, a document
#                  per file
# Writes data/corpora/NAME/: text/ (the documents, one file each), tokens/ (build/xsa-prepare's output: the
# folder a config's data.dir names) and provenance.json (every package's name, version, .deb and its sha256,
# and how the documents were chosen). The packages are fetched with `apt-get download` and unpacked with
# `dpkg-deb -x` into the build folder, so nothing is installed on the system (no root needed) and the exact
# .deb files are the recorded inputs. The folder is built beside its place and renamed into it at the end:
# a failure leaves nothing. Prints the corpus's documents and tokens, from tokens/meta.json, at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."

usage="usage: scripts/corpora/build_corpus.sh NAME [--force] [--vocab-size N] (NAME: kjv, python-stdlib, linux-doc, linux-source)"
die() { echo "build_corpus: error: $*" >&2; exit 2; }
fail() { echo "build_corpus: error: $*" >&2; exit 1; }

name="" force=0 vocab=4096
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --vocab-size)
      [ $# -ge 2 ] || die "--vocab-size needs a number; $usage"
      # xsa-prepare's range (kMinVocabSize..kMaxVocabSize of src/xsa/tokenizer/tokenizer.h), checked before the download
      [[ "$2" =~ ^[0-9]{1,6}$ ]] && [ "$((10#$2))" -ge 260 ] && [ "$((10#$2))" -le 65536 ] ||
        die "--vocab-size '$2': expected a whole number from 260 to 65536; $usage"
      vocab="$2"; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) die "unknown option '$1'; $usage" ;;
    *) [ -z "$name" ] || die "one corpus at a time, got '$name' and '$1'; $usage"; name="$1" ;;
  esac
  shift
done
[ -n "$name" ] || die "no corpus named; $usage"
case "$name" in
  kjv) packages=(bible-kjv bible-kjv-text) ;;
  python-stdlib) packages=(libpython3.11-minimal libpython3.11-stdlib) ;;
  linux-doc) packages=(linux-doc-6.1) ;;
  linux-source) packages=(linux-source-6.1) ;;
  *) die "unknown corpus '$name'; $usage" ;;
esac

prepare="$PWD/build/xsa-prepare"
[ -x "$prepare" ] || fail "build/xsa-prepare not found: build it first (bash scripts/build.sh)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || fail "needs apt-get and dpkg-deb (Debian)"
final="data/corpora/$name"
if [ -e "$final" ] && [ "$force" = 0 ]; then
  die "$final already exists (use --force to rebuild it)"
fi

mkdir -p data/corpora
work=$(mktemp -d "$PWD/data/corpora/.$name.tmp-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/root" "$work/text"

echo "build_corpus: $name: fetching ${packages[*]}"
(cd "$work/debs" && apt-get download "${packages[@]}" >/dev/null 2>"$work/apt.err") ||
  fail "apt-get download ${packages[*]} failed: $(tail -n 1 "$work/apt.err") (run apt-get update?)"
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done

# ---- the documents, one file each, named so that their sorted path order is the corpus's order ----
case "$name" in
  kjv)
    # `bible -l N` prints a verse per line (lines up to N columns); a line "Book N" opens chapter N of a book.
    "$work/root/usr/bin/bible" -l 100000 -p "$work/root/usr/lib" "Gen1:1-Rev22:21" >"$work/bible.txt" ||
      fail "bible could not decode the text"
    awk -v out="$work/text" '
      /^[^ ].* [0-9]+$/ {
        book = $0; sub(/ [0-9]+$/, "", book)
        if (book != current) {
          if (file) close(file)
          current = book; n++
          name = book; gsub(/ /, "_", name)
          file = sprintf("%s/%02d-%s.txt", out, n, name)
        }
      }
      file { print > file }' "$work/bible.txt"
    selection="one document per book of the King James Bible, in canonical order: the output of \`bible -l 100000 Gen1:1-Rev22:21\` cut where the book name in a chapter heading changes"
    ;;
  python-stdlib)
    (cd "$work/root/usr/lib/python3.11" &&
      find . -name '*.py' -type f -not -path '*/test/*' -not -path '*/tests/*' -not -path '*/idle_test/*' -print0 |
      xargs -0 cp --parents -t "$work/text")
    selection="every .py file under /usr/lib/python3.11 of the two packages, except those in a folder named test, tests or idle_test; a document per file"
    ;;
  linux-doc)
    (cd "$work/root/usr/share/doc/linux-doc-6.1/Documentation" &&
      find . -name '*.rst.gz' -type f -print0 | while IFS= read -r -d '' f; do
        mkdir -p "$work/text/$(dirname "$f")"
        gzip -dc "$f" >"$work/text/${f%.gz}"
      done)
    selection="every .rst file of the kernel's Documentation folder as linux-doc-6.1 ships it (gzip-compressed), decompressed; a document per file"
    ;;
  linux-source)
    # Three core subsystems, not the whole tree (1.2 GB of .c/.h): enough tokens for one epoch of the long runs.
    tar -xJf "$work/root/usr/src/linux-source-6.1.tar.xz" -C "$work/root" \
      linux-source-6.1/kernel linux-source-6.1/mm linux-source-6.1/fs
    (cd "$work/root/linux-source-6.1" &&
      find kernel mm fs -name '*.c' -type f -print0 | xargs -0 cp --parents -t "$work/text")
    selection="every .c file under kernel/, mm/ and fs/ of the kernel source in linux-source-6.1 (its linux-source-6.1.tar.xz); a document per file"
    ;;
esac
documents=$(find "$work/text" -type f | wc -l)
[ "$documents" -gt 0 ] || fail "no documents extracted from ${packages[*]}"
echo "build_corpus: $name: $documents document files; preparing (vocab $vocab)"

# From inside the folder, so that meta.json names the documents text/... wherever the corpus lives.
(cd "$work" && "$prepare" --documents text --val-fraction 0.05 --vocab-size "$vocab" --out tokens >prepare.log) ||
  fail "xsa-prepare failed (its last line: $(tail -n 1 "$work/prepare.log"))"

# provenance.json: the packages (the inputs), how the documents were chosen, the command.
python3 - "$work" "$name" "$selection" "$vocab" <<'EOF'
import hashlib, json, os, subprocess, sys
work, name, selection, vocab = sys.argv[1:]
packages = []
for deb in sorted(os.listdir(os.path.join(work, "debs"))):
    path = os.path.join(work, "debs", deb)
    field = lambda f: subprocess.run(["dpkg-deb", "-f", path, f], check=True, capture_output=True, text=True).stdout.strip()
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    packages.append({"package": field("Package"), "version": field("Version"), "architecture": field("Architecture"),
                     "deb": deb, "bytes": os.path.getsize(path), "sha256": digest})
record = {"format": "xsa.corpus/1", "corpus": name, "packages": packages, "selection": selection,
          "text": "text/ (a document per file; tokens/meta.json lists each file's sha256)",
          "prepare": f"xsa-prepare --documents text --val-fraction 0.05 --vocab-size {vocab} --out tokens"}
with open(os.path.join(work, "provenance.json"), "w") as out:
    json.dump(record, out, indent=2)
    out.write("\n")
EOF
rm -rf "$work/debs" "$work/root" "$work/bible.txt" "$work/apt.err"
mv "$work/prepare.log" "$work/tokens.log"

# Into place: the old folder (with --force) goes only once the new one is complete.
if [ -e "$final" ]; then
  mv "$final" "$work.old"
  mv "$work" "$final"
  rm -rf "$work.old"
else
  mv "$work" "$final"
fi
trap - EXIT

python3 - "$final" <<'EOF'
import json, sys
final = sys.argv[1]
meta = json.load(open(f"{final}/tokens/meta.json"))
tokens = meta["train_tokens"] + meta["val_tokens"]
print(f"build_corpus: {final}: {meta['corpus']['documents']} documents, {tokens} tokens "
      f"({meta['corpus']['empty_documents_skipped']} empty files skipped; vocab {meta['vocab_size']})")
for split in ("train", "val"):
    s = meta["document_lengths"][split]
    share = s["share_of_tokens_in_documents_longer_than"]
    print(f"  {split}: {s['count']} documents, {s['tokens']} tokens; tokens per document: median {s['median']:.0f}, "
          f"p10 {s['p10']:.0f}, p90 {s['p90']:.0f}, max {s['max']}; share of tokens in documents longer than "
          f"4096: {share['4096']:.3f}, 16384: {share['16384']:.3f}")
print(f"  600 steps x 16384 tokens = {600 * 16384} tokens = {600 * 16384 / meta['train_tokens']:.2f} epochs of train")
EOF
