"""Writes the object of the `gpu.binary` in an MLIR file (tgc compile --compile-to=gpu)
to a file, for cuobjdump: gpu_binary.py IN.mlir OUT.

MLIR prints the object as a string literal: bytes outside printable ASCII as `\\XX` (two
hex digits), and `\\\\`, `\\"`, `\\n`, `\\t` escapes.
"""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
match = re.search(r'gpu\.binary @\w+\s+\[#gpu\.object<.*?, "((?:[^"\\]|\\.)*)">\]', text, re.S)
if not match:
    sys.exit("error: %s has no gpu.binary" % sys.argv[1])
literal = match.group(1)
escapes = {"\\": 0x5C, '"': 0x22, "n": 0x0A, "t": 0x09}
data = bytearray()
i = 0
while i < len(literal):
    if literal[i] != "\\":
        data += literal[i].encode("utf-8")
        i += 1
    elif literal[i + 1] in escapes:
        data.append(escapes[literal[i + 1]])
        i += 2
    else:
        data.append(int(literal[i + 1:i + 3], 16))
        i += 3
open(sys.argv[2], "wb").write(data)
