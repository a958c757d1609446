"""Writes the bytecode test inputs of BytecodeTest.cpp with the CPython running it: 3.12
into this directory, 3.11 and 3.13 into py311/ and py313/.

Each program becomes <name>.bin (`marshal.dumps` of its module code object) and
<name>.json (what CPython itself says about every code object in it: fields, constants,
`dis` instructions with EXTENDED_ARG folded, `co_lines()` per code unit, the exception
table), so the C++ decoder is checked against CPython's own decoding. opcodes.json is
`opcode`'s table. values.json (3.12 only: the three versions share marshal's format) holds
single marshalled values (and malformed ones) with the value `marshal.loads` returns.

Run: python3.11, python3.12 and python3.13 test/unit/Inputs/bytecode/make_inputs.py
"""
import dis
import json
import marshal
import math
import opcode
import os
import sys
import types

MINOR = sys.version_info[1]
assert sys.version_info[:2] in ((3, 11), (3, 12), (3, 13)), "run with CPython 3.11 to 3.13"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = HERE if MINOR == 12 else os.path.join(HERE, "py3%d" % MINOR)

PROGRAMS = {
    "constants": '''
a, b, c, d = None, True, False, ...
e, f, g = 7, -2**31, 2**40
h, i, j, k = 2**63, -2**63, 2**100, -(3**80)
l, m, n, o, p = 1.5, -0.0, 1e999, 2j, 1+2.5j
q, r, s, t = "abc", "h\\u00e9llo", "\\u65e5\\u672c", b"\\x00\\xff"
u = ("x", 1, (2.5, None))
v = q in {1, 2, 3}
v2 = q in {"b", "a", "c"}
w = "a" * 300
''',
    "closures": '''
import math
def outer(a, b=2, /, *args, c, d=4, **kw):
    x = a + b
    def inner(y):
        nonlocal x
        x += y
        return x * math.pi
    return inner
square = lambda q: q ** 2
class K(object):
    def method(self, z):
        print(len(z))
        return super().method(z) + self.attr.foo(z)
''',
    "loops": '''
def loops(xs, n):
    total = 0
    for x in xs:
        if x < 0:
            continue
        if x > 100:
            break
        total += x
    else:
        total = -1
    i = 0
    while i < n:
        i += 1
        for y in range(i):
            total += y
    return total
def matcher(p):
    match p:
        case [a, b]:
            return a
        case {"k": v}:
            return v
        case _:
            return None
''',
    "exceptions": '''
def guarded(f, x):
    try:
        y = f(x)
    except ValueError as e:
        y = str(e)
    except (TypeError, KeyError):
        y = None
    finally:
        x = 0
    with open(f) as fh:
        y = fh.read()
    return y
def gen(n):
    yield from range(n)
    for i in range(n):
        yield i
''',
    # Keyword calls, defaults and closures of nested functions, f-string conversions,
    # `and`/`or` values, chained comparisons, unary operators, a comprehension and
    # `*args` calls: where 3.11 and 3.13 differ most from 3.12.
    "calls": '''
def calls(f, x, y=1, *args, z=2, **kw):
    g = lambda a, b=3, *, c=4: a + b + c + x
    s = f"{x!r:>10} {y!s} {z} {x:{y}}"
    t = x < y <= z and (x or y)
    u = [v * 2 for v in range(x) if v is not None]
    return f(x, y, *args, z=z, w=t, **kw), g(1, c=5), s, u, not x, -x, +x, ~y
''',
    "extended": (
        "def many(x):\n" + "".join(f"    x = x + {i}.5\n" for i in range(260)) +
        "    return x\n"
        "def long_jump(x):\n    if x:\n" + "        x = x + 1\n" * 70 + "    return x\n"
        "def long_loop(x):\n    while x:\n" + "        x = x - 1\n" * 70 + "    return x\n"
    ),
}


def encode(value, codes):
    """A constant as BytecodeTest.cpp expects it: {"Kind": payload}."""
    if value is None:
        return {"None": None}
    if value is Ellipsis:
        return {"Ellipsis": None}
    if value is StopIteration:
        return {"StopIteration": None}
    if isinstance(value, bool):
        return {"Bool": value}
    if isinstance(value, int):
        return {"Int": str(value)}
    if isinstance(value, float):
        return {"Float": repr(value)}
    if isinstance(value, complex):
        return {"Complex": [repr(value.real), repr(value.imag)]}
    if isinstance(value, str):
        return {"Str": value}
    if isinstance(value, bytes):
        return {"Bytes": value.hex()}
    if isinstance(value, tuple):
        return {"Tuple": [encode(item, codes) for item in value]}
    if isinstance(value, frozenset):
        # Sorted so that the file does not depend on string hashing.
        items = [encode(item, codes) for item in value]
        return {"FrozenSet": sorted(items, key=json.dumps)}
    if isinstance(value, types.CodeType):
        return {"Code": codes.index(value)}
    raise TypeError(type(value))


def all_codes(code):
    """The code object and its nested ones, depth first in constant order."""
    result = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            result += all_codes(const)
    return result


def localsplus_names(code):
    names = []
    while True:
        try:
            names.append(code._varname_from_oparg(len(names)))
        except (IndexError, ValueError):
            return names


def instructions(code):
    """dis's instructions with EXTENDED_ARG folded into the next one."""
    result, start = [], None
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            start = ins.offset if start is None else start
            continue
        jumps = ins.opcode in opcode.hasjrel
        result.append({
            "op": ins.opname,
            "arg": ins.arg if ins.arg is not None else 0,
            "offset": ins.offset,
            "start": ins.offset if start is None else start,
            "line": ins.positions.lineno if ins.positions.lineno is not None else -1,
            "jump": ins.argval if jumps else None,
        })
        start = None
    return result


def describe(code, codes):
    lines = [-1] * (len(code.co_code) // 2)
    for start, end, line in code.co_lines():
        for unit in range(start // 2, end // 2):
            lines[unit] = -1 if line is None else line
    return {
        "name": code.co_name, "qualname": code.co_qualname, "filename": code.co_filename,
        "firstlineno": code.co_firstlineno, "argcount": code.co_argcount,
        "posonlyargcount": code.co_posonlyargcount,
        "kwonlyargcount": code.co_kwonlyargcount, "stacksize": code.co_stacksize,
        "flags": code.co_flags, "code": code.co_code.hex(),
        "consts": [encode(const, codes) for const in code.co_consts],
        "names": list(code.co_names), "localsplusnames": localsplus_names(code),
        "varnames": list(code.co_varnames), "cellvars": list(code.co_cellvars),
        "freevars": list(code.co_freevars),
        "instructions": instructions(code), "lines": lines,
        "exceptions": [[e.start, e.end, e.target, e.depth, e.lasti]
                       for e in dis._parse_exception_table(code)],
    }


def value_cases():
    """Single marshalled values: (name, bytes, expected encoding or {"error": text})."""
    shared = ("shared" * 3,)
    cases = [(repr(v), marshal.dumps(v), v) for v in [
        None, True, False, Ellipsis, StopIteration, 0, -1, 2**31 - 1, -2**31, 2**31,
        2**62, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**100, -(3**80), 1.5, -0.0, 1e308,
        math.inf, 2 - 3.5j, "abc", "a" * 300, "h\u00e9llo", "\u65e5\u672c", b"\x00\xff",
        (), (1,), (1, "a", (2.5, None)), tuple(range(300)), frozenset({1, 2}), frozenset(),
        ]]
    cases += [("shared references", marshal.dumps((shared, shared, shared[0])),
               (shared, shared, shared[0]))]
    cases += [("text float", marshal.dumps(1.5, 1), 1.5),
              ("text complex", marshal.dumps(2 - 3.5j, 1), 2 - 3.5j)]
    errors = [
        ("list", marshal.dumps([1]), "list"),
        ("dict", marshal.dumps({}), "dict"),
        ("set", marshal.dumps({1}), "set"),
        ("empty", b"", "offset 0: truncated"),
        ("trailing bytes", b"NN", "offset 1: 1 trailing bytes"),
        ("unknown type", b"Q", "unknown type code 0x51"),
        ("reference out of range", b"r\x05\x00\x00\x00", "invalid reference 5"),
        ("reference to itself", b"\xa9\x01r\x00\x00\x00\x00", "still being read"),
        ("null", b"0", "NULL object"),
        ("flagged singletons take no reference slot", b"\xa9\x03\xcei\x01\x00\x00\x00r\x01\x00\x00\x00",
         "invalid reference 1"),
        ("long digit out of range", b"l\x01\x00\x00\x00\x00\x80", "digit out of range"),
        ("unnormalized long", b"l\x02\x00\x00\x00\x01\x00\x00\x00", "unnormalized"),
        ("truncated string", b"a\x05\x00\x00\x00ab", "offset 5: truncated"),
        ("negative size", b"(\xff\xff\xff\xff", "negative"),
        ("bad text float", b"f\x03abc", "'abc' is not a float"),
    ]
    result = []
    for name, data, value in cases:
        assert marshal.loads(data) == value or value != value
        result.append({"name": name, "hex": data.hex(), "expect": encode(value, [])})
    for name, data, message in errors:
        result.append({"name": name, "hex": data.hex(), "expect": {"error": message}})
    return result


def cache_entries(name, value):
    table = opcode._inline_cache_entries
    return table.get(name, 0) if isinstance(table, dict) else table[value]


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, source in PROGRAMS.items():
        code = compile(source, "f.py", "exec")
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(marshal.dumps(code))
        codes = all_codes(code)
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump({"codes": [describe(c, codes) for c in codes]}, f,
                      ensure_ascii=False)
            f.write("\n")
    real = {name: value for name, value in opcode.opmap.items()
            if value < 256 and not name.startswith("INSTRUMENTED_")}
    with open(os.path.join(OUT, "opcodes.json"), "w") as f:
        json.dump({"opmap": real,
                   "caches": {name: cache_entries(name, value) for name, value in real.items()},
                   "hasjrel": [opcode.opname[op] for op in opcode.hasjrel if op in real.values()]},
                  f, indent=1)
        f.write("\n")
    if MINOR != 12:
        return
    with open(os.path.join(HERE, "values.json"), "w") as f:
        json.dump(value_cases(), f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
