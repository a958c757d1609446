#!/usr/bin/env python3
"""Make small malformed or unusual .pt2 archives for the reader's error tests.

    python3 test/Capture/Inputs/make_archives.py

Each archive is test/fixtures/mlp/train.pt2 (or mutate/train.pt2) with one change, written
with Python's zipfile (stored members, same names), so only the standard library is
needed. Output, next to this script:

  legacy_layout.pt2     the layout torch <= 2.7 wrote (serialized_exported_program.json)
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

import json
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures")


def read_members(model):
    with zipfile.ZipFile(os.path.join(FIXTURES, model, "train.pt2")) as z:
        return [(info.filename, z.read(info)) for info in z.infolist()]


def write_members(name, members):
    with zipfile.ZipFile(os.path.join(HERE, name), "w", zipfile.ZIP_STORED) as z:
        for member, data in members:
            z.writestr(zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)), data)


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
    program = next(data for member, data in mlp if member.endswith("models/model.json"))
    write_members("legacy_layout.pt2",
                  [("serialized_exported_program.json", program), ("version", b"8.2")])
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
