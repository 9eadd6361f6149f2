#!/usr/bin/env python3
"""Writes StableHLO programs as plain MLIR bytecode, with their text twins.

Each program NAME becomes, in the output folder:
  NAME.mlirbc          module.operation.write_bytecode(): plain StableHLO /
                       func / chlo bytecode, not a VHLO artifact
  NAME.mlir            the same module printed by JAX's MLIR (pretty form)
  NAME.generic.mlir    printed in the generic op form
  NAME.vhlo.mlirbc     the portable artifact of the same module (when
                       stablehlo.serialize_portable_artifact accepts it)
  NAME.vN.mlirbc       bytecode written at an older container version N,
                       for some programs
With --run-data, programs lowered by jax.jit also get their inputs
NAME.in<i>.npy and JAX CPU's results NAME.out<i>.npy (pytree leaves in
order).

Kiln's oracle (tests/parse/stablehlo_bytecode_test.cc, and
stablehlo_bytecode_check.py): reading NAME.mlirbc gives the module that
parsing NAME.mlir gives.

--small writes only the few programs kept in the repository, without
locations, and only NAME.mlirbc, NAME.mlir and the first NAME.vN.mlirbc.
--text-files converts MLIR text files instead (each `// -----` part one
program), e.g. a corpus of StableHLO tests; with --kiln, each part goes
through `kiln print --generic` first, so ops of dialects JAX's MLIR lacks
(check.*) parse there as unregistered ops.

Usage (with a Python that has jax):
  python3 tests/parse/stablehlo_bytecode_gen.py OUT_DIR [--run-data]
  python3 tests/parse/stablehlo_bytecode_gen.py --small \
      tests/parse/testdata/stablehlo_bytecode
  python3 tests/parse/stablehlo_bytecode_gen.py OUT_DIR --kiln build/bin/kiln \
      --text-files ../shared/corpus/stablehlo/interpret/*.mlir
"""

import argparse
import io
import os
import sys

if not os.environ.get("JAX_PLATFORMS"):
  os.environ["JAX_PLATFORMS"] = "cpu"  # JAX CPU is the reference

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402
from jaxlib.mlir.dialects import stablehlo  # noqa: E402

jax.config.update("jax_enable_x64", True)

# (name, builder): builder() returns (module, run), where run() computes
# (input leaves, output leaves) on JAX CPU, or is None.
PROGRAMS = []
# The programs --small writes (kept in the repository: one or two of each
# encoding the reader has, a few KB in all).
SMALL = {
    "compare_lt_f32", "conv2d_strided", "collectives", "custom_call_full",
    "result_accuracy", "chlo_scan", "bounded_dynamic", "func_attrs",
    "mesh_axes",
}
OLD_VERSIONS = {}  # name -> container versions to write as well


def program(name, versions=()):
  def register(builder):
    PROGRAMS.append((name, builder))
    if versions:
      OLD_VERSIONS[name] = versions
    return builder

  return register


def jax_program(name, fn, *args, versions=(), **jit_args):
  """A program lowered by jax.jit from `fn` applied to `args`."""

  def build():
    # keep_unused: @main takes every input, as the .npy files list them.
    jitted = jax.jit(fn, keep_unused=True, **jit_args)
    module = jitted.lower(*args).compiler_ir("stablehlo")

    def run():
      outputs = jitted(*args)
      return (jax.tree_util.tree_leaves(args),
              jax.tree_util.tree_leaves(outputs))

    return module, run

  program(name, versions)(build)


def text_program(name, text, versions=()):
  """A program JAX does not emit, parsed from MLIR text by JAX's MLIR."""

  def build():
    context = jax_mlir.make_ir_context()
    with context:
      return ir.Module.parse(text), None

  program(name, versions)(build)


RNG = np.random.default_rng(7)


def f32(*shape):
  return RNG.standard_normal(shape).astype(np.float32)


def f64(*shape):
  return RNG.standard_normal(shape)


def i32(*shape, low=-8, high=8):
  return RNG.integers(low, high, shape).astype(np.int32)


def u8(*shape):
  return RNG.integers(0, 255, shape).astype(np.uint8)


def c64(*shape):
  return (RNG.standard_normal(shape) +
          1j * RNG.standard_normal(shape)).astype(np.complex64)


# --- elementwise -----------------------------------------------------------

UNARY_FLOAT = {
    "abs": jnp.abs, "neg": jnp.negative, "sign": jnp.sign,
    "floor": jnp.floor, "ceil": jnp.ceil, "round": jnp.round,
    "round_afz": lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
    "exp": jnp.exp, "expm1": jnp.expm1, "log": lambda x: jnp.log(jnp.abs(x)),
    "log1p": lambda x: jnp.log1p(jnp.abs(x)), "sqrt": lambda x: jnp.sqrt(
        jnp.abs(x)), "rsqrt": lambda x: lax.rsqrt(jnp.abs(x) + 1),
    "cbrt": jnp.cbrt, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan,
    "tanh": jnp.tanh, "logistic": jax.nn.sigmoid, "is_finite": jnp.isfinite,
    "erf": lax.erf, "erf_inv": lambda x: lax.erf_inv(jnp.tanh(x)),
    "lgamma": lax.lgamma, "digamma": lambda x: lax.digamma(jnp.abs(x) + 1),
    "asin": lambda x: jnp.arcsin(jnp.tanh(x)), "acos": lambda x: jnp.arccos(
        jnp.tanh(x)), "atan": jnp.arctan, "sinh": jnp.sinh, "cosh": jnp.cosh,
    "asinh": jnp.arcsinh, "acosh": lambda x: jnp.arccosh(jnp.abs(x) + 1),
    "atanh": lambda x: jnp.arctanh(jnp.tanh(x)), "square": jnp.square,
    "bessel_i1e": lax.bessel_i1e, "erfc": lax.erfc,
    "reduce_precision": lambda x: lax.reduce_precision(x, 5, 10),
    "is_inf": jnp.isinf, "is_neg_inf": jnp.isneginf,
}
for op_name, fn in UNARY_FLOAT.items():
  jax_program(f"unary_{op_name}_f32", fn, f32(2, 3))
  if op_name in ("abs", "exp", "tanh", "sqrt", "floor", "sign", "cos"):
    jax_program(f"unary_{op_name}_f64", fn, f64(3))
    jax_program(f"unary_{op_name}_bf16", fn, f32(4).astype(jnp.bfloat16))
    jax_program(f"unary_{op_name}_f16", fn, f32(4).astype(np.float16))

UNARY_INT = {
    "abs": jnp.abs, "neg": jnp.negative, "not": jnp.invert,
    "popcnt": lax.population_count, "clz": lax.clz, "sign": jnp.sign,
}
for op_name, fn in UNARY_INT.items():
  jax_program(f"unary_{op_name}_i32", fn, i32(5))
  jax_program(f"unary_{op_name}_u8", fn, u8(5)) if op_name != "neg" else None

for op_name, fn in {"real": jnp.real, "imag": jnp.imag, "conj": jnp.conj,
                    "abs": jnp.abs, "exp": jnp.exp, "sqrt": jnp.sqrt,
                    "log": jnp.log}.items():
  jax_program(f"complex_{op_name}_c64", fn, c64(3))
jax_program("complex_make", lax.complex, f32(3), f32(3))

BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply,
    "div": jnp.divide, "max": jnp.maximum, "min": jnp.minimum,
    "pow": lambda a, b: jnp.power(jnp.abs(a), b), "atan2": jnp.arctan2,
    "rem": lax.rem, "nextafter": jnp.nextafter,
    "polygamma": lambda a, b: lax.polygamma(jnp.floor(jnp.abs(a)),
                                            jnp.abs(b) + 1),
    "zeta": lambda a, b: lax.zeta(jnp.abs(a) + 2, jnp.abs(b) + 1),
    "igamma": lambda a, b: lax.igamma(jnp.abs(a) + 1, jnp.abs(b)),
}
for op_name, fn in BINARY.items():
  jax_program(f"binary_{op_name}_f32", fn, f32(2, 3), f32(2, 3))
  if op_name in ("add", "mul", "max"):
    jax_program(f"binary_{op_name}_f64", fn, f64(4), f64(4))
    jax_program(f"binary_{op_name}_bf16", fn, f32(4).astype(jnp.bfloat16),
                f32(4).astype(jnp.bfloat16))

BINARY_INT = {
    "add": jnp.add, "mul": jnp.multiply, "div": lax.div, "rem": lax.rem,
    "and": jnp.bitwise_and, "or": jnp.bitwise_or, "xor": jnp.bitwise_xor,
    "shl": lax.shift_left, "shr_a": lax.shift_right_arithmetic,
    "shr_l": lax.shift_right_logical, "max": jnp.maximum,
    "pow": lambda a, b: lax.integer_pow(a, 3),
}
for op_name, fn in BINARY_INT.items():
  jax_program(f"binary_{op_name}_i32", fn, i32(6), i32(6, low=1, high=4))
  jax_program(f"binary_{op_name}_u8", fn, u8(6), u8(6) % 3 + 1)
jax_program("binary_and_bool", jnp.logical_and, f32(4) > 0, f32(4) > 0)
jax_program("binary_or_bool", jnp.logical_or, f32(4) > 0, f32(4) > 0)

COMPARES = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less,
            "le": jnp.less_equal, "gt": jnp.greater,
            "ge": jnp.greater_equal}
for op_name, fn in COMPARES.items():
  jax_program(f"compare_{op_name}_f32", fn, f32(4), f32(4))
  jax_program(f"compare_{op_name}_i32", fn, i32(4), i32(4))
  jax_program(f"compare_{op_name}_u8", fn, u8(4), u8(4))
jax_program("compare_eq_bool", jnp.equal, f32(4) > 0, f32(4) > 0)
jax_program("compare_total_order",
            lambda a, b: lax.sort((a, b), num_keys=1)[1], f32(5), f32(5))
jax_program("select", jnp.where, f32(4) > 0, f32(4), f32(4))
jax_program("clamp", lambda x: lax.clamp(np.float32(-0.5), x, np.float32(0.5)), f32(5))
jax_program("clamp_i32", lambda x: jnp.clip(x, -2, 3), i32(6))

# --- conversions and shapes -------------------------------------------------

for src, dst in [("float32", "int32"), ("int32", "float32"),
                 ("float32", "bfloat16"), ("float32", "float16"),
                 ("float32", "bool"), ("int32", "uint8"),
                 ("float64", "float32"), ("float32", "complex64"),
                 ("float32", "float8_e4m3fn"), ("float32", "float8_e5m2")]:
  data = f32(4).astype(src) if src != "int32" else i32(4)
  jax_program(f"convert_{src}_{dst}", lambda x, d=dst: x.astype(d), data)
jax_program("bitcast_f32_i32",
            lambda x: lax.bitcast_convert_type(x, jnp.int32), f32(3))
jax_program("bitcast_f32_u8",
            lambda x: lax.bitcast_convert_type(x, jnp.uint8), f32(3))
jax_program("iota", lambda: lax.broadcasted_iota(jnp.int32, (3, 4), 1))
jax_program("iota_f32", lambda: jnp.arange(6, dtype=jnp.float32))
jax_program("reshape", lambda x: x.reshape(3, 2), f32(2, 3))
jax_program("transpose", lambda x: x.transpose(2, 0, 1), f32(2, 3, 4))
jax_program("broadcast", lambda x: jnp.broadcast_to(x, (4, 2, 3)), f32(2, 3))
jax_program("broadcast_lax", lambda x: lax.broadcast(x, (2,)), f32(3))
jax_program("reverse", lambda x: jnp.flip(x, (0, 1)), f32(2, 3))
jax_program("pad", lambda x: lax.pad(x, np.float32(0), ((1, 2, 1), (0, -1, 0))),
            f32(3, 3))
jax_program("concatenate", lambda a, b: jnp.concatenate([a, b, a], 1),
            f32(2, 2), f32(2, 3))
jax_program("slice", lambda x: x[1:5:2, ::3], f32(6, 7))
jax_program("dynamic_slice",
            lambda x, i: lax.dynamic_slice(x, (i, np.int32(1)), (2, 2)), f32(4, 4),
            np.int32(1))
jax_program("dynamic_update_slice",
            lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(0))),
            f32(4, 4), f32(2, 4), np.int32(1))
jax_program("squeeze_expand", lambda x: jnp.expand_dims(x[0], 1), f32(1, 3))
jax_program("tuple_like", lambda x: (x, x + 1, (x * 2,)), f32(2))
jax_program("constant_splat", lambda: jnp.full((2, 3), 1.5, jnp.float32))
jax_program("constant_dense",
            lambda: jnp.array([[1, 2, 3], [4, 5, 6]], jnp.int32))
jax_program("constant_bool", lambda: jnp.array([True, False, True]))
jax_program("constant_large",
            lambda x: x + jnp.asarray(np.arange(64, dtype=np.float32)),
            f32(64))
jax_program("constant_bf16",
            lambda: jnp.array([0.5, -2.0, 3.25], jnp.bfloat16))
jax_program("constant_c64",
            lambda: jnp.array([1 + 2j, 3 - 4j], jnp.complex64))
jax_program("constant_empty", lambda: jnp.zeros((3, 0), jnp.int16))
jax_program("constant_u64", lambda: jnp.array([2**63 + 5], jnp.uint64))

# --- reductions -------------------------------------------------------------

for op_name, fn in {"sum": jnp.sum, "max": jnp.max, "min": jnp.min,
                    "prod": jnp.prod, "mean": jnp.mean}.items():
  jax_program(f"reduce_{op_name}", lambda x, f=fn: f(x, axis=1), f32(3, 4))
  jax_program(f"reduce_{op_name}_all", fn, f32(2, 3))
jax_program("reduce_any", lambda x: jnp.any(x > 0, axis=0), f32(3, 4))
jax_program("reduce_all", lambda x: jnp.all(x > 0), f32(3, 4))
jax_program("reduce_sum_i32", lambda x: jnp.sum(x, axis=0), i32(3, 4))
jax_program("argmax", lambda x: jnp.argmax(x, axis=1), f32(3, 5))
jax_program("argmin", lambda x: jnp.argmin(x), f32(7))
jax_program("logsumexp", jax.nn.logsumexp, f32(4, 5))
jax_program("softmax", lambda x: jax.nn.softmax(x, -1), f32(3, 4))
jax_program("cumsum", lambda x: jnp.cumsum(x, axis=0), f32(5, 2))
jax_program("cummax", lambda x: lax.cummax(x, axis=0), f32(6))
jax_program("cumprod_reverse", lambda x: lax.cumprod(x, reverse=True),
            f32(5))
jax_program("variance", jnp.var, f32(10))

# --- windows ----------------------------------------------------------------

jax_program("max_pool",
            lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1),
                                        (1, 2, 2, 1), "VALID"),
            f32(1, 4, 4, 2))
jax_program("avg_pool_same",
            lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 3), (1, 1),
                                        "SAME"), f32(5, 5))
jax_program("reduce_window_dilated",
            lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2),
                                        ((1, 0), (0, 1)), (2, 1), (1, 2)),
            f32(6, 6))
jax_program("reduce_window_variadic",
            lambda x, y: lax.reduce_window(
                (x, y), (np.float32(0), np.int32(0)), lambda a, b: (a[0] + b[0], a[1] + b[1]),
                (2,), (1,), "VALID"), f32(5), i32(5))
jax_program("max_pool_grad",
            jax.grad(lambda x: jnp.sum(lax.reduce_window(
                x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID"))), f32(4, 4))

# --- dot and convolution ------------------------------------------------------

jax_program("matmul", jnp.matmul, f32(2, 3), f32(3, 4))
jax_program("matvec", jnp.dot, f32(3, 4), f32(4))
jax_program("batch_matmul", jnp.matmul, f32(2, 2, 3), f32(2, 3, 4))
jax_program("einsum_batch", lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
            f32(3, 2, 4), f32(3, 4, 2))
jax_program("einsum_two_contract",
            lambda a, b: jnp.einsum("abc,cab->", a, b), f32(2, 3, 4),
            f32(4, 2, 3))
jax_program("dot_highest",
            lambda a, b: jnp.dot(a, b, precision=lax.Precision.HIGHEST),
            f32(2, 3), f32(3, 2))
jax_program("dot_mixed_precision",
            lambda a, b: lax.dot(a, b, precision=(lax.Precision.HIGH,
                                                  lax.Precision.DEFAULT)),
            f32(2, 3), f32(3, 2))
jax_program("dot_preferred_f32",
            lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float32),
            f32(2, 3).astype(jnp.bfloat16), f32(3, 2).astype(jnp.bfloat16))
jax_program("dot_algorithm",
            lambda a, b: lax.dot(a, b,
                                 precision=lax.DotAlgorithmPreset.F32_F32_F32),
            f32(2, 3), f32(3, 2))
jax_program("dot_algorithm_bf16x3",
            lambda a, b: lax.dot(
                a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32_X3),
            f32(2, 3), f32(3, 2))
jax_program("dot_i32", jnp.dot, i32(2, 3), i32(3, 2))
jax_program("dot_general_raw",
            lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
            f32(2, 3, 4), f32(2, 4, 5))

CONVS = {
    "conv2d": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME"), f32(1, 2, 5, 5), f32(3, 2, 3, 3)),
    "conv2d_strided": (lambda x, w: lax.conv_general_dilated(
        x, w, (2, 2), ((1, 1), (0, 2))), f32(2, 1, 6, 6), f32(2, 1, 3, 3)),
    "conv2d_dilated": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), ((0, 0), (1, 0)), lhs_dilation=(2, 1),
        rhs_dilation=(1, 2)),
        f32(1, 1, 4, 5), f32(1, 1, 2, 2)),
    "conv2d_nhwc": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        f32(1, 5, 5, 2), f32(3, 3, 2, 4)),
    "conv2d_grouped": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", feature_group_count=2),
        f32(1, 4, 4, 4), f32(6, 2, 2, 2)),
    "conv2d_batch_grouped": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", batch_group_count=2),
        f32(2, 2, 4, 4), f32(4, 2, 2, 2)),
    "conv1d": (lambda x, w: lax.conv_general_dilated(
        x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
        f32(2, 7, 3), f32(3, 3, 2)),
    "conv3d": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1, 1), "VALID"), f32(1, 1, 3, 3, 3), f32(1, 1, 2, 2, 2)),
    "conv_transpose": (lambda x, w: lax.conv_transpose(
        x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        f32(1, 3, 3, 2), f32(2, 2, 2, 2)),
    "conv_precision": (lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", precision=lax.Precision.HIGHEST),
        f32(1, 1, 3, 3), f32(1, 1, 2, 2)),
}
for conv_name, (fn, x, w) in CONVS.items():
  jax_program(conv_name, fn, x, w)
jax_program("conv2d_grad",
            jax.grad(lambda x, w: jnp.sum(lax.conv_general_dilated(
                x, w, (2, 2), "SAME")), argnums=(0, 1)),
            f32(1, 2, 4, 4), f32(2, 2, 3, 3))

# --- gather, scatter, sort ------------------------------------------------------

jax_program("gather_take", lambda x, i: x[i], f32(5, 3), i32(4, low=0, high=5))
jax_program("gather_2d", lambda x, i, j: x[i, j], f32(4, 5),
            i32(3, low=0, high=4), i32(3, low=0, high=5))
jax_program("gather_take_along",
            lambda x, i: jnp.take_along_axis(x, i, axis=1), f32(3, 4),
            i32(3, 2, low=0, high=4))
jax_program("gather_vmap", jax.vmap(lambda x, i: x[i]), f32(3, 5),
            i32(3, low=0, high=5))
jax_program("gather_clip",
            lambda x, i: jnp.take(x, i, axis=0, mode="clip"), f32(4, 2),
            i32(3, low=-2, high=6))
jax_program("gather_fill",
            lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-1.0),
            f32(4, 2), i32(3, low=-2, high=6))
for mode in ("set", "add", "mul", "min", "max"):
  jax_program(f"scatter_{mode}",
              lambda x, i, u, m=mode: getattr(x.at[i], m)(u), f32(5, 2),
              i32(3, low=0, high=5), f32(3, 2))
jax_program("scatter_unique",
            lambda x, u: x.at[jnp.array([0, 2])].set(
                u, unique_indices=True, indices_are_sorted=True),
            f32(4), f32(2))
jax_program("scatter_vmap", jax.vmap(lambda x, i, u: x.at[i].add(u)),
            f32(3, 5), i32(3, low=0, high=5), f32(3))
jax_program("scatter_2d", lambda x, i, j, u: x.at[i, j].add(u), f32(4, 4),
            i32(3, low=0, high=4), i32(3, low=0, high=4), f32(3))
jax_program("sort", jnp.sort, f32(6))
jax_program("sort_axis0", lambda x: jnp.sort(x, axis=0), f32(4, 3))
jax_program("argsort", jnp.argsort, f32(6))
jax_program("sort_stable_multi",
            lambda a, b: lax.sort((a, b), num_keys=2, is_stable=True),
            i32(6, low=0, high=3), f32(6))
jax_program("sort_descending", lambda x: -jnp.sort(-x), i32(5))
jax_program("top_k", lambda x: lax.top_k(x, 3), f32(2, 6))
jax_program("searchsorted", lambda a, v: jnp.searchsorted(a, v),
            np.sort(f32(8)), f32(3))

# --- control flow and calls -------------------------------------------------

jax_program("while_fori",
            lambda x: lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, x),
            f32(3))
jax_program("while_cond",
            lambda x: lax.while_loop(lambda c: c[0] < 10,
                                     lambda c: (c[0] + 1, c[1] * 2),
                                     (0, x)), f32(2))
jax_program("scan_cumsum",
            lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x), f32(5))
jax_program("scan_unroll",
            lambda x: lax.scan(lambda c, v: (c + v, c), 0.0, x, unroll=2),
            f32(4))
jax_program("map", lambda x: lax.map(jnp.sin, x), f32(3, 2))
jax_program("cond",
            lambda p, x: lax.cond(p, lambda v: v + 1, lambda v: v * 2, x),
            np.bool_(True), f32(3))
jax_program("cond_multi",
            lambda p, x, y: lax.cond(p > 0, lambda a, b: (a, b),
                                     lambda a, b: (b, a), x, y),
            np.int32(-1), f32(2), f32(2))
jax_program("switch",
            lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x),
            np.int32(2), f32(3))
jax_program("nested_jit",
            lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) + 1, f32(3))
jax_program("nested_jit_twice",
            lambda x: jax.jit(jnp.cos)(x) + jax.jit(jnp.cos)(x * 2), f32(3))
jax_program("remat",
            jax.grad(lambda x: jnp.sum(jax.checkpoint(jnp.sin)(x) ** 2)),
            f32(4))
jax_program("optimization_barrier",
            lambda x, y: lax.optimization_barrier((x, y)), f32(2), i32(2))
jax_program("grad_mlp",
            jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)),
            f32(3, 2), f32(4, 3))
jax_program("donated", lambda x: x * 2, f32(3), donate_argnums=0)
jax_program("kwargs_tree", lambda d: {"a": d["x"] + 1, "b": d["y"]},
            {"x": f32(2), "y": i32(2)})
jax_program("composite",
            lambda x: lax.composite(lambda v: jnp.tanh(v) * 2,
                                    name="my.tanh2")(x), f32(3))
jax_program("composite_attrs",
            lambda x: lax.composite(lambda v, *, k: v * k, name="my.scale",
                                    version=2)(x, k=3.0), f32(3))

# --- random numbers -----------------------------------------------------------

for algorithm in ("RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"):
  jax_program(f"rng_bit_generator_{algorithm.lower()}",
              lambda k, a=algorithm: lax.rng_bit_generator(
                  k, (3, 2), algorithm=getattr(lax.RandomAlgorithm, a)),
              np.array([1, 2, 3, 4], np.uint32))
jax_program("random_threefry",
            lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (4,)),
            np.array([0, 42], np.uint32))
jax_program("random_normal",
            lambda k: jax.random.normal(jax.random.wrap_key_data(k), (3,)),
            np.array([0, 7], np.uint32))

# --- fft and linear algebra ------------------------------------------------------

jax_program("fft", jnp.fft.fft, c64(8))
jax_program("ifft", jnp.fft.ifft, c64(8))
jax_program("rfft", jnp.fft.rfft, f32(8))
jax_program("irfft", jnp.fft.irfft, c64(5))
jax_program("fft2", jnp.fft.fft2, c64(4, 4))
jax_program("rfftn", jnp.fft.rfftn, f32(2, 4, 4))
SPD = (lambda a: a @ a.T + 4 * np.eye(3, dtype=np.float32))(f32(3, 3))
jax_program("cholesky", jnp.linalg.cholesky, SPD)
jax_program("triangular_solve",
            lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True),
            np.tril(SPD), f32(3, 2))
jax_program("lu", jax.scipy.linalg.lu_factor, SPD)
jax_program("qr", jnp.linalg.qr, f32(4, 3))
jax_program("eigh", jnp.linalg.eigh, SPD)
jax_program("svd", jnp.linalg.svd, f32(3, 3))
jax_program("inv", jnp.linalg.inv, SPD)
jax_program("det", jnp.linalg.det, SPD)
jax_program("solve", jnp.linalg.solve, SPD, f32(3))

# --- effects, collectives, shardings ----------------------------------------


def debug_print(x):
  jax.debug.print("x = {}", x)
  return x + 1


jax_program("debug_print", debug_print, f32(2))
jax_program("pure_callback",
            lambda x: jax.pure_callback(
                lambda v: np.asarray(v) * 2,
                jax.ShapeDtypeStruct(x.shape, x.dtype), x), f32(3))
jax_program("pmap_psum", jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i"),
            f32(1, 3))
jax_program("pmap_pmax", jax.pmap(lambda x: lax.pmax(x, "i"), axis_name="i"),
            f32(1, 3))
jax_program("pmap_all_gather",
            jax.pmap(lambda x: lax.all_gather(x, "i"), axis_name="i"),
            f32(1, 2))
jax_program("pmap_ppermute",
            jax.pmap(lambda x: lax.ppermute(x, "i", [(0, 0)]), axis_name="i"),
            f32(1, 2))
jax_program("pmap_psum_scatter",
            jax.pmap(lambda x: lax.psum_scatter(x, "i", tiled=True),
                     axis_name="i"), f32(1, 2))
jax_program("pmap_all_to_all",
            jax.pmap(lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True),
                     axis_name="i"), f32(1, 2))
jax_program("pmap_axis_index",
            jax.pmap(lambda x: x + lax.axis_index("i"), axis_name="i"),
            f32(1, 2))


def with_sharding(x):
  mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
  spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
  return lax.with_sharding_constraint(x * 2, spec)


jax_program("sharding_constraint", with_sharding, f32(4))

# --- symbolic shapes (jax.export), parsed back into a module ---------------------


def export_program(name, fn, *specs):
  """`specs`: (shape, dtype) pairs; shapes are strings with symbolic
  dimensions ("b, 4"), sharing one scope."""

  def build():
    scope = jax.export.SymbolicScope()
    args = [jax.ShapeDtypeStruct(
        jax.export.symbolic_shape(shape, scope=scope), dtype)
            for shape, dtype in specs]
    exported = jax.export.export(jax.jit(fn))(*args)
    context = jax_mlir.make_ir_context()
    with context:
      return ir.Module.parse(exported.mlir_module()), None

  program(name)(build)


def sym(spec, dtype=jnp.float32):
  return (spec, dtype)


export_program("export_dyn_sin", jnp.sin, sym("b, 4"))
export_program("export_dyn_sum", lambda x: jnp.sum(x, axis=0), sym("b, 3"))
export_program("export_dyn_matmul", jnp.matmul, sym("b, k"), sym("k, 2"))
export_program("export_dyn_reshape", lambda x: x.reshape(-1), sym("b, 2"))
export_program("export_dyn_broadcast", lambda x, y: x + y, sym("b, 1"),
               sym("1, c"))
export_program("export_dyn_iota", lambda x: x + jnp.arange(x.shape[0]),
               sym("n", jnp.int32))
export_program("export_dyn_concat", lambda x: jnp.concatenate([x, x]),
               sym("n"))
export_program("export_dyn_slice", lambda x: x[1:], sym("n"))
export_program("export_dyn_pad", lambda x: jnp.pad(x, (1, 2)), sym("n"))
export_program("export_dyn_gather", lambda x, i: x[i], sym("n, 2"),
               sym("m", jnp.int32))
export_program("export_static", lambda x: jnp.cos(x) * 2, sym("3"))

# --- programs JAX does not emit (from MLIR text) ---------------------------------

text_program("bounded_dynamic", """
func.func @main(%a: tensor<?xf32, #stablehlo.bounds<4>>, %n: tensor<i32>)
    -> tensor<?xf32, #stablehlo.bounds<4>> {
  %0 = stablehlo.abs %a : tensor<?xf32, #stablehlo.bounds<4>>
  %1 = stablehlo.set_dimension_size %0, %n, dim = 0
      : (tensor<?xf32, #stablehlo.bounds<4>>, tensor<i32>)
      -> tensor<?xf32, #stablehlo.bounds<4>>
  %2 = stablehlo.get_dimension_size %1, dim = 0
      : (tensor<?xf32, #stablehlo.bounds<4>>) -> tensor<i32>
  return %1 : tensor<?xf32, #stablehlo.bounds<4>>
}""")
text_program("bounded_2d", """
func.func @main(%a: tensor<2x?xi32, #stablehlo.bounds<?, 8>>)
    -> tensor<2x?xi32, #stablehlo.bounds<?, 8>> {
  return %a : tensor<2x?xi32, #stablehlo.bounds<?, 8>>
}""")
text_program("collectives", """
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>,
                                       tensor<4xf32>, tensor<2xf32>) {
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.all_gather"(%a) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<4xf32>) -> tensor<8xf32>
  %2 = "stablehlo.collective_permute"(%a) {
      source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}
      : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<4xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>,
                          tensor<2xf32>
}""", versions=(2, 5))
text_program("all_to_all_broadcast", """
func.func @main(%a: tensor<4x2xf32>) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %0 = "stablehlo.all_to_all"(%a) {split_dimension = 0 : i64,
      concat_dimension = 1 : i64, split_count = 2 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}
      : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %1 = "stablehlo.collective_broadcast"(%a) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<4x2xf32>
}""")
text_program("send_recv_tokens", """
func.func @main(%a: tensor<2xf32>, %t: !stablehlo.token) -> !stablehlo.token {
  %0 = "stablehlo.send"(%a, %t) {
      channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>,
      is_host_transfer = true} : (tensor<2xf32>, !stablehlo.token)
      -> !stablehlo.token
  %1:2 = "stablehlo.recv"(%0) {
      channel_handle = #stablehlo.channel_handle<handle = 6, type = 3>,
      is_host_transfer = true} : (!stablehlo.token)
      -> (tensor<2xf32>, !stablehlo.token)
  %2 = stablehlo.create_token : !stablehlo.token
  %3 = stablehlo.after_all %1#1, %2 : !stablehlo.token
  %4 = "stablehlo.outfeed"(%a, %3) {outfeed_config = "cfg"}
      : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  %5:2 = "stablehlo.infeed"(%4) {infeed_config = "in",
      layout = [[0]]} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  return %5#1 : !stablehlo.token
}""")
text_program("custom_call_full", """
func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = stablehlo.custom_call @foo(%a) {
      backend_config = "opaque config", has_side_effect = true,
      api_version = 2 : i32,
      operand_layouts = [dense<[1, 0]> : tensor<2xindex>],
      result_layouts = [dense<[0, 1]> : tensor<2xindex>],
      output_operand_aliases = [#stablehlo.output_operand_alias<
          output_tuple_indices = [], operand_index = 0,
          operand_tuple_indices = []>]}
      : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.custom_call @bar(%a) {api_version = 4 : i32,
      backend_config = {alpha = 1.5 : f32, mode = "fast"},
      called_computations = [@helper]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
}
func.func private @helper(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}""", versions=(0, 5))
text_program("triangular_solve_cholesky_op", """
func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>)
    -> (tensor<3x2xf32>, tensor<3x3xf32>) {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true,
      unit_diagonal = false,
      transpose_a = #stablehlo<transpose TRANSPOSE>}
      : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %1 = "stablehlo.cholesky"(%a) {lower = true}
      : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<3x3xf32>
}""")
text_program("batch_norm", """
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 0.001 : f32,
      feature_index = 1 : i64}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %1 = "stablehlo.batch_norm_inference"(%x, %s, %o, %0#1, %0#2) {
      epsilon = 0.001 : f32, feature_index = 1 : i64}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>,
         tensor<3xf32>) -> tensor<2x3xf32>
  return %1, %0#1, %0#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}""")
text_program("rng_distributions", """
func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> (tensor<3xf32>,
                                                      tensor<3xf32>) {
  %shape = stablehlo.constant dense<3> : tensor<1xi64>
  %0 = "stablehlo.rng"(%a, %b, %shape) {
      rng_distribution = #stablehlo<rng_distribution UNIFORM>}
      : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<3xf32>
  %1 = "stablehlo.rng"(%a, %b, %shape) {
      rng_distribution = #stablehlo<rng_distribution NORMAL>}
      : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}""")
text_program("fft_types", """
func.func @main(%a: tensor<8xcomplex<f32>>, %r: tensor<8xf32>)
    -> (tensor<8xcomplex<f32>>, tensor<5xcomplex<f32>>, tensor<8xf32>) {
  %0 = stablehlo.fft %a, type = IFFT, length = [8]
      : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  %1 = stablehlo.fft %r, type = RFFT, length = [8]
      : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  %2 = stablehlo.fft %1, type = IRFFT, length = [8]
      : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
  return %0, %1, %2 : tensor<8xcomplex<f32>>, tensor<5xcomplex<f32>>,
                      tensor<8xf32>
}""")
text_program("result_accuracy", """
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.exponential %a {result_accuracy =
      #stablehlo.result_accuracy<atol = 1.0e-5, rtol = 0.0, ulps = 2,
      mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
  %1 = stablehlo.tanh %a {result_accuracy =
      #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>}
      : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}""")
text_program("dot_algorithm_text", """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],
      precision = [DEFAULT, DEFAULT],
      algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16,
                   accumulation_type = f32, lhs_component_count = 1,
                   rhs_component_count = 1, num_primitive_operations = 3,
                   allow_imprecise_accumulation = false>
      : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}""")
text_program("gather_scatter_batching", """
func.func @main(%x: tensor<2x5x3xf32>, %i: tensor<2x4x1xi64>,
                %u: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x5x3xf32>) {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<
      offset_dims = [2], collapsed_slice_dims = [1],
      operand_batching_dims = [0], start_indices_batching_dims = [0],
      start_index_map = [1], index_vector_dim = 2>,
      slice_sizes = array<i64: 1, 1, 3>, indices_are_sorted = true}
      : (tensor<2x5x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
  %1 = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [2], inserted_window_dims = [1],
      input_batching_dims = [0], scatter_indices_batching_dims = [0],
      scatter_dims_to_operand_dims = [1], index_vector_dim = 2>,
      unique_indices = true}
      : (tensor<2x5x3xf32>, tensor<2x4x1xi64>, tensor<2x4x3xf32>)
      -> tensor<2x5x3xf32>
  return %0, %1 : tensor<2x4x3xf32>, tensor<2x5x3xf32>
}""")
text_program("select_and_scatter", """
func.func @main(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>, %i: tensor<f32>)
    -> tensor<4x4xf32> {
  %0 = "stablehlo.select_and_scatter"(%x, %s, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>)
        -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>,
      padding = dense<0> : tensor<2x2xi64>}
      : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}""")
text_program("tuples_map_misc", """
func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>,
    tensor<f32>, tensor<3xf32>) {
  %t = stablehlo.tuple %a, %b : tuple<tensor<3xf32>, tensor<3xf32>>
  %e = stablehlo.get_tuple_element %t[1]
      : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %m = "stablehlo.map"(%a, %e) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.multiply %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>)
      -> tensor<3xf32>
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  %d = stablehlo.dot %a, %b, precision = [HIGHEST, DEFAULT]
      : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %c = stablehlo.compare LT, %a, %b, TOTALORDER
      : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %s = stablehlo.select %c, %a, %m : tensor<3xi1>, tensor<3xf32>
  return %s, %d, %e : tensor<3xf32>, tensor<f32>, tensor<3xf32>
}""")
text_program("dynamic_ops", """
func.func @main(%a: tensor<?x4xf32>, %shape: tensor<2xi64>,
                %start: tensor<2xi64>, %limit: tensor<2xi64>,
                %stride: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<?x?xf32>,
                tensor<?x?xf32>, tensor<?xi32>) {
  %0 = stablehlo.dynamic_broadcast_in_dim %a, %shape, dims = [0, 1]
      {known_expanding_dimensions = array<i64: 0>,
       known_nonexpanding_dimensions = array<i64: 1>}
      : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = stablehlo.dynamic_reshape %a, %shape
      : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %2 = stablehlo.real_dynamic_slice %a, %start, %limit, %stride
      : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
      -> tensor<?x?xf32>
  %n = stablehlo.constant dense<5> : tensor<1xi64>
  %3 = stablehlo.dynamic_iota %n, dim = 0 : (tensor<1xi64>) -> tensor<?xi32>
  return %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>,
                          tensor<?xi32>
}""")
text_program("chlo_ops", """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xi1>,
    tensor<4xf32>, tensor<4xf32>) {
  %0 = chlo.broadcast_compare %a, %b {comparison_direction =
      #chlo<comparison_direction LT>, compare_type = #chlo<comparison_type FLOAT>}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = chlo.broadcast_add %a, %b : (tensor<4xf32>, tensor<4xf32>)
      -> tensor<4xf32>
  %2 = chlo.next_after %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
}""")
text_program("mesh_axes", """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = #stablehlo.replica_group_mesh_axes<
      mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>,
                                     #stablehlo.mesh_axis<name = "y", size = 4>],
                             device_ids = dense<[0, 1, 2, 3, 4, 5, 6, 7]>
                                 : tensor<8xi64>>,
      axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>,
              #stablehlo.axis_ref<name = "x">]>}
      : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.all_gather"(%0) {all_gather_dim = 0 : i64,
      replica_groups = #stablehlo.replica_group_mesh_axes<
          mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x",
                                                              size = 2>]>,
          axes = [#stablehlo.axis_ref<name = "x">]>}
      : (tensor<4xf32>) -> tensor<8xf32>
  %2 = stablehlo.slice %1 [0:4] : (tensor<8xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}""", versions=(5,))
text_program("mesh_axes_symbol", """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.all_gather"(%a) {all_gather_dim = 0 : i64,
      replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh,
          axes = [#stablehlo.axis_ref<name = "x">]>}
      : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}""")
text_program("chlo_scan", """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>, %i: tensor<f32>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<f32>) {
  %0:3 = "chlo.scan"(%a, %b, %i) <{dimension = 0 : i64, is_reverse = true,
      operandSegmentSizes = array<i32: 2, 1>,
      resultSegmentSizes = array<i32: 2, 1>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<i32>, %c: tensor<f32>):
    %s = stablehlo.add %x, %c : tensor<f32>
    stablehlo.return %s, %y, %s : tensor<f32>, tensor<i32>, tensor<f32>
  }) : (tensor<4xf32>, tensor<4xi32>, tensor<f32>)
      -> (tensor<4xf32>, tensor<4xi32>, tensor<f32>)
  return %0#0, %0#1, %0#2 : tensor<4xf32>, tensor<4xi32>, tensor<f32>
}""", versions=(5, 3, 4))
text_program("chlo_top_k_ragged", """
func.func @main(%a: tensor<2x6xf32>, %l: tensor<4x3xf32>, %r: tensor<2x3x5xf32>,
                %g: tensor<2xi64>) -> (tensor<2x2xf32>, tensor<4x5xf32>) {
  %v, %i = chlo.top_k(%a, k = 2) : tensor<2x6xf32>
      -> (tensor<2x2xf32>, tensor<2x2xi32>)
  %d = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers =
      #chlo.ragged_dot<lhs_batching_dimensions = [],
      rhs_batching_dimensions = [], lhs_contracting_dimensions = [1],
      rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0],
      rhs_group_dimensions = [0]>,
      precision_config = [#chlo<precision DEFAULT>, #chlo<precision HIGHEST>]}
      : (tensor<4x3xf32>, tensor<2x3x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
  return %v, %d : tensor<2x2xf32>, tensor<4x5xf32>
}""")
text_program("func_attrs", """
func.func public @main(%a: tensor<2xf32> {jax.arg_info = "a",
                                          mhlo.sharding = "{replicated}"},
                       %b: tensor<2xf32>)
    -> (tensor<2xf32> {jax.result_info = "out"}) {
  %0 = func.call @helper(%a, %b) : (tensor<2xf32>, tensor<2xf32>)
      -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @helper(%a: tensor<2xf32>, %b: tensor<2xf32>)
    -> tensor<2xf32> attributes {no_inline} {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}""", versions=(4, 5))
text_program("dense_resource", """
func.func @main() -> tensor<4xf32> {
  %0 = stablehlo.constant dense_resource<blob1> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F000000400000404000008040"
    }
  }
#-}""")
text_program("einsum_unary", """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>)
    -> (tensor<2x4xf32>, tensor<3x2xf32>) {
  %0 = "stablehlo.einsum"(%a, %b) {einsum_config = "ab,bc->ac"}
      : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->ba"}
      : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "stablehlo.torch_index_select"(%a, %a) {dim = 0 : i64, batch_dims = 0 : i64}
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x3xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<3x2xf32>
}""")


# --- writing ---------------------------------------------------------------


def save_npy(path, array):
  """np.save, except that the dtypes NumPy does not know (bfloat16,
  float8_*) are named as ml_dtypes names them, as Kiln's .npy files do."""
  array = np.asarray(array)  # (ascontiguousarray would make scalars 1-d)
  try:  # NumPy reads back the descr it writes only for its own dtypes
    native = np.dtype(array.dtype.str) == array.dtype
  except TypeError:
    native = False
  if native:
    np.save(path, array)
    return
  header = repr({"descr": array.dtype.name, "fortran_order": False,
                 "shape": array.shape})
  header += " " * (63 - (len(header) + 10) % 64) + "\n"
  with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little"))
    f.write(header.encode() + array.tobytes())


def write_bytes(path, module, version=None):
  buffer = io.BytesIO()
  if version is None:
    module.operation.write_bytecode(buffer)
  else:
    module.operation.write_bytecode(buffer, desired_version=version)
  with open(path, "wb") as f:
    f.write(buffer.getvalue())


def without_locations(module):
  """The module with its locations stripped (the repository's small
  inputs stay small, and name no folder of this machine)."""
  from jaxlib.mlir import passmanager  # pylint: disable=import-outside-toplevel
  with module.context:
    copy = ir.Module.parse(module.operation.get_asm())
    passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(
        copy.operation)
  return copy


def write_program(out_dir, name, builder, run_data, with_vhlo):
  module, run = builder()
  if not with_vhlo:  # --small
    module = without_locations(module)
  base = os.path.join(out_dir, name)
  write_bytes(base + ".mlirbc", module)
  versions = OLD_VERSIONS.get(name, ())
  if not with_vhlo:  # --small: the first older version only
    versions = versions[:1]
  for version in versions:
    write_bytes(f"{base}.v{version}.mlirbc", module, version)
  with open(base + ".mlir", "w") as f:
    f.write(str(module))
  if not with_vhlo:
    return
  with open(base + ".generic.mlir", "w") as f:
    f.write(module.operation.get_asm(print_generic_op_form=True))
  # Results first: JAX's compile cache holds this very module, and the
  # portable-artifact serializer rewrites the module it is given.
  if run_data and run is not None:
    inputs, outputs = run()
    for i, leaf in enumerate(inputs):
      save_npy(f"{base}.in{i}.npy", leaf)
    for i, leaf in enumerate(outputs):
      save_npy(f"{base}.out{i}.npy", leaf)
  try:
    with module.context:
      copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
    artifact = stablehlo.serialize_portable_artifact(
        copy, stablehlo.get_current_version())
    with open(base + ".vhlo.mlirbc", "wb") as f:
      f.write(artifact)
  except Exception:  # not every module has a portable form (sdy, chlo)
    pass


def text_file_programs(paths, kiln=None):
  """Programs from MLIR text files (each `// -----` part is one), for
  corpora of StableHLO tests: (name, builder) pairs. Ops of dialects JAX's
  MLIR does not know (check.*, the interpreter's) are kept unregistered;
  with `kiln`, each part is first printed in the generic form by
  `kiln print --generic`, which such ops need to parse there."""
  import subprocess  # pylint: disable=import-outside-toplevel
  programs = []
  for path in paths:
    with open(path) as f:
      parts = f.read().split("\n// -----")
    stem = os.path.splitext(os.path.basename(path))[0]
    for index, part in enumerate(parts):
      name = stem if len(parts) == 1 else f"{stem}.part{index}"

      def build(text=part):
        if kiln:
          printed = subprocess.run([kiln, "print", "--generic", "-"],
                                   input=text, capture_output=True, text=True)
          if printed.returncode != 0:
            raise ValueError(printed.stderr.strip()[:200])
          text = printed.stdout
        context = jax_mlir.make_ir_context()
        context.allow_unregistered_dialects = True
        with context:
          return ir.Module.parse(text), None

      programs.append((name, build))
  return programs


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("out_dir")
  parser.add_argument("--small", action="store_true",
                      help="only the few tiny programs kept in the repository "
                      "(bytecode and pretty text, nothing else)")
  parser.add_argument("--run-data", action="store_true",
                      help="also write inputs and JAX CPU results as .npy")
  parser.add_argument("--only", help="comma-separated program names")
  parser.add_argument("--text-files", nargs="+", metavar="FILE",
                      help="write these MLIR text files (each `// -----` part "
                      "a program) instead of the built-in programs")
  parser.add_argument("--kiln", help="with --text-files: a kiln binary to "
                      "print each part in the generic form first")
  args = parser.parse_args()
  os.makedirs(args.out_dir, exist_ok=True)
  wanted = set(args.only.split(",")) if args.only else None
  written, failed = 0, []
  programs = PROGRAMS
  if args.text_files:
    programs = text_file_programs(args.text_files, args.kiln)
  for name, builder in programs:
    if args.small and name not in SMALL:
      continue
    if wanted and name not in wanted:
      continue
    try:
      write_program(args.out_dir, name, builder, args.run_data,
                    with_vhlo=not args.small)
      written += 1
    except Exception as e:  # report and go on: one program is not the suite
      failed.append(f"{name}: {type(e).__name__}: {str(e)[:200]}")
  print(f"{written} programs written to {args.out_dir}")
  for line in failed:
    print("not written:", line, file=sys.stderr)
  return 0 if not failed else 1


if __name__ == "__main__":
  sys.exit(main())
