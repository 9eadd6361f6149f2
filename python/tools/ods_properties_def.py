#!/usr/bin/env python3
"""Prints the KILN_ODS_OP lines of src/parse/bytecode/ods_ops.def.

MLIR's ODS-generated writer stores an op's inherent attributes (its
properties) sorted by name, required ones as an attribute reference and
optional or default-valued ones as `(index << 1) | present`; attribute-sized
operand and result segment sizes are dense i32 arrays at their place in that
order before bytecode version 6, and sparse arrays after the attributes from
version 6. The same facts are in the Python op classes MLIR generates from
the .td files, which jaxlib ships: `attributes["x"] = ...` is required,
`if x is not None: attributes["x"]` is optional, and
`_ODS_OPERAND_SEGMENTS = [...]` marks segment sizes. This reads those
classes from an installed jaxlib and prints one line per op that has
properties:

    .venv/bin/python python/tools/ods_properties_def.py stablehlo chlo func

Review the diff against ods_ops.def by hand: the file also holds ops of
other dialects (builtin, sdy) and comments.
"""

import importlib.util
import os
import re
import sys


def op_classes(source):
  """(op name, body) for each generated OpView class of a module's source."""
  pattern = re.compile(r"^class (\w+)\(_ods_ir\.OpView\):(.*?)(?=^class |\Z)",
                       re.S | re.M)
  for match in pattern.finditer(source):
    name = re.search(r'OPERATION_NAME = "([^"]+)"', match.group(2))
    if name:
      yield name.group(1), match.group(2)


def properties(body):
  """The op's properties sorted by name: '?name' for optional attributes,
  'name' for required ones, 'operandSegmentSizes:N' for N segments."""
  init = re.search(r"def __init__\(self.*?super\(\).__init__", body, re.S)
  attrs = {}
  for line in (init.group(0) if init else "").split("\n"):
    attr = re.search(r'attributes\["([^"]+)"\]', line)
    if attr:
      attrs.setdefault(attr.group(1), bool(re.match(r"\s*if ", line)))
  items = {name: ("?" if optional else "") + name
           for name, optional in attrs.items()}
  for kind in ("OPERAND", "RESULT"):
    segments = re.search(rf"_ODS_{kind}_SEGMENTS = \[(.*?)\]", body)
    if segments:
      count = len([s for s in segments.group(1).split(",") if s.strip()])
      name = f"{kind.lower()}SegmentSizes"
      items[name] = f"{name}:{count}"
  # Sorted by name, as the writer stores them (byte order, as MLIR sorts).
  return [items[name] for name in sorted(items)]


def main(dialects):
  # A namespace package (no __init__.py): its folder, not its origin.
  spec = importlib.util.find_spec("jaxlib.mlir.dialects")
  folder = list(spec.submodule_search_locations)[0]
  for dialect in dialects:
    with open(os.path.join(folder, f"_{dialect}_ops_gen.py")) as f:
      source = f.read()
    for name, body in sorted(op_classes(source)):
      items = properties(body)
      if items:
        print(f'KILN_ODS_OP("{name}", "{",".join(items)}")')


if __name__ == "__main__":
  main(sys.argv[1:] or ["stablehlo", "chlo", "func"])
