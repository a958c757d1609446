#!/usr/bin/env python3
"""Make small malformed or unusual .pt2 archives for the reader's error tests.

    python3 test/Frontend/Export/Inputs/make_archives.py

Each archive is test/fixtures/mlp/train.pt2 (or mutate/train.pt2, or the torch 2.6 export
test/fixtures/torch2.6/mlp/train.pt2 for the legacy_*) with one change, written with
Python's zipfile (stored members, same names), so only the standard library is needed.
Output, next to this script:

  legacy_no_weights.pt2       torch 2.6's layout without serialized_state_dict.pt
  legacy_bad_global.pt2       the state dict's pickle calls builtins.eval instead of
                              torch._utils._rebuild_parameter
  legacy_bad_opcode.pt2       the state dict's pickle has a POP where its first BINPUT was
  legacy_short_storage.pt2    the state dict's storage data/0 lacks its last 4 bytes
  legacy_missing_storage.pt2  the state dict's storage data/1 removed
  legacy_not_zip.pt2          serialized_state_dict.pt is not a zip
  legacy_schema_7.pt2         schema_version 7.3, as torch 2.5 wrote
  legacy_schema_int.pt2       schema_version 2, a plain integer, as torch 2.2 wrote
  meta_mismatch.pt2     tensor_values["linear"] says [4, 33] where linear gives [4, 32]
  unknown_argument.pt2  relu gets a keyword argument 'frobnicate'
  missing_weight.pt2    data/weights/weight_0 removed
  unsupported_size.pt2  x's batch size is Max(s0, 2)
  missing_key.pt2       graph.tensor_values removed
  shared_storage.pt2    fc2.bias is a view of fc1.bias's storage (offset 4) and fc2.weight
                        a transposed view of its own storage
  bare_infinity.pt2     mutate's mul_(0.9) as mul_(-inf), written as the bare token
                        -Infinity (as older torch releases did)
"""

import io
import json
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures")


def read_members(model):
    with zipfile.ZipFile(os.path.join(FIXTURES, model, "train.pt2")) as z:
        return [(info.filename, z.read(info)) for info in z.infolist()]


def zip_bytes(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        for member, data in members:
            z.writestr(zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


def write_members(name, members):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(zip_bytes(members))


def edit_state_dict(members, edit):
    """The legacy archive with serialized_state_dict.pt's members passed through `edit`."""
    out = []
    for member, data in members:
        if member == "serialized_state_dict.pt":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                inner = [(info.filename, z.read(info)) for info in z.infolist()]
            data = zip_bytes(edit(inner))
        out.append((member, data))
    return out


def edit_pickle(edit):
    return lambda inner: [(m, edit(d) if m.endswith("/data.pkl") else d) for m, d in inner]


def edit_json(members, suffix, edit):
    out = []
    for member, data in members:
        if member.endswith(suffix):
            obj = json.loads(data)
            edit(obj)
            data = json.dumps(obj).encode()
        out.append((member, data))
    return out


def edit_graph(edit):
    return lambda program: edit(program["graph_module"]["graph"])


def set_linear_size(graph):
    graph["tensor_values"]["linear"]["sizes"][1] = {"as_int": 33}


def add_relu_argument(graph):
    relu = next(n for n in graph["nodes"] if n["target"].endswith("relu.default"))
    relu["inputs"].append({"name": "frobnicate", "arg": {"as_int": 1}, "kind": 2})


def set_max_size(graph):
    expr = "Max(Symbol('s0', positive=True, integer=True), Integer(2))"
    graph["tensor_values"]["x"]["sizes"][0] = {"as_expr": {"expr_str": expr, "hint": None}}


def share_storage(config):
    entries = config["config"]
    bias = entries["fc2.bias"]["tensor_meta"]
    entries["fc2.bias"]["path_name"] = entries["fc1.bias"]["path_name"]
    bias["storage_offset"] = {"as_int": 4}
    weight = entries["fc2.weight"]["tensor_meta"]
    weight["strides"] = [{"as_int": 1}, {"as_int": 8}]


def main():
    mlp = read_members("mlp")
    legacy = read_members("torch2.6/mlp")
    write_members("legacy_no_weights.pt2",
                  [(m, d) for m, d in legacy if m != "serialized_state_dict.pt"])
    write_members("legacy_bad_global.pt2", edit_state_dict(legacy, edit_pickle(
        lambda p: p.replace(b"torch._utils\n_rebuild_parameter\n", b"builtins\neval\n"))))
    write_members("legacy_bad_opcode.pt2", edit_state_dict(legacy, edit_pickle(
        lambda p: p.replace(b"q\x00", b"0\x00", 1))))
    write_members("legacy_short_storage.pt2", edit_state_dict(legacy, lambda inner: [
        (m, d[:-4] if m.endswith("/data/0") else d) for m, d in inner]))
    write_members("legacy_missing_storage.pt2", edit_state_dict(legacy, lambda inner: [
        (m, d) for m, d in inner if not m.endswith("/data/1")]))
    legacy_json = "serialized_exported_program.json"
    write_members("legacy_schema_7.pt2", edit_json(legacy, legacy_json, lambda p: p.update(
        schema_version={"major": 7, "minor": 3})))
    write_members("legacy_schema_int.pt2", edit_json(legacy, legacy_json, lambda p: p.update(
        schema_version=2)))
    write_members("legacy_not_zip.pt2", [
        (m, b"not a zip" if m == "serialized_state_dict.pt" else d) for m, d in legacy])
    model_json = "models/model.json"
    write_members("meta_mismatch.pt2", edit_json(mlp, model_json, edit_graph(set_linear_size)))
    write_members("unknown_argument.pt2",
                  edit_json(mlp, model_json, edit_graph(add_relu_argument)))
    write_members("missing_weight.pt2",
                  [(m, d) for m, d in mlp if not m.endswith("data/weights/weight_0")])
    write_members("unsupported_size.pt2", edit_json(mlp, model_json, edit_graph(set_max_size)))
    write_members("missing_key.pt2",
                  edit_json(mlp, model_json, edit_graph(lambda g: g.pop("tensor_values"))))
    write_members("shared_storage.pt2",
                  edit_json(mlp, "data/weights/model_weights_config.json", share_storage))
    mutate = read_members("mutate")
    write_members("bare_infinity.pt2",
                  [(m, d.replace(b'{"as_float": 0.9}', b'{"as_float": -Infinity}')
                    if m.endswith(model_json) else d) for m, d in mutate])


if __name__ == "__main__":
    main()
