"""The .trace container (docs/trace-format.md): the fixed header and the data section.

No torch here: the reader and `--dump` use this module on any Python 3.
"""

import json
import struct

MAGIC = b"TGCTRACE"
VERSION = (1, 0)
PRODUCER = "tgc-capture 0.1"
#: magic, major, minor, header_size, data_offset.
FIXED = struct.Struct("<8sIIQQ")
ALIGN = 64
#: The Python versions whose bytecode the format supports (the header records which).
SUPPORTED_PYTHON = ((3, 11), (3, 12), (3, 13))


class TraceFormatError(Exception):
    """A malformed .trace file."""


class UnsupportedPythonError(Exception):
    """tgc-capture runs on a Python whose bytecode the format does not support."""


def align(n, to=ALIGN):
    return (n + to - 1) // to * to


def check_python(version_info=None, executable=None):
    """Raises UnsupportedPythonError unless this is CPython 3.11, 3.12 or 3.13."""
    import platform
    import sys

    info = version_info or sys.version_info
    impl = platform.python_implementation()
    if tuple(info[:2]) not in SUPPORTED_PYTHON or impl != "CPython":
        versions = ", ".join("%d.%d" % v for v in SUPPORTED_PYTHON)
        raise UnsupportedPythonError(
            "tgc-capture needs CPython %s: the .trace format %d.%d holds the bytecode of "
            "those only, and this is %s %d.%d.%d (%s). Run it with one of them that has "
            "torch, e.g. `/path/to/python3.12 tools/tgc-capture/tgc-capture ...`"
            % ((versions,) + VERSION + (impl, info[0], info[1], info[2],
                                        executable or sys.executable)))


def encode_header(header):
    """The JSON header as the file stores it: sorted keys, no spaces, UTF-8."""
    return json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def write_trace(path, header, blobs):
    """Writes `header` (whose `blobs` key this fills in) and the `blobs` (bytes-like);
    returns the header written."""
    table = []
    offset = 0
    for blob in blobs:
        table.append({"offset": offset, "size": len(blob)})
        offset = align(offset + len(blob))
    header = dict(header)
    header["blobs"] = table
    text = encode_header(header)
    data_offset = align(FIXED.size + len(text))
    with open(path, "wb") as f:
        f.write(FIXED.pack(MAGIC, VERSION[0], VERSION[1], len(text), data_offset))
        f.write(text)
        f.write(b"\0" * (data_offset - FIXED.size - len(text)))
        position = 0
        for entry, blob in zip(table, blobs):
            f.write(b"\0" * (entry["offset"] - position))
            f.write(blob)
            position = entry["offset"] + len(blob)
    return header


def read_fixed(data):
    """(major, minor, header_size, data_offset) of the file's bytes, checked."""
    if len(data) < FIXED.size:
        raise TraceFormatError("file too short for a .trace header (%d bytes)" % len(data))
    magic, major, minor, header_size, data_offset = FIXED.unpack_from(data)
    if magic != MAGIC:
        raise TraceFormatError("not a .trace file (bad magic %r)" % magic)
    if major != VERSION[0]:
        raise TraceFormatError("unsupported .trace major version %d (this reader reads %d)"
                               % (major, VERSION[0]))
    if data_offset % ALIGN or data_offset < FIXED.size + header_size or data_offset > len(data):
        raise TraceFormatError("bad data_offset %d" % data_offset)
    return major, minor, header_size, data_offset
