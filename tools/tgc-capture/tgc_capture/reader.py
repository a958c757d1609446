"""A reference reader for .trace files: the JSON header and the blobs, checked.

No torch needed. `load(path)` returns a Trace; tests and `tgc-capture --dump` use it.
"""

import json

from . import format as fmt


class Trace:
    """An opened .trace: `header` (the parsed JSON), `blob(i)`, `object(i)`, `code(id)`."""

    def __init__(self, data):
        self.data = data
        self.major, self.minor, header_size, self.data_offset = fmt.read_fixed(data)
        try:
            self.header = json.loads(data[fmt.FIXED.size:fmt.FIXED.size + header_size]
                                     .decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise fmt.TraceFormatError("bad JSON header: %s" % e)
        if self.header.get("format") != "tgc-trace":
            raise fmt.TraceFormatError("header `format` is not tgc-trace")
        for i, entry in enumerate(self.header.get("blobs", [])):
            start = self.data_offset + entry["offset"]
            if entry["offset"] % fmt.ALIGN or start + entry["size"] > len(data):
                raise fmt.TraceFormatError("blob %d lies outside the file or is unaligned" % i)

    @property
    def objects(self):
        return self.header["objects"]

    def object(self, index):
        if not 0 <= index < len(self.objects):
            raise fmt.TraceFormatError("object id %d out of range" % index)
        return self.objects[index]

    def blob(self, index):
        entry = self.header["blobs"][index]
        start = self.data_offset + entry["offset"]
        return self.data[start:start + entry["size"]]

    def deref(self, value):
        """The object a `{"ref": N}` value names (other values are returned as they are)."""
        if isinstance(value, dict) and set(value) == {"ref"}:
            return self.object(value["ref"])
        return value

    def code(self, index):
        """The code object of `code` object `index` (needs the capturing Python version)."""
        import marshal
        record = self.object(index)
        if record.get("kind") != "code":
            raise fmt.TraceFormatError("object %d is a %s, not code" % (index, record.get("kind")))
        return marshal.loads(self.blob(record["blob"]))

    def find(self, kind, **keys):
        """Ids of the objects of `kind` whose keys equal `keys`."""
        return [i for i, o in enumerate(self.objects)
                if o.get("kind") == kind and all(o.get(k) == v for k, v in keys.items())]


def load(path):
    with open(path, "rb") as f:
        return Trace(f.read())
