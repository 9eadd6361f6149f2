"""The real-model programs of the shared corpus, made ready to run.

`$KILN_SHARED_DIR/corpus/models` (default `../shared` beside the checkout)
holds two exports (see the README there):

- `jax_resnet_50.mlir`: Flax ResNet-50 inference, batch 1, as text whose 265
  weight constants are elided (`dense_resource<__elided__>`, no blob). Each
  elided constant becomes an argument of `@main`, so the program takes its
  weights the way the chess program does and every backend runs the same
  arithmetic on the same pseudo-random values (splat constants would invite
  constant folding that real weights do not allow).
- `searchless_chess_9m.mlir.bc`: the chess transformer as a portable
  artifact with its weights as arguments; the argument types are read from
  its text form beside it.
"""

import dataclasses
import os
import re

import numpy as np

RESNET50 = "jax_resnet_50.mlir"
CHESS_BYTECODE = "searchless_chess_9m.mlir.bc"
CHESS_TEXT = "searchless_chess_9m.mlir"


def models_dir(repo_root: str) -> str:
    shared = os.environ.get("KILN_SHARED_DIR") or os.path.join(
        repo_root, "..", "shared")
    return os.path.join(os.path.abspath(shared), "corpus", "models")


def missing_reason(repo_root: str, *names: str) -> str | None:
    """Why the corpus programs `names` cannot be run, or None if they can."""
    directory = models_dir(repo_root)
    for name in names:
        if not os.path.isfile(os.path.join(directory, name)):
            return (f"{name} not found in {directory} (set KILN_SHARED_DIR "
                    "to the shared data directory)")
    return None


@dataclasses.dataclass
class Program:
    """A module for `Client.compile_and_load` and its argument types."""
    code: str | bytes
    arguments: list[tuple[tuple[int, ...], str]]  # (shape, "f32" | "i32")


_TENSOR = re.compile(r"tensor<([^>]*)>")
_ELIDED = re.compile(
    r"^\s*(%[\w$.\-]+) = stablehlo\.constant dense_resource<__elided__> : "
    r"tensor<([^>]*)>\s*$")
_VALUE_NAME = re.compile(r"%[\w$.\-]+")


def _parse_tensor_type(text: str) -> tuple[tuple[int, ...], str]:
    *dims, dtype = text.split("x")
    return tuple(int(d) for d in dims), dtype


def _main_arguments(signature_line: str) -> list[tuple[tuple[int, ...], str]]:
    head = signature_line.split(") ->")[0]
    return [_parse_tensor_type(t)
            for t in re.findall(r"%[\w$.\-]+: tensor<([^>]*)>", head)]


def load_resnet50(repo_root: str) -> Program:
    """ResNet-50 with its elided constants turned into arguments of @main.

    The export has one `func.func public @main` first and private helpers
    after it; the elided constants are all in @main, one per line.
    """
    path = os.path.join(models_dir(repo_root), RESNET50)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    main_at = next(i for i, line in enumerate(lines)
                   if "func.func public @main(" in line)
    main_end = next(i for i in range(main_at + 1, len(lines))
                    if lines[i].lstrip().startswith("func.func"))
    weights: dict[str, str] = {}  # constant's name -> its new argument
    weight_types: list[str] = []
    body: list[str] = []
    for line in lines[main_at + 1:main_end]:
        match = _ELIDED.match(line)
        if match:
            weights[match.group(1)] = f"%weight{len(weight_types)}"
            weight_types.append(match.group(2))
        else:
            body.append(line)
    if not weights:
        raise ValueError(f"{path}: no elided constants in @main")
    body_text = _VALUE_NAME.sub(
        lambda m: weights.get(m.group(0), m.group(0)), "\n".join(body))
    signature = lines[main_at]
    inputs = signature[signature.index("@main(") + len("@main("):
                       signature.index(") ->")]
    extra = ", ".join(f"%weight{k}: tensor<{t}>"
                      for k, t in enumerate(weight_types))
    signature = signature.replace(f"@main({inputs})",
                                  f"@main({inputs}, {extra})", 1)
    code = "\n".join(lines[:main_at] + [signature, body_text] +
                     lines[main_end:])
    arguments = _main_arguments(signature)
    return Program(code=code, arguments=arguments)


def load_chess(repo_root: str) -> Program:
    directory = models_dir(repo_root)
    with open(os.path.join(directory, CHESS_BYTECODE), "rb") as f:
        code = f.read()
    with open(os.path.join(directory, CHESS_TEXT), encoding="utf-8") as f:
        signature = next(line for line in f
                         if "func.func public @main(" in line)
    return Program(code=code, arguments=_main_arguments(signature))


def fill_arguments(program: Program, seed: int = 0) -> list[np.ndarray]:
    """Deterministic pseudo-random arguments of the right types and scale.

    Kernels (rank >= 2) get He-like normal values over their fan-in (all but
    the last dimension), vectors (normalization scales and shifts, means and
    variances) values in [0.5, 1.5], which keeps variances positive and the
    results finite; i32 arguments (the chess program's tokens) get small
    indices.
    """
    rng = np.random.default_rng(seed)
    values = []
    for index, (shape, dtype) in enumerate(program.arguments):
        if dtype == "i32":
            values.append(rng.integers(0, 32, shape).astype(np.int32))
        elif dtype != "f32":
            raise ValueError(f"argument {index}: unexpected element type "
                             f"{dtype}")
        elif index == 0 and len(shape) == 4:
            values.append(rng.standard_normal(shape).astype(np.float32))
        elif len(shape) >= 2:
            fan_in = int(np.prod(shape[:-1]))
            values.append((rng.standard_normal(shape) *
                           np.sqrt(2.0 / fan_in)).astype(np.float32))
        else:
            values.append(rng.uniform(0.5, 1.5, shape).astype(np.float32))
    return values
