"""Elementwise ops under jit: math, comparisons, select, clamp, integers,
bitwise ops, shifts and conversions between dtypes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import bfloat16, check, random_array, run_both, assert_close

FLOATS = [np.float32, np.float16, bfloat16]

# name -> (function, low, high): inputs are drawn from [low, high].
UNARY = {
    "neg": (jnp.negative, -3, 3),
    "abs": (jnp.abs, -3, 3),
    "sign": (jnp.sign, -3, 3),
    "floor": (jnp.floor, -3, 3),
    "ceil": (jnp.ceil, -3, 3),
    "round": (jnp.round, -3, 3),
    "round_away": (lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
                   -3, 3),
    "trunc": (jnp.trunc, -3, 3),
    "sqrt": (jnp.sqrt, 0.01, 4),
    "rsqrt": (lax.rsqrt, 0.1, 4),
    "cbrt": (jnp.cbrt, -4, 4),
    "exp": (jnp.exp, -4, 4),
    "exp2": (jnp.exp2, -4, 4),
    "expm1": (jnp.expm1, -2, 2),
    "log": (jnp.log, 0.05, 5),
    "log1p": (jnp.log1p, -0.5, 3),
    "sin": (jnp.sin, -4, 4),
    "cos": (jnp.cos, -4, 4),
    "tan": (jnp.tan, -1.2, 1.2),
    "tanh": (jnp.tanh, -4, 4),
    "arcsin": (jnp.arcsin, -0.95, 0.95),
    "arccos": (jnp.arccos, -0.95, 0.95),
    "arctan": (jnp.arctan, -4, 4),
    "sinh": (jnp.sinh, -3, 3),
    "cosh": (jnp.cosh, -3, 3),
    "arcsinh": (jnp.arcsinh, -3, 3),
    "arccosh": (jnp.arccosh, 1.1, 4),
    "arctanh": (jnp.arctanh, -0.9, 0.9),
    "logistic": (jax.nn.sigmoid, -6, 6),
    "erf": (lax.erf, -2, 2),
    "erfc": (lax.erfc, -2, 2),
    "erf_inv": (lax.erf_inv, -0.95, 0.95),
    "lgamma": (lax.lgamma, 0.2, 5),
    "digamma": (lax.digamma, 0.3, 5),
    "square": (jnp.square, -3, 3),
    "reciprocal": (jnp.reciprocal, 0.2, 3),
    "relu": (jax.nn.relu, -3, 3),
    "gelu": (jax.nn.gelu, -3, 3),
    "softplus": (jax.nn.softplus, -3, 3),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32(name):
    fn, low, high = UNARY[name]
    check(fn, random_array((5, 7), np.float32, seed=1, low=low, high=high))


@pytest.mark.parametrize("dtype", [np.float16, bfloat16], ids=["f16", "bf16"])
def test_unary_half(dtype):
    names = ["neg", "abs", "floor", "sqrt", "exp", "log", "sin", "tanh",
             "logistic", "erf", "round", "rsqrt", "expm1", "log1p"]
    xs = [random_array((4, 6), dtype, seed=2, low=UNARY[n][1], high=UNARY[n][2])
          for n in names]
    check(lambda xs: {n: UNARY[n][0](x) for n, x in zip(names, xs)}, xs)


def test_unary_special_values():
    # No subnormals: XLA:CPU flushes them to zero, which is not a contract.
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e38],
                 np.float32)
    for fn in (jnp.abs, jnp.sign, jnp.sqrt, jnp.exp, jnp.log, jnp.tanh,
               jnp.floor, jnp.isfinite, jnp.isnan, jnp.isinf, jnp.signbit):
        check(fn, x)


BINARY = {
    "add": (jnp.add, -3, 3),
    "sub": (jnp.subtract, -3, 3),
    "mul": (jnp.multiply, -3, 3),
    "div": (jnp.divide, 0.5, 3),
    "pow": (jnp.power, 0.1, 3),
    "max": (jnp.maximum, -3, 3),
    "min": (jnp.minimum, -3, 3),
    "atan2": (jnp.arctan2, -3, 3),
    "rem": (lax.rem, 0.5, 5),
    "fmod": (jnp.fmod, 0.5, 5),
    "remainder": (jnp.remainder, 0.5, 5),
    "floor_divide": (jnp.floor_divide, 0.5, 5),
    "nextafter": (jnp.nextafter, -3, 3),
    "hypot": (jnp.hypot, -3, 3),
    "logaddexp": (jnp.logaddexp, -3, 3),
    "copysign": (jnp.copysign, -3, 3),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=["f32", "f16", "bf16"])
def test_binary_float(dtype):
    names = sorted(BINARY)
    xs = [random_array((3, 5), dtype, seed=3, low=BINARY[n][1], high=BINARY[n][2])
          for n in names]
    ys = [random_array((3, 5), dtype, seed=4, low=BINARY[n][1], high=BINARY[n][2])
          for n in names]
    check(lambda xs, ys: {n: BINARY[n][0](x, y)
                          for n, x, y in zip(names, xs, ys)}, xs, ys)


def test_binary_broadcast_and_scalars():
    x = random_array((2, 1, 4), np.float32, seed=5)
    y = random_array((3, 1), np.float32, seed=6)
    check(lambda a, b: a * b + 2.5 - a / (1 + b * b), x, y)


def test_max_min_nan_propagate():
    x = np.array([1.0, np.nan, -2.0, np.nan, 0.0], np.float32)
    y = np.array([np.nan, 3.0, -1.0, np.nan, -0.0], np.float32)
    check(lambda a, b: (jnp.maximum(a, b), jnp.minimum(a, b)), x, y)


CMP = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less,
       "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int8,
                                   bfloat16, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_comparison(dtype):
    x = random_array((20,), dtype, seed=7, low=-3, high=3)
    y = random_array((20,), dtype, seed=8, low=-3, high=3)
    if np.dtype(dtype).kind == "f":
        x[:3] = [np.nan, 1.0, np.nan]
        y[:3] = [1.0, np.nan, np.nan]
    check(lambda a, b: {name: fn(a, b) for name, fn in CMP.items()}, x, y)


def test_select_and_where():
    pred = random_array((4, 5), np.bool_, seed=9)
    x = random_array((4, 5), np.float32, seed=10)
    y = random_array((4, 5), np.float32, seed=11)
    check(lax.select, pred, x, y)
    check(lambda p, a, b: jnp.where(p, a, b), pred, x, y)
    check(lambda a: jnp.where(a > 0, a, 0.0), x)
    check(lambda p, a, b: jnp.where(p, a, b), pred, x.astype(np.int32),
          y.astype(np.int32))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_clamp(dtype):
    x = random_array((30,), dtype, seed=12, low=0 if dtype == np.uint8 else -5,
                     high=10)
    check(lambda a: lax.clamp(dtype(1), a, dtype(4)), x)
    check(lambda a: jnp.clip(a, 2, 6), x)
    lo = np.full((30,), 1, dtype)
    hi = np.full((30,), 5, dtype)
    check(lax.clamp, lo, x, hi)


INT_TYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]
INT_BINARY = {
    "add": jnp.add,
    "sub": jnp.subtract,
    "mul": jnp.multiply,
    "max": jnp.maximum,
    "min": jnp.minimum,
    "div": lax.div,  # truncating
    "rem": lax.rem,  # sign of the dividend
    "floor_divide": jnp.floor_divide,
    "remainder": jnp.remainder,
    "power": jnp.power,
}


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda d: np.dtype(d).name)
def test_integer_binary(dtype):
    signed = np.issubdtype(dtype, np.signedinteger)
    x = random_array((40,), dtype, seed=13, low=-100 if signed else 0, high=100)
    y = random_array((40,), dtype, seed=14, low=-9 if signed else 1, high=9)
    y[y == 0] = 3
    exponent = np.abs(y) % 4
    check(lambda a, b, e: dict(
        {name: fn(a, b) for name, fn in INT_BINARY.items() if name != "power"},
        power=jnp.power(a, e)), x, y, exponent)


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda d: np.dtype(d).name)
def test_integer_wraparound(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, info.max - 1, 0, 1], dtype)
    y = np.array([1, 1, 7, 1, info.max], dtype)
    check(lambda a, b: (a + b, a - b, a * b, -a), x, y)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32])
def test_integer_unary(dtype):
    signed = np.issubdtype(dtype, np.signedinteger)
    x = random_array((40,), dtype, seed=15, low=-100 if signed else 0, high=100)
    x[:2] = [np.iinfo(dtype).max, np.iinfo(dtype).min]
    check(lambda a: (jnp.abs(a), jnp.sign(a), lax.population_count(a),
                     lax.clz(a), lax.integer_pow(a, 3), jnp.square(a)), x)


def test_integer_division_by_zero_and_overflow():
    # XLA defines x / 0 = -1 (all bits set) and x % 0 = x for integers, and
    # INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0.
    x = np.array([7, -7, 0, np.iinfo(np.int32).min], np.int32)
    y = np.array([0, 0, 0, -1], np.int32)
    check(lambda a, b: (lax.div(a, b), lax.rem(a, b)), x, y)
    u = np.array([7, 0, 255], np.uint8)
    check(lambda a, b: (lax.div(a, b), lax.rem(a, b)), u,
          np.zeros(3, np.uint8))


BITWISE = {"and": jnp.bitwise_and, "or": jnp.bitwise_or,
           "xor": jnp.bitwise_xor}


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.uint8,
                                   np.uint16, np.uint32],
                         ids=lambda d: np.dtype(d).name)
def test_bitwise(dtype):
    x = random_array((32,), dtype, seed=16, low=None, high=None)
    y = random_array((32,), dtype, seed=17, low=None, high=None)
    check(lambda a, b: dict({name: fn(a, b) for name, fn in BITWISE.items()},
                            not_=jnp.bitwise_not(a)), x, y)


SHIFTS = {"left": lax.shift_left,
          "right_logical": lax.shift_right_logical,
          "right_arithmetic": lax.shift_right_arithmetic}


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8,
                                   np.uint32], ids=lambda d: np.dtype(d).name)
def test_shifts(dtype):
    bits = 8 * np.dtype(dtype).itemsize
    x = random_array((bits + 4,), dtype, seed=18, low=None, high=None)
    x[0] = np.iinfo(dtype).min
    x[1] = np.iinfo(dtype).max
    # Every shift amount, including >= the bit width (defined by StableHLO:
    # 0 for left/logical, the sign for arithmetic).
    amount = np.arange(bits + 4).astype(dtype)
    check(lambda a, b: {name: fn(a, b) for name, fn in SHIFTS.items()},
          x, amount)


def test_jnp_shifts():
    x = np.array([1, -8, 100, -1], np.int32)
    s = np.array([0, 1, 3, 31], np.int32)
    check(lambda a, b: (jnp.left_shift(a, b), jnp.right_shift(a, b)), x, s)


CONVERT_TYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16,
                 np.uint32, bfloat16, np.float16, np.float32, np.complex64]


def _convert_input(src):
    """Values representable in every destination type where it matters."""
    src = np.dtype(src)
    if src == np.bool_:
        return np.array([True, False, True, True, False])
    values = [0, 1, 2, 5, 7, 100, 127]
    if src.kind in "fc":
        values += [0.5, 1.7, 2.5, 99.9, -0.0]
    if src.kind in "ifc" and src.kind != "u":
        values += [-1, -3, -100]
    if src.kind in "iu" and src.itemsize >= 2:
        values += [300, 1000, 40000 % (np.iinfo(src).max + 1)]
    return np.array(values).astype(src)


@pytest.mark.parametrize("src", CONVERT_TYPES, ids=lambda d: np.dtype(d).name)
def test_convert(src):
    """Converts `src` to every type of CONVERT_TYPES in one program."""
    x = _convert_input(src)
    # Negative float -> unsigned is undefined: convert only the rest there.
    nonneg = x[np.real(x.astype(np.complex64)) >= 0]

    def convert_all(a, a_nonneg):
        out = {}
        for dst in CONVERT_TYPES:
            dst = np.dtype(dst)
            value = a_nonneg if x.dtype.kind in "fc" and dst.kind == "u" else a
            if x.dtype.kind == "c" and dst.kind != "c":
                value = jnp.real(value)
            out[dst.name] = lax.convert_element_type(value, dst)
        return out

    k, c = run_both(convert_all, x, nonneg)
    # The conversion itself is exact or correctly rounded: compare exactly.
    assert_close(k, c, rtol=0, atol=0)


def test_convert_float_to_int_saturates():
    # XLA:CPU clamps out-of-range floats to the integer range and NaN to 0.
    x = np.array([1e10, -1e10, np.inf, -np.inf, np.nan, 2.9, -2.9], np.float32)
    check(lambda a: (a.astype(jnp.int32), a.astype(jnp.int8),
                     a.astype(jnp.int16)), x)


def test_convert_rounding_to_half():
    # Round-to-nearest-even on the way down to f16 and bf16, overflow to inf.
    x = np.array([1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 65520.0, 1e-4, 7e-5,
                  1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 3.4e38, np.nan], np.float32)
    check(lambda a: (a.astype(jnp.float16), a.astype(jnp.bfloat16),
                     a.astype(jnp.bfloat16).astype(jnp.float16)), x)


def test_bitcast_convert():
    x = random_array((8,), np.float32, seed=19)
    check(lambda a: lax.bitcast_convert_type(a, jnp.uint32), x)
    check(lambda a: lax.bitcast_convert_type(a, jnp.uint8), x)
    check(lambda a: lax.bitcast_convert_type(a, jnp.float32),
          x.view(np.int32))
    check(lambda a: lax.bitcast_convert_type(a, jnp.bfloat16),
          x.view(np.uint16))


def test_fused_expression():
    x = random_array((16, 16), np.float32, seed=20)
    y = random_array((16,), np.float32, seed=21)
    check(lambda a, b: jnp.tanh(a * b + 1) * jnp.exp(-a * a) - jnp.log1p(b * b),
          x, y)


def test_erfc_and_gelu_over_the_whole_range():
    # Kiln runs JAX's expansion of erfc as one float erfc
    # (src/compile/recover_erfc.h): against XLA:CPU, which runs the
    # expansion itself, and against erfc in double, where Kiln's error is
    # at most the expansion's (XLA's) plus a few ulps.
    import scipy.special
    x = np.concatenate([np.linspace(-12, 12, 24001),
                        [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    kiln_out, cpu_out = run_both(
        lambda x: (lax.erfc(x), jax.nn.gelu(x, approximate=False)), x)
    assert_close(kiln_out, cpu_out, rtol=1e-5, atol=1e-30)
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore"):  # -inf * erfc(inf): NaN, skipped
        exact = (scipy.special.erfc(wide),
                 0.5 * wide * scipy.special.erfc(-wide / np.sqrt(2)))
    for k, c, e in zip(kiln_out, cpu_out, exact):
        finite = np.isfinite(e) & (np.abs(e) > 1e-30)
        ulp = np.spacing(np.abs(e[finite]).astype(np.float32)).astype(np.float64)
        kiln_ulps = np.abs(k[finite] - e[finite]) / ulp
        cpu_ulps = np.abs(c[finite] - e[finite]) / ulp
        assert kiln_ulps.max() <= cpu_ulps.max() + 4, (kiln_ulps.max(),
                                                       cpu_ulps.max())
