#!/usr/bin/env python3
"""Checks that the runtime's C files depend on each other one way.

The layers are declared in the directory's Internal.h, highest first, as comment
lines of the form `layer N: A.c B.c`. A file may use the functions of its own file
and of files in lower layers (higher N); a use of a function defined in a file of the
same layer or a higher one is an error, as is a .c file that no layer names.

    layering.py DIR        check DIR (lib/Runtime); exit 1 listing each bad edge
    layering.py --graph DIR
                           also print every edge between files

A "use" is any mention of a function's name inside a function body (a call, or its
address taken), resolved to a non-static definition in another file. The C is read
with a small tokenizer (comments, strings and preprocessor lines dropped), which is
enough for the runtime's plain C11.
"""
import os
import re
import sys

LAYER_LINE = re.compile(r"\blayer\s+(\d+):((?:\s+\w+\.c)+)")
TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")
NOT_FUNCTIONS = {"if", "for", "while", "switch", "return", "sizeof", "_Alignof",
                 "_Static_assert", "__attribute__", "defined", "_Generic"}


def strip_source(text):
    """`text` without comments, string and character literals, or preprocessor lines."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A directive, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            i += 1
            while i < n and text[i] != c:
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append(" 0 ")
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return "".join(out)


def parse(text):
    """(definitions, uses) of one C file: {name: is_static} of its functions, and
    the identifiers mentioned in function bodies and in initializers (not in struct
    definitions, where a member may share a function's name)."""
    tokens = TOKEN.findall(strip_source(text))
    definitions, uses = {}, set()
    depth = 0
    start = 0  # first token of the current top-level declaration
    counting = False  # whether identifiers here are uses
    for i, t in enumerate(tokens):
        if depth == 0:
            if t in (";", "}"):
                start, counting = i + 1, False
            elif t == "=":
                counting = True
            elif t == "{":
                name = definition_name(tokens, start, i)
                if name:
                    definitions[name] = "static" in tokens[start:i]
                counting = counting or name is not None
                depth = 1
            elif counting and is_use(tokens, i):
                uses.add(t)
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                start, counting = i + 1, False
        elif counting and is_use(tokens, i):
            uses.add(t)
    return definitions, uses


def is_use(tokens, i):
    """Whether token i is an identifier that can name a function (not a member)."""
    return re.match(r"[A-Za-z_]", tokens[i]) is not None and tokens[i - 1] not in (".", "->")


def definition_name(tokens, start, brace):
    """The function a top-level `{` at `brace` opens the body of, or None (a struct,
    enum or initializer). The declarator is `name ( ... )` right before the brace."""
    if brace == 0 or tokens[brace - 1] != ")":
        return None
    level = 0
    for j in range(brace - 1, start - 1, -1):
        if tokens[j] == ")":
            level += 1
        elif tokens[j] == "(":
            level -= 1
            if level == 0:
                name = tokens[j - 1] if j > start else None
                if name and re.match(r"[A-Za-z_]\w*$", name) and name not in NOT_FUNCTIONS:
                    return name
                return None
    return None


def read_layers(header):
    """{file: layer number} from the `layer N:` lines of `header`."""
    layers = {}
    with open(header) as f:
        for match in LAYER_LINE.finditer(f.read()):
            for name in match.group(2).split():
                layers[name] = int(match.group(1))
    return layers


def check(directory, show_graph=False):
    """Returns the list of error messages for `directory` (empty: one-way)."""
    header = os.path.join(directory, "Internal.h")
    if not os.path.exists(header):
        return [f"{header}: not found (it declares the layers)"]
    layers = read_layers(header)
    if not layers:
        return [f"{header}: declares no `layer N: File.c ...` lines"]
    files = sorted(f for f in os.listdir(directory) if f.endswith(".c"))
    errors = [f"{f}: in no layer of Internal.h" for f in files if f not in layers]
    errors += [f"{f}: named by Internal.h but not in {directory}"
               for f in sorted(layers) if f not in files]
    parsed = {}
    for f in files:
        with open(os.path.join(directory, f)) as source:
            parsed[f] = parse(source.read())
    owner = {}  # external function -> defining file
    for f, (definitions, _) in parsed.items():
        for name, is_static in definitions.items():
            if not is_static:
                owner[name] = f
    edges = {}
    for f, (definitions, uses) in sorted(parsed.items()):
        for name in sorted(uses):
            callee = owner.get(name)
            if callee and callee != f and name not in definitions:
                edges.setdefault((f, callee), []).append(name)
    for (caller, callee), names in sorted(edges.items()):
        if show_graph:
            print(f"{caller} -> {callee}: {', '.join(names)}")
        if caller not in layers or callee not in layers:
            continue
        if layers[callee] <= layers[caller]:
            relation = "the same layer" if layers[callee] == layers[caller] else "a higher layer"
            errors.append(f"{caller} (layer {layers[caller]}) uses {', '.join(names)} of "
                          f"{callee} (layer {layers[callee]}), {relation}")
    return errors


def main(argv):
    show_graph = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    errors = check(args[0], show_graph)
    for e in errors:
        print(f"error: {e}")
    if errors:
        print("the runtime's files must depend one way (see the layers in Internal.h)")
        return 1
    print(f"{args[0]}: one-way")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
