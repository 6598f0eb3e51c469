#!/usr/bin/env python3
"""Every relative link of the documentation leads somewhere: README.md, data/README.md and docs/*.md.

For each markdown link `[text](path)`, `[text](path#anchor)`, `[text](#anchor)`, image `![alt](path)`,
reference definition `[name]: path` and HTML `<a href=...>` / `<img src=...>` outside code (fenced blocks and
code spans are not links), the target must exist (a file or folder inside the repository, the path taken
relative to the file that links, or to the repository with a leading `/`), and an anchor must name a heading of
the target under GitHub's slug rules (the heading's text lowercased, every character but letters, digits, marks,
`_`, `-` and spaces removed, spaces turned into `-`; a repeated slug gets `-1`, `-2`, ... in order) or an
explicit `<a id="...">` / `<a name="...">` there; in a file that is not markdown only GitHub's line anchors
(`#L10`, `#L10-L20`) count. External links (a scheme such as `https:`, `mailto:`) are not fetched.

Usage: check_links.py [ROOT]       (default: the repository this script is in)
       check_links.py --self-test  (shows on a made-up tree that a dead file, anchor and image are caught)
Prints one line per dead link (`file:line: target: why`) and a closing line `N passed, M failed`; exit 0 when
every link resolves, 1 when one does not, 2 on bad usage. Standard library only.
"""
import html
import os
import pathlib
import re
import shutil
import sys
import tempfile
import unicodedata
import urllib.parse

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# [text](target) and ![alt](target), with an optional "title"; the text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_TARGET = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
LINE_ANCHOR = re.compile(r"^L\d+(?:-L\d+)?$")


def heading_text(raw):
    """The text GitHub renders for a heading's source: inline markup dropped, code spans and links as text."""
    text = CODE_SPAN.sub(lambda m: m.group(0)[len(m.group(1)):-len(m.group(1))].strip(), raw)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)                     # inline HTML tags
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)    # emphasis markers (not snake_case underscores)
    return html.unescape(text).strip()


def slug(text):
    """GitHub's anchor for a heading text (github-slugger): lowercase, keep letters, marks, digits, connector
    punctuation (`_`), `-` and spaces, then spaces -> `-`."""
    kept = [c for c in text.lower()
            if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"]
    return "".join(kept).replace(" ", "-")


def markdown_lines(text):
    """(line number, line) of every line outside fenced code blocks, HTML comments blanked out."""
    text = HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            closing = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closing and not line.strip()[len(m.group(1)):].strip():  # a closing fence has no info string
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield number, line


def anchors_of(text):
    """Every anchor a markdown file defines: heading slugs (repeats numbered as GitHub does) and <a id/name>."""
    found, seen = set(), {}
    previous = None
    for _, line in markdown_lines(text):
        title = None
        m = ATX_HEADING.match(line)
        if m:
            title = m.group(2) or ""
        elif previous is not None and previous.strip() and SETEXT_UNDERLINE.match(line) \
                and not previous.lstrip().startswith(("|", "-", "*", "+", "#", ">")):
            title = previous.strip()  # a setext heading: "Title" over "===" or "---" (not a table row or list item)
        if title is not None:
            base = slug(heading_text(title))
            name, n = base, seen.get(base, 0)
            while name in seen:
                n += 1
                name = f"{base}-{n}"
            seen[base] = n
            seen[name] = seen.get(name, 0)
            found.add(name)
        for a in HTML_ANCHOR.finditer(line):
            found.add(a.group(1))
        previous = line
    return found


def links_of(text):
    """(line number, target) of every link in a markdown text, code excluded."""
    for number, line in markdown_lines(text):
        plain = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        for m in INLINE_LINK.finditer(plain):
            yield number, m.group(1)
        m = REFERENCE_DEF.match(plain)
        if m:
            yield number, m.group(1)
        for m in HTML_TARGET.finditer(plain):
            yield number, m.group(1)


def check_link(root, source, target, anchor_cache):
    """'' when `target`, linked from `source`, resolves; else why not."""
    if not target:
        return "empty link target"
    if SCHEME.match(target) or target.startswith("//"):
        return ""  # external: not fetched
    path_part, _, anchor = target.partition("#")
    path_part = urllib.parse.unquote(path_part)
    anchor = urllib.parse.unquote(anchor)
    if path_part:
        base = root if path_part.startswith("/") else source.parent
        dest = pathlib.Path(os.path.normpath(base / path_part.lstrip("/")))
    else:
        dest = source
    try:
        dest.relative_to(root)
    except ValueError:
        return "points outside the repository"
    if not dest.exists():
        return "no such file"
    if not anchor:
        return ""
    if dest.is_dir():
        return "an anchor into a folder"
    if dest.suffix.lower() not in (".md", ".markdown"):
        return "" if LINE_ANCHOR.match(anchor) else f"anchor #{anchor} into a file that is not markdown"
    if dest not in anchor_cache:
        anchor_cache[dest] = anchors_of(dest.read_text(encoding="utf-8", errors="replace"))
    if anchor in anchor_cache[dest]:
        return ""
    return f"no heading or <a id> with anchor #{anchor} in {dest.relative_to(root).as_posix()}"


def documents(root):
    files = [root / "README.md", root / "data" / "README.md"]
    files += sorted((root / "docs").glob("*.md")) if (root / "docs").is_dir() else []
    return [f for f in files if f.is_file()]


def check_tree(root, out=sys.stdout):
    """(passed, failed) over every link of the tree's documents, printing one line per dead link."""
    root = root.resolve()
    passed = failed = 0
    cache = {}
    for doc in documents(root):
        text = doc.read_text(encoding="utf-8", errors="replace")
        for number, target in links_of(text):
            why = check_link(root, doc, target, cache)
            if why:
                failed += 1
                print(f"{doc.relative_to(root).as_posix()}:{number}: ({target}): {why}", file=out)
            else:
                passed += 1
    return passed, failed


def self_test():
    """A made-up tree with good links and three dead ones: exactly the dead ones must be reported."""
    import io
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="check_links."))
    try:
        (tmp / "docs" / "images").mkdir(parents=True)
        (tmp / "data").mkdir()
        (tmp / "docs" / "images" / "a.png").write_bytes(b"")
        (tmp / "README.md").write_text(
            "# Top\n\n## Commands\n\n## Commands\n\n"
            "[ok](docs/guide.md#resultsjson-schema-xsaresults1) [ok](#commands-1) [ok](docs/guide.md#x-y)\n"
            "[dead anchor](docs/guide.md#no-such-heading) `[in code](nowhere.md)`\n"
            "```\n[in a fence](nowhere.md)\n```\n[ext](https://example.org/x#y) [ok](#top)\n", encoding="utf-8")
        (tmp / "docs" / "guide.md").write_text(
            "# Guide\n\n### results.json (schema `xsa.results/1`)\n\n<a id=\"x-y\"></a>\n"
            "![ok](images/a.png) ![dead image](images/b.png) [dead file](../nowhere.md)\n[ok](../README.md#top)\n"
            "## λ — 2. Is full removal (λ=1) optimal?\n[ok](#λ--2-is-full-removal-λ1-optimal)\n", encoding="utf-8")
        (tmp / "data" / "README.md").write_text("[ok](../docs/guide.md#guide)\n", encoding="utf-8")
        buf = io.StringIO()
        passed, failed = check_tree(tmp, buf)
        lines = buf.getvalue().splitlines()
        want = ["README.md:8: (docs/guide.md#no-such-heading): no heading or <a id> with anchor #no-such-heading in "
                "docs/guide.md",
                "docs/guide.md:6: (images/b.png): no such file",
                "docs/guide.md:6: (../nowhere.md): no such file"]
        if lines != want or (passed, failed) != (9, 3):
            print("check_links: self-test failed: got", lines, (passed, failed), file=sys.stderr)
            return 1
        print("check_links: self-test: 3 dead links caught, 9 good ones passed")
        return 0
    finally:
        shutil.rmtree(tmp)


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print("usage: check_links.py [ROOT] | --self-test", file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]) if len(argv) == 2 else pathlib.Path(__file__).resolve().parents[2]
    if not (root / "README.md").is_file():
        print(f"check_links: error: {root}: no README.md (expected the repository root)", file=sys.stderr)
        return 2
    passed, failed = check_tree(root)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
