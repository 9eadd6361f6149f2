#!/usr/bin/env python3
"""Checks Kiln on the programs stablehlo_bytecode_gen.py wrote.

For every NAME.mlirbc (and NAME.vN.mlirbc) in the folder:
  - `kiln print --no-locations` of the bytecode must equal that of NAME.mlir,
    JAX's own text of the program (of NAME.generic.mlir when Kiln's text
    parser does not know the pretty form of an op of another dialect);
  - with --run, when NAME.in<i>.npy / NAME.out<i>.npy exist, `kiln run` of
    the bytecode on those inputs must give JAX CPU's results (to a tolerance
    for floats; programs whose results depend on the implementation, such
    as random bits of an unspecified algorithm, and ops Kiln does not run
    are reported apart).

    python3 tests/parse/stablehlo_bytecode_check.py build/bin/kiln DIR [--run]
"""

import argparse
import ast
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

# Results that may differ from XLA's without either being wrong.
IMPLEMENTATION_DEFINED = ("rng_bit_generator_rng_default", "debug_print",
                          "pure_callback", "eigh", "svd", "qr", "lu")


def kiln_print(kiln, path):
  result = subprocess.run([kiln, "print", "--no-locations", path],
                          capture_output=True, text=True)
  return result.returncode == 0, result.stdout if result.returncode == 0 else (
      result.stderr.strip())


def text_twin(kiln, base):
  ok, text = kiln_print(kiln, base + ".mlir")
  if not ok and os.path.exists(base + ".generic.mlir"):
    ok, text = kiln_print(kiln, base + ".generic.mlir")
  return ok, text


def first_difference(a, b):
  for line_a, line_b in zip(a.splitlines(), b.splitlines()):
    if line_a != line_b:
      return f"text:     {line_a}\n    bytecode: {line_b}"
  return "one is a prefix of the other"


def load_npy(path):
  """np.load, also for the dtypes Kiln names by ml_dtypes' names
  ('bfloat16', 'float8_e4m3fn', ...), which NumPy's header parser lacks."""
  try:
    return np.load(path)
  except ValueError:
    import ml_dtypes  # pylint: disable=import-outside-toplevel
    with open(path, "rb") as f:
      data = f.read()
    header_length = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + header_length].decode())
    dtype = np.dtype(getattr(ml_dtypes, header["descr"]))
    return np.frombuffer(data[10 + header_length:], dtype).reshape(
        header["shape"])


def close(actual, expected):
  if actual.shape != expected.shape:
    return False, f"shape {actual.shape} != {expected.shape}"
  if actual.dtype != expected.dtype:
    return False, f"dtype {actual.dtype} != {expected.dtype}"
  if expected.dtype.kind in "fc":
    a = actual.astype(np.complex128 if expected.dtype.kind == "c" else
                      np.float64)
    e = expected.astype(a.dtype)
    tolerance = 1e-2 if expected.dtype.itemsize <= 2 else 1e-4
    if np.allclose(a, e, rtol=tolerance, atol=tolerance, equal_nan=True):
      return True, ""
    return False, f"max abs error {np.nanmax(np.abs(a - e))}"
  if np.array_equal(actual, expected):
    return True, ""
  return False, "values differ"


def run_program(kiln, bytecode, base):
  inputs = sorted(glob.glob(base + ".in*.npy"),
                  key=lambda p: int(p.rsplit(".in", 1)[1][:-4]))
  outputs = sorted(glob.glob(base + ".out*.npy"),
                   key=lambda p: int(p.rsplit(".out", 1)[1][:-4]))
  with tempfile.TemporaryDirectory() as out_dir:
    command = [kiln, "run", bytecode, "--outputs", out_dir]
    if inputs:
      command += ["--inputs"] + inputs
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
      return False, (result.stderr.strip() or result.stdout.strip())[:300]
    produced = sorted(glob.glob(os.path.join(out_dir, "output*.npy")),
                      key=lambda p: int(os.path.basename(p)[6:-4]))
    if len(produced) != len(outputs):
      return False, f"{len(produced)} results, JAX has {len(outputs)}"
    for i, (mine, theirs) in enumerate(zip(produced, outputs)):
      ok, why = close(load_npy(mine), load_npy(theirs))
      if not ok:
        return False, f"result {i}: {why}"
  return True, ""


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("kiln")
  parser.add_argument("folder")
  parser.add_argument("--run", action="store_true")
  args = parser.parse_args()
  files = sorted(f for f in glob.glob(os.path.join(args.folder, "*.mlirbc"))
                 if not f.endswith(".vhlo.mlirbc"))
  same, failures = 0, []
  ran, matched, run_failures, implementation_defined = 0, 0, [], []
  unsupported = []
  for bytecode in files:
    base = bytecode[:-len(".mlirbc")]
    name = os.path.basename(base)
    if name.rsplit(".", 1)[-1].startswith("v") and "." in name:
      base = base.rsplit(".", 1)[0]
    ok_text, text = text_twin(args.kiln, base)
    ok_bc, printed = kiln_print(args.kiln, bytecode)
    if ok_text and ok_bc and text == printed:
      same += 1
    elif not ok_bc:
      failures.append(f"{bytecode}: {printed}")
    elif not ok_text:
      failures.append(f"{bytecode}: text twin does not parse: {text}")
    else:
      failures.append(f"{bytecode}: {first_difference(text, printed)}")
    if args.run and bytecode == base + ".mlirbc" and os.path.exists(
        base + ".out0.npy"):
      ran += 1
      ok, why = run_program(args.kiln, bytecode, base)
      if ok:
        matched += 1
      elif "UNIMPLEMENTED" in why:
        unsupported.append(f"{bytecode}: {why}")
      elif os.path.basename(base) in IMPLEMENTATION_DEFINED:
        implementation_defined.append(f"{bytecode}: {why}")
      else:
        run_failures.append(f"{bytecode}: {why}")
  print(f"{same}/{len(files)} bytecode files read as their text")
  for line in failures:
    print("  differs:", line)
  if args.run:
    print(f"{matched}/{ran} programs run on Kiln give JAX CPU's results")
    for line in run_failures:
      print("  run:", line)
    for line in unsupported:
      print("  not supported by Kiln:", line)
    for line in implementation_defined:
      print("  implementation-defined:", line)
  return 0 if not failures and not run_failures else 1


if __name__ == "__main__":
  sys.exit(main())
