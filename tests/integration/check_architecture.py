#!/usr/bin/env python3
"""The floor plan, checked: docs/ARCHITECTURE.md's table "Dependency rules" is data, and every #include under src/
must keep it.

The table names each module of src/xsa/, the xsa modules it may include and its link world (torch-free,
sentencepiece, LibTorch). Checked against the tree and CMakeLists.txt:
  1. every folder of src/xsa/ is a row of the table, and every row a folder;
  2. every `#include "xsa/<module>/..."` in a module's files names the module itself or one it may include;
  3. LibTorch headers (<torch/...>, <ATen/...>, <c10/...>, <c10d/...>) appear only in LibTorch modules, and
     sentencepiece headers only in sentencepiece modules;
  4. each module's sources are compiled into the CMake library of its world (xsa_core: torch-free,
     xsa_tokenizer: sentencepiece, xsa_torch: LibTorch), read from the file(GLOB ...) lines;
  5. each executable (src/cli/*.cpp) includes only modules of the libraries it links, so LibTorch and
     sentencepiece never meet in one binary;
  6. a module may include only modules of its own world or the torch-free one;
  7. the third-party libraries each module's row of the table "Modules and what each may depend on" names
     (nlohmann_json, yaml-cpp, CLI11) are exactly the ones its files include.

Usage: check_architecture.py SOURCE_DIR            (exit 0: all hold; 1: one line per violation)
       check_architecture.py SOURCE_DIR --self-test (also shows that a wrong include is caught)
"""
import os
import re
import shutil
import sys
import tempfile

WORLDS = {"torch-free": "xsa_core", "sentencepiece": "xsa_tokenizer", "LibTorch": "xsa_torch"}
# What each world may link besides itself (the libraries' own link lines say the same; 6. checks modules by it).
WORLD_MAY_USE = {"torch-free": {"torch-free"}, "sentencepiece": {"torch-free", "sentencepiece"},
                 "LibTorch": {"torch-free", "LibTorch"}}
TORCH_HEADER = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|c10d)/')
SENTENCEPIECE_HEADER = re.compile(r'#\s*include\s*[<"]sentencepiece')
XSA_INCLUDE = re.compile(r'#\s*include\s*"xsa/([a-z_0-9]+)/')
# 7.: the libraries the modules table may name, and the include that shows a module uses one.
THIRD_PARTY = {"nlohmann_json": re.compile(r"#\s*include\s*<nlohmann/"),
               "yaml-cpp": re.compile(r"#\s*include\s*<yaml-cpp/"),
               "CLI11": re.compile(r'#\s*include\s*[<"]CLI/')}


def table_rows(src, header):
    """(path, [(line, cells)]) of the docs/ARCHITECTURE.md table whose header row has the cells `header`: every row
    below the header's separator, its cells stripped."""
    path = os.path.join(src, "docs", "ARCHITECTURE.md")
    lines = open(path, encoding="utf-8").read().splitlines()
    pattern = r"\|" + r"\|".join(r"\s*%s\s*" % re.escape(cell) for cell in header) + r"\|"
    try:
        start = next(i for i, line in enumerate(lines) if re.fullmatch(pattern, line.strip()))
    except StopIteration:
        sys.exit("check_architecture: %s: no table '| %s |'" % (path, " | ".join(header)))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append((line, [c.strip() for c in line.strip().strip("|").split("|")]))
    return path, rows


def read_rules(src):
    """{module: (set of modules it may include, world)} from docs/ARCHITECTURE.md's "Dependency rules" table."""
    path, rows = table_rows(src, ("module", "may include", "link world"))
    rules = {}
    for line, cells in rows:
        if len(cells) != 3:
            sys.exit("check_architecture: %s: malformed row %r" % (path, line))
        module = cells[0].strip("`")
        allowed = {m.strip().strip("`") for m in cells[1].split(",")} - {"—", "-", ""}
        if cells[2] not in WORLDS:
            sys.exit("check_architecture: %s: module %s: link world %r, expected one of %s"
                     % (path, module, cells[2], ", ".join(WORLDS)))
        rules[module] = (allowed, cells[2])
    return rules


def read_third_party(src):
    """{module: the THIRD_PARTY names its row of docs/ARCHITECTURE.md's "| module | what it is | may depend on |"
    table names}."""
    named = {}
    for _, cells in table_rows(src, ("module", "what it is", "may depend on"))[1]:
        match = re.fullmatch(r"`src/xsa/([a-z_0-9]+)`", cells[0])
        if match:
            named[match.group(1)] = {name for name in THIRD_PARTY if name in cells[-1]}
    return named


def read_cmake(src):
    """({library: set of modules globbed into it}, {executable: (source, set of libraries, transitively)})."""
    text = open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8").read()
    globs = dict(re.findall(r"file\(GLOB (\w+)\s+CONFIGURE_DEPENDS([^)]*)\)", text))
    libraries = {}
    for library, variable in re.findall(r"add_library\((\w+) STATIC \$\{(\w+)\}\)", text):
        libraries[library] = set(re.findall(r"src/xsa/(\w+)/\*\.cpp", globs.get(variable, "")))
    links = {}
    for target, body in re.findall(r"target_link_libraries\(([\w-]+)\s+(?:PUBLIC|PRIVATE)\s+([^)]*)\)", text):
        links.setdefault(target, set()).update(body.split())

    def closure(target):
        seen, todo = set(), [target]
        while todo:
            for dep in links.get(todo.pop(), ()):
                if dep in libraries and dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen
    executables = {name: (source, closure(name))
                   for name, source in re.findall(r"add_executable\(([\w-]+) (src/cli/\w+\.cpp)\)", text)}
    return libraries, executables


def includes(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    return [(n + 1, line) for n, line in enumerate(text.splitlines()) if line.lstrip().startswith("#")]


def check(src):
    rules = read_rules(src)
    third_party = read_third_party(src)
    libraries, executables = read_cmake(src)
    problems = []
    root = os.path.join(src, "src", "xsa")
    folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    for module in sorted(set(folders) - set(rules)):
        problems.append("src/xsa/%s: a module docs/ARCHITECTURE.md's dependency table does not list" % module)
    for module in sorted(set(rules) - set(folders)):
        problems.append("docs/ARCHITECTURE.md: module %s has no folder src/xsa/%s" % (module, module))
    for module in sorted(set(folders) & set(rules)):
        allowed, world = rules[module]
        for other in sorted(allowed):
            if other not in rules:
                problems.append("docs/ARCHITECTURE.md: %s may include %s, which is no module" % (module, other))
            elif rules[other][1] not in WORLD_MAY_USE[world]:
                problems.append("docs/ARCHITECTURE.md: %s (%s) may include %s (%s): worlds that never share a binary"
                                % (module, world, other, rules[other][1]))
        library = WORLDS[world]
        if module not in libraries.get(library, set()):
            problems.append("CMakeLists.txt: src/xsa/%s/*.cpp is not compiled into %s (its world: %s)"
                            % (module, library, world))
        used = set()
        for name in sorted(os.listdir(os.path.join(root, module))):
            path = os.path.join(root, module, name)
            rel = os.path.relpath(path, src)
            for number, line in includes(path):
                used |= {library for library, pattern in THIRD_PARTY.items() if pattern.search(line)}
                match = XSA_INCLUDE.search(line)
                if match and match.group(1) != module and match.group(1) not in allowed:
                    problems.append("%s:%d: %s includes %s, which docs/ARCHITECTURE.md does not allow (%s may "
                                    "include: %s)" % (rel, number, module, match.group(1), module,
                                                      ", ".join(sorted(allowed)) or "nothing"))
                if TORCH_HEADER.search(line) and world != "LibTorch":
                    problems.append("%s:%d: a LibTorch header in the %s module %s" % (rel, number, world, module))
                if SENTENCEPIECE_HEADER.search(line) and world != "sentencepiece":
                    problems.append("%s:%d: a sentencepiece header in the %s module %s" % (rel, number, world, module))
        named = third_party.get(module)
        if named is None:
            problems.append("docs/ARCHITECTURE.md: module %s has no row in the table of what each may depend on"
                            % module)
        else:
            for library in sorted(used - named):
                problems.append("src/xsa/%s includes %s, which its row of docs/ARCHITECTURE.md's modules table "
                                "does not name" % (module, library))
            for library in sorted(named - used):
                problems.append("docs/ARCHITECTURE.md: the modules table names %s for %s, whose files never "
                                "include it" % (library, module))
    for name, (source, libs) in sorted(executables.items()):
        linked = set().union(*(libraries[lib] for lib in libs)) if libs else set()
        for number, line in includes(os.path.join(src, source)):
            match = XSA_INCLUDE.search(line)
            if match and match.group(1) not in linked:
                problems.append("%s:%d: %s includes module %s, which none of its libraries (%s) holds"
                                % (source, number, name, match.group(1), ", ".join(sorted(libs))))
        worlds = {world for world, lib in WORLDS.items() if lib in libs}
        if {"LibTorch", "sentencepiece"} <= worlds:
            problems.append("CMakeLists.txt: %s links both LibTorch and sentencepiece" % name)
    return problems, rules


def self_test(src, rules):
    """A copy of the tree with one wrong include (report -> sweep, or another pair the table forbids) must fail."""
    module = next(m for m in ("report", "model") + tuple(sorted(rules)) if m in rules)
    forbidden = sorted(set(rules) - rules[module][0] - {module}, key=lambda m: (m != "sweep", m))
    if not forbidden:
        return "self-test: %s may include every module, nothing to break" % module
    work = tempfile.mkdtemp(prefix="xsa-arch-")
    try:
        copy = os.path.join(work, "src-copy")
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("build*", ".git", "results", "data", "notebooks"))
        folder = os.path.join(copy, "src", "xsa", module)
        victim = os.path.join(folder, sorted(f for f in os.listdir(folder) if f.endswith(".cpp"))[0])
        with open(victim, "a", encoding="utf-8") as f:
            f.write('\n#include "xsa/%s/whatever.h"\n' % forbidden[0])
        problems, _ = check(copy)
        wanted = [p for p in problems if "includes %s" % forbidden[0] in p]
        if not wanted:
            return "self-test FAILED: a %s -> %s include was not caught (%s)" % (module, forbidden[0], problems)
        print("self-test: a deliberate include of %s in %s is caught:\n  %s"
              % (forbidden[0], os.path.relpath(victim, copy), wanted[0]))
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--self-test"):
        print("usage: check_architecture.py SOURCE_DIR [--self-test]", file=sys.stderr)
        return 2
    src = sys.argv[1]
    problems, rules = check(src)
    for problem in problems:
        print("FAILED: " + problem)
    files = sum(len(files) for _, _, files in os.walk(os.path.join(src, "src")))
    print("check_architecture: %d modules, %d files under src/: %d violation(s)" % (len(rules), files, len(problems)))
    failed = bool(problems)
    if len(sys.argv) == 3:
        message = self_test(src, rules)
        if message:
            print(message)
            failed = failed or message.startswith("self-test FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
