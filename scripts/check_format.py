#!/usr/bin/env python3
"""Checks that tgc's C and C++ is formatted by the repository's .clang-format.

The files are the tracked .c/.cpp/.h files of the folders .clang-format names (test
inputs excluded); each one clang-format would change is reported as an `error:` line
with clang-format's own diagnostics, and the exit code is 1. Fix with
`clang-format-22 -i <file>`.

Usage: check_format.py <clang-format> <source root>
"""

import subprocess
import sys

FOLDERS = ("lib/", "include/", "tools/", "test/unit/", "test/tools/", "examples/", "fuzz/")
SUFFIXES = (".c", ".cpp", ".h")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    clang_format, root = sys.argv[1:]
    tracked = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                             text=True).stdout.split()
    files = [f for f in tracked if f.startswith(FOLDERS) and f.endswith(SUFFIXES)]
    unformatted = []
    for name in files:
        result = subprocess.run([clang_format, "--dry-run", "-Werror", name], cwd=root,
                                capture_output=True, text=True)
        if result.returncode != 0:
            unformatted.append(name)
            print(f"error: {name} is not formatted (clang-format -i {name})")
            print(result.stderr, end="")
    print(f"format: {len(files) - len(unformatted)} of {len(files)} files formatted")
    return 1 if unformatted else 0


if __name__ == "__main__":
    sys.exit(main())
