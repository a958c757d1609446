"""Writes the inputs of test/e2e/threads.test (Python's standard library only: CI has no
torch): x f32[512, 256], w f32[256, 256], c f32[8, 8, 32, 32] and k f32[16, 8, 3, 3],
uniform in [-3, 3) from a seeded generator.

    python3 make_inputs.py OUT.safetensors
"""
import json
import random
import struct
import sys


def main(out):
    rng = random.Random(1234)
    tensors = {"x": [512, 256], "w": [256, 256], "c": [8, 8, 32, 32], "k": [16, 8, 3, 3]}
    header, blobs, offset = {}, [], 0
    for name, shape in tensors.items():
        count = 1
        for size in shape:
            count *= size
        blob = struct.pack(f"<{count}f", *(rng.uniform(-3, 3) for _ in range(count)))
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    main(sys.argv[1])
