#!/usr/bin/env python3
"""Checks that tgc's layers point down (docs/design.md, "Layers").

Every C/C++ file under lib/ and include/tgc/ belongs to a component (the folder under lib/ or
include/tgc/; lib/Frontend/<Library> for the frontends). A component may include its own
headers and those of the components listed for it in LAYERS below, nothing else of tgc's.
The CMake link edges between tgc's libraries are checked against the same table. Prints
one line per violation and exits 1 if there is any.

Usage: check_layers.py <source root>
"""

import os
import re
import sys

# Component -> the components it may use. Lower layers come first.
LAYERS = {
    "Runtime": [],
    "Support": [],
    "Dialect": [],
    "Frontend/Common": ["Dialect"],
    "Frontend/Export": ["Frontend/Common", "Dialect"],
    "Frontend/Python": ["Frontend/Common", "Dialect"],
    "Frontend/Trace": ["Frontend/Python", "Frontend/Common", "Dialect"],
    "Transforms": ["Dialect"],
    # Conversion passes are declared with the others in dialects/Passes.td, so their
    # declarations come from tgc/Transforms/Passes.h.
    "Conversion": ["Transforms", "Dialect"],
    "Pipeline": ["Conversion", "Transforms", "Dialect"],
    "Target": ["Runtime", "Dialect"],
    "Runner": ["Runtime", "Support", "Dialect"],
}

# Library name -> component, for the CMake link check.
LIBRARY_PREFIX = "TGC"

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_SUFFIXES = (".h", ".c", ".cpp", ".def", ".inc")


def component_of(relpath):
    """The component of a file under lib/ or include/tgc/, or None."""
    parts = relpath.split(os.sep)
    if parts[0] == "lib":
        rest = parts[1:]
    elif parts[:2] == ["include", "tgc"]:
        rest = parts[2:]
    else:
        return None
    if len(rest) < 2:
        return None
    if rest[0] == "Frontend":
        return "Frontend/" + rest[1] if len(rest) > 2 else None
    return rest[0]


def included_component(path):
    """The component a quoted include names, None for a non-tgc header (or a header of the
    includer's own folder, included by its bare name)."""
    if path.startswith("tgc/"):
        parts = path.split("/")
        if parts[1] == "Frontend" and len(parts) > 3:
            return "Frontend/" + parts[2]
        return parts[1]
    if path.startswith("Frontend/"):
        return "/".join(path.split("/")[:2])
    return None


def check_includes(root, problems):
    for top in ("lib", os.path.join("include", "tgc")):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                component = component_of(rel)
                if component is None:
                    continue
                if component not in LAYERS:
                    problems.append(f"{rel}: component '{component}' is not in the layer table")
                    continue
                with open(full, encoding="utf-8") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    path = match.group(1)
                    if path.startswith("../"):
                        problems.append(f"{rel}: includes '{path}' by a relative path")
                        continue
                    used = included_component(path)
                    if used is None or used == component or used in LAYERS[component]:
                        continue
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append(f"{rel}:{line}: {component} includes '{path}' of {used}")


def library_components(root):
    """TGC library name -> component, from the add_library / add_mlir_library /
    tgc_add_frontend_library calls of lib/**/CMakeLists.txt."""
    libraries = {}
    define = re.compile(r"(?:add_library|add_mlir_library|tgc_add_frontend_library)\(\s*(\w+)")
    for dirpath, _, files in os.walk(os.path.join(root, "lib")):
        if "CMakeLists.txt" not in files:
            continue
        component = component_of(os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), root))
        with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
            for name in define.findall(f.read()):
                if name.startswith(LIBRARY_PREFIX) or name == "tgc_runtime":
                    libraries[name] = component
    return libraries


def check_links(root, problems):
    libraries = library_components(root)
    call = re.compile(r"(add_library|add_mlir_library|tgc_add_frontend_library|"
                      r"target_link_libraries)\(([^)]*)\)", re.S)
    for dirpath, _, files in os.walk(os.path.join(root, "lib")):
        if "CMakeLists.txt" not in files:
            continue
        rel = os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), root)
        with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
            text = f.read()
        for _, body in call.findall(text):
            words = re.sub(r"#[^\n]*", "", body).split()
            if not words or words[0] not in libraries:
                continue
            owner = libraries[words[0]]
            for word in words[1:]:
                used = libraries.get(word)
                if used and used != owner and used not in LAYERS.get(owner, []):
                    problems.append(f"{rel}: {words[0]} ({owner}) links {word} ({used})")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = sys.argv[1]
    problems = []
    check_includes(root, problems)
    check_links(root, problems)
    for problem in problems:
        print("error: " + problem)
    if not problems:
        print("layers: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
