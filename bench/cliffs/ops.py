"""Single operations, generated from tables: each table lists ops with the
element types they take and their input domains, and a table function
crosses them with the sizes, element types and operand layouts of the
mode (registry.Plan).

Quick mode: every op once (f32 where it takes f32, else its first type)
at 1 Mi elements; the "core" ops also at the other element types, a few
at 4 elements (dispatch) and 16 Mi (memory bound), and with transposed
and broadcast operands. Full mode: every op at every element type it
takes and every size of registry.FULL_SIZES, every layout at 1 Mi.
"""

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import jax.scipy.linalg as jsl
import jax.scipy.special as jss
from jax import lax

from registry import (ALL, BOOL, COMPLEX, DTYPES, FLOAT, FULL_SIZES,
                      INEXACT, INT, KI, MI, NUMERIC, SIGNED, draw, normal,
                      square_ish, uniform)


@dataclasses.dataclass(frozen=True)
class Op:
    family: str  # lax, jnp, nn, special: the namespace the op comes from
    name: str
    fn: Callable
    dtypes: tuple  # the element types it takes
    domains: tuple = ("any",)  # one per operand (registry.DOMAINS)
    core: bool = False  # quick mode: at every element type, not just one
    check: bool = True
    tolerance: float = None
    quick_n: int = MI  # elements in quick mode
    max_n: int = 16 * MI  # the largest size in full mode (slow series)


# Element types quick mode gives the core ops besides their first one.
QUICK_DTYPES = ("bf16", "f16", "f64", "i32", "u8", "bool", "c64")


def first_dtype(op: Op) -> str:
    return "f32" if "f32" in op.dtypes else op.dtypes[0]


def dtypes_for(reg, op: Op) -> list:
    if reg.plan.full:
        return list(op.dtypes)
    first = first_dtype(op)
    rest = [d for d in QUICK_DTYPES if op.core and d in op.dtypes and
            d != first]
    return [first] + rest


# ------------------------------------------------------------ elementwise

# Functions evaluated by series or loops: tens to hundreds of ms for 1 Mi
# f32 on XLA:CPU, so quick mode takes 64 Ki of them and full mode stops
# at 1 Mi.
SERIES = {"quick_n": 64 * KI, "max_n": MI}

U = Op
UNARY = [
    U("lax", "exp", lax.exp, INEXACT, ("small",), core=True),
    U("lax", "exp2", lax.exp2, FLOAT, ("small",)),
    U("lax", "expm1", lax.expm1, INEXACT, ("small",)),
    U("lax", "log", lax.log, INEXACT, ("pos",)),
    U("lax", "log1p", lax.log1p, INEXACT, ("pos",)),
    U("lax", "sqrt", lax.sqrt, INEXACT, ("pos",)),
    U("lax", "rsqrt", lax.rsqrt, INEXACT, ("pos",)),
    U("lax", "cbrt", lax.cbrt, FLOAT),
    U("lax", "sin", lax.sin, INEXACT),
    U("lax", "cos", lax.cos, INEXACT),
    U("lax", "tan", lax.tan, INEXACT, ("unit",)),
    U("lax", "tanh", lax.tanh, INEXACT, ("small",), core=True),
    U("lax", "sinh", lax.sinh, INEXACT, ("small",)),
    U("lax", "cosh", lax.cosh, INEXACT, ("small",)),
    U("lax", "asin", lax.asin, INEXACT, ("unit",)),
    U("lax", "acos", lax.acos, INEXACT, ("unit",)),
    U("lax", "atan", lax.atan, INEXACT),
    U("lax", "asinh", lax.asinh, INEXACT),
    U("lax", "acosh", lax.acosh, INEXACT, ("ge1",)),
    U("lax", "atanh", lax.atanh, INEXACT, ("unit",)),
    U("lax", "logistic", lax.logistic, INEXACT),
    U("lax", "erf", lax.erf, FLOAT),
    U("lax", "erfc", lax.erfc, FLOAT),
    U("lax", "erf_inv", lax.erf_inv, FLOAT, ("unit",)),
    U("lax", "lgamma", lax.lgamma, FLOAT, ("pos",), core=True),
    U("lax", "digamma", lax.digamma, FLOAT, ("pos",)),
    U("lax", "bessel_i0e", lax.bessel_i0e, FLOAT),
    U("lax", "bessel_i1e", lax.bessel_i1e, FLOAT),
    U("lax", "floor", lax.floor, FLOAT),
    U("lax", "ceil", lax.ceil, FLOAT),
    U("lax", "round", lax.round, FLOAT),
    U("jnp", "rint", jnp.rint, FLOAT),
    U("lax", "abs", lax.abs, FLOAT + SIGNED + COMPLEX, core=True),
    U("lax", "neg", lax.neg, FLOAT + SIGNED + COMPLEX),
    U("lax", "sign", lax.sign, FLOAT + SIGNED + COMPLEX),
    U("lax", "square", lax.square, NUMERIC),
    U("jnp", "reciprocal", jnp.reciprocal, INEXACT, ("nonzero",)),
    U("lax", "is_finite", lax.is_finite, FLOAT),
    U("lax", "integer_pow 3", lambda x: lax.integer_pow(x, 3), NUMERIC,
      core=True),
    U("jnp", "x ** 3.0", lambda x: x ** 3.0, FLOAT, core=True),
    U("lax", "bitwise_not", lax.bitwise_not, INT + BOOL, core=True),
    U("lax", "population_count", lax.population_count, INT),
    U("lax", "clz", lax.clz, INT),
    U("lax", "real", lax.real, COMPLEX),
    U("lax", "imag", lax.imag, COMPLEX),
    U("lax", "conj", lax.conj, COMPLEX),
    U("jnp", "angle", jnp.angle, COMPLEX),
    U("nn", "relu", jax.nn.relu, FLOAT + SIGNED),
    U("nn", "relu6", jax.nn.relu6, FLOAT),
    U("nn", "gelu tanh", lambda x: jax.nn.gelu(x, approximate=True), FLOAT),
    U("nn", "gelu erf", lambda x: jax.nn.gelu(x, approximate=False), FLOAT),
    U("nn", "silu", jax.nn.silu, FLOAT),
    U("nn", "softplus", jax.nn.softplus, FLOAT),
    U("nn", "sigmoid", jax.nn.sigmoid, FLOAT),
    U("nn", "log_sigmoid", jax.nn.log_sigmoid, FLOAT),
    U("nn", "elu", jax.nn.elu, FLOAT),
    U("nn", "selu", jax.nn.selu, FLOAT),
    U("nn", "celu", jax.nn.celu, FLOAT),
    U("nn", "leaky_relu", jax.nn.leaky_relu, FLOAT),
    U("nn", "mish", jax.nn.mish, FLOAT),
    U("nn", "hard_swish", jax.nn.hard_swish, FLOAT),
    U("special", "ndtr", jss.ndtr, FLOAT),
    U("special", "ndtri", jss.ndtri, FLOAT, ("prob",)),
    U("special", "log_ndtr", jss.log_ndtr, FLOAT),
    U("special", "i0", jss.i0, FLOAT),
    U("special", "i1", jss.i1, FLOAT),
    U("special", "erfcx", jss.erfcx, FLOAT),
    U("special", "logit", jss.logit, FLOAT, ("prob",)),
    U("special", "entr", jss.entr, FLOAT, ("pos",)),
    U("special", "gamma", jss.gamma, FLOAT, ("pos",)),
    U("special", "spence", jss.spence, FLOAT, ("pos",), **SERIES),
    U("special", "expi", jss.expi, FLOAT, ("pos",), **SERIES),
    # exp1 takes XLA:CPU 25 s for 1 Mi f32 (2 cores).
    U("special", "exp1", jss.exp1, FLOAT, ("pos",), quick_n=KI,
      max_n=64 * KI),
    U("special", "dawsn", jss.dawsn, FLOAT),
    U("special", "polygamma 1", lambda x: jss.polygamma(1, x), FLOAT,
      ("pos",), **SERIES),
]

B = Op
BINARY = [
    B("lax", "add", lax.add, NUMERIC, core=True),
    B("lax", "sub", lax.sub, NUMERIC),
    B("lax", "mul", lax.mul, NUMERIC, core=True),
    B("lax", "div", lax.div, NUMERIC, ("any", "nonzero")),
    B("lax", "rem", lax.rem, FLOAT + INT, ("any", "nonzero")),
    B("lax", "pow", lax.pow, INEXACT, ("pos", "small")),
    B("lax", "max", lax.max, FLOAT + INT + BOOL, core=True),
    B("lax", "min", lax.min, FLOAT + INT + BOOL),
    B("lax", "atan2", lax.atan2, FLOAT),
    B("lax", "nextafter", lax.nextafter, ("f32", "f64")),
    B("lax", "eq", lax.eq, ALL),
    B("lax", "lt", lax.lt, FLOAT + INT),
    B("lax", "and", lax.bitwise_and, INT + BOOL, core=True),
    B("lax", "or", lax.bitwise_or, INT + BOOL),
    B("lax", "xor", lax.bitwise_xor, INT + BOOL),
    B("lax", "shift_left", lax.shift_left, INT, ("int", "shift")),
    B("lax", "shift_right_arithmetic", lax.shift_right_arithmetic, INT,
      ("int", "shift")),
    B("lax", "shift_right_logical", lax.shift_right_logical, INT,
      ("int", "shift")),
    B("jnp", "floor_divide", jnp.floor_divide, FLOAT + INT,
      ("any", "nonzero")),
    B("jnp", "logaddexp", jnp.logaddexp, FLOAT),
    B("jnp", "hypot", jnp.hypot, FLOAT),
    B("jnp", "copysign", jnp.copysign, FLOAT),
    B("special", "xlogy", jss.xlogy, FLOAT, ("any", "pos")),
    B("special", "xlog1py", jss.xlog1py, FLOAT, ("any", "pos")),
    B("special", "zeta", jss.zeta, FLOAT, ("ge1", "pos"), **SERIES),
    B("special", "gammainc", jss.gammainc, FLOAT, ("pos", "pos"), **SERIES),
    B("special", "gammaincc", jss.gammaincc, FLOAT, ("pos", "pos"),
      **SERIES),
    B("special", "betaln", jss.betaln, FLOAT, ("pos", "pos"), **SERIES),
    B("special", "rel_entr", jss.rel_entr, FLOAT, ("pos", "pos")),
]

TERNARY = [
    Op("lax", "select", lambda c, a, b: lax.select(c, a, b), ALL,
       ("cond", "any", "any"), core=True),
    Op("lax", "clamp", lambda x, lo, hi: lax.clamp(lo, x, hi), FLOAT + INT,
       ("any", "low", "high")),
    Op("jnp", "a*b+c", lambda a, b, c: a * b + c, NUMERIC),
    Op("special", "betainc", jss.betainc, FLOAT, ("pos", "pos", "prob"),
       **SERIES),
]

# Quick mode: these run also at 4 elements and 16 Mi, and with every
# operand layout (2-D, first operand transposed, broadcast row, column
# and scalar).
QUICK_SIZES_OPS = {"exp", "add", "x ** 3.0", "lgamma"}
QUICK_LAYOUT_OPS = {"exp", "add", "select"}
LAYOUTS = ("T", "row", "col", "scalar")


def _draw_operand(rng, shape, dtype, domain):
    # Ternary ops' own domains: a boolean condition, clamp's bounds.
    if domain == "cond":
        return rng.random(shape) < 0.5
    if domain == "low":
        return uniform(rng, shape, dtype, -2, -1)
    if domain == "high":
        return uniform(rng, shape, dtype, 1, 2)
    return draw(rng, shape, dtype, domain)


def elementwise_case(reg, op: Op, arity: int, dtype: str, n: int,
                     layout: str = ""):
    """One elementwise case: `op` on operands of n elements.

    Layouts: "" (1-D operands), "T" (2-D, the first operand transposed:
    op(a.T, b, ...)), "row"/"col" (the second operand a vector broadcast
    along rows or columns), "scalar" (the second a 0-d array).
    """
    domains = (op.domains + ("any",) * arity)[:arity]
    rows, cols = square_ish(n)
    shapes = [(n,)] * arity
    fn = op.fn
    if layout == "T":
        shapes = [(cols, rows)] + [(rows, cols)] * (arity - 1)
        fn = _transposed_first(op.fn)
    elif layout in ("row", "col", "scalar"):
        if arity < 2:
            return
        other = {"row": (cols,), "col": (rows,), "scalar": ()}[layout]
        shapes = [(rows, cols), other] + [(rows, cols)] * (arity - 2)
        fn = _broadcast_second(op.fn, layout)

    def args(rng, shapes=shapes, dtype=dtype, domains=domains):
        return tuple(_draw_operand(rng, s, dtype, d)
                     for s, d in zip(shapes, domains))

    reg.add(op.family, op.name, dtype, n, fn, args, variant=layout,
            tags=("elementwise",), check=op.check, tolerance=op.tolerance)


def _transposed_first(fn):
    return lambda a, *rest: fn(a.T, *rest)


def _broadcast_second(fn, layout):
    def wrapped(a, b, *rest):
        if layout == "col":
            b = b[:, None]
        return fn(a, jnp.broadcast_to(b, a.shape), *rest)
    return wrapped


def elementwise_table(ops, arity):
    def table(reg):
        for op in ops:
            for i, dtype in enumerate(dtypes_for(reg, op)):
                if reg.plan.full:
                    for n in FULL_SIZES:
                        if n <= op.max_n:
                            elementwise_case(reg, op, arity, dtype, n)
                    for layout in LAYOUTS:
                        elementwise_case(reg, op, arity, dtype,
                                         min(MI, op.max_n), layout)
                    continue
                elementwise_case(reg, op, arity, dtype, op.quick_n)
                if i == 0 and op.name in QUICK_SIZES_OPS:
                    elementwise_case(reg, op, arity, dtype, 4)
                    elementwise_case(reg, op, arity, dtype, 16 * MI)
                if i == 0 and op.name in QUICK_LAYOUT_OPS:
                    for layout in LAYOUTS:
                        elementwise_case(reg, op, arity, dtype, MI, layout)
    return table


# -------------------------------------------------------------- converts

QUICK_CONVERTS = [("f32", "bf16"), ("bf16", "f32"), ("f32", "f16"),
                  ("f32", "i32"), ("i32", "f32"), ("u8", "f32"),
                  ("f32", "bool"), ("f32", "f64"), ("f64", "f32"),
                  ("c64", "f32")]


def convert_table(reg):
    pairs = ([(a, b) for a in ALL for b in ALL if a != b]
             if reg.plan.full else QUICK_CONVERTS)
    sizes = FULL_SIZES if reg.plan.full else (MI,)
    for source, target in pairs:
        for n in sizes:
            def fn(x, target=target):
                    return lax.convert_element_type(x, DTYPES[target])

            # 0..100: inside every type's range, so that no conversion
            # is the implementation-defined kind.
            def args(rng, source=source, n=n):
                return (uniform(rng, (n,), source, 0, 100),)
            reg.add("lax", "convert", f"{source}->{target}", n, fn, args,
                    tags=("elementwise", "convert"))
    for source, target in ([("f32", "i32"), ("i32", "f32")] if not
                           reg.plan.full else
                           [("f32", "i32"), ("i32", "f32"), ("f64", "i64"),
                            ("bf16", "i8"), ("c64", "f64"), ("u8", "bool")]):
        def fn(x, target=target):
            return lax.bitcast_convert_type(x, DTYPES[target])

        def args(rng, source=source):
            return (uniform(rng, (MI,), source, 0, 100),)
        reg.add("lax", "bitcast_convert", f"{source}->{target}", MI, fn, args,
                tags=("elementwise", "convert"))


# ------------------------------------------------------------- reductions

R = Op
# fn(x, axis): axis is 1 (along rows), 0 (along columns) or None.
REDUCTIONS = [
    R("jnp", "sum", lambda x, a: jnp.sum(x, axis=a), NUMERIC, core=True),
    R("jnp", "prod", lambda x, a: jnp.prod(x, axis=a), FLOAT, ("near1",)),
    R("jnp", "max", lambda x, a: jnp.max(x, axis=a), FLOAT + INT, core=True),
    R("jnp", "min", lambda x, a: jnp.min(x, axis=a), FLOAT + INT),
    R("jnp", "mean", lambda x, a: jnp.mean(x, axis=a), INEXACT),
    R("jnp", "argmax", lambda x, a: jnp.argmax(x, axis=a), FLOAT + INT),
    R("jnp", "argmin", lambda x, a: jnp.argmin(x, axis=a), FLOAT + INT),
    R("jnp", "any", lambda x, a: jnp.any(x, axis=a), BOOL),
    R("jnp", "all", lambda x, a: jnp.all(x, axis=a), BOOL),
    R("jnp", "var", lambda x, a: jnp.var(x, axis=a), FLOAT),
    R("jnp", "std", lambda x, a: jnp.std(x, axis=a), FLOAT),
    R("nn", "logsumexp", lambda x, a: jax.nn.logsumexp(x, axis=a), FLOAT),
    R("nn", "softmax", lambda x, a: jax.nn.softmax(x, axis=a), FLOAT),
    R("nn", "log_softmax", lambda x, a: jax.nn.log_softmax(x, axis=a),
      FLOAT),
    R("nn", "standardize", lambda x, a: jax.nn.standardize(x, axis=a), FLOAT),
    R("jnp", "linalg.norm", lambda x, a: jnp.linalg.norm(x, axis=a),
      FLOAT + COMPLEX),
    R("jnp", "count_nonzero", lambda x, a: jnp.count_nonzero(x, axis=a),
      INT + BOOL),
    R("jnp", "cumsum", lambda x, a: jnp.cumsum(x, axis=a), NUMERIC,
      core=True),
    R("jnp", "cumprod", lambda x, a: jnp.cumprod(x, axis=a), FLOAT,
      ("near1",)),
    R("lax", "cummax", lambda x, a: lax.cummax(x, axis=0 if a is None else a),
      FLOAT + INT),
    R("lax", "cumlogsumexp",
      lambda x, a: lax.cumlogsumexp(x, axis=0 if a is None else a), FLOAT),
]

AXES = {"rows": 1, "columns": 0, "all": None}
QUICK_AXES_OPS = {"sum", "argmax", "logsumexp", "cumsum"}


def reduction_case(reg, op: Op, dtype: str, n: int, axes: str):
    rows, cols = square_ish(n)
    axis = AXES[axes]
    cumulative = op.name.startswith("cum")
    if cumulative and axes == "all":
        shape = (n,)  # a cumulative op over everything: the flat array
        axis = 0
    else:
        shape = (rows, cols)

    def fn(x, axis=axis, f=op.fn):
        return f(x, axis)

    def args(rng, dtype=dtype, shape=shape, domain=op.domains[0]):
        if domain == "near1":  # products that stay finite
            return (uniform(rng, shape, dtype, 0.999, 1.001),)
        return (draw(rng, shape, dtype, "any"),)
    reg.add(op.family, op.name, dtype, n, fn, args, variant=axes,
            tags=("reduction",),
            # Sums of a million f32 in another order differ by more than
            # elementwise results do.
            tolerance=1e-3 if dtype in ("f32", "c64") and n >= MI else None)


def reduction_table(reg):
    for op in REDUCTIONS:
        for i, dtype in enumerate(dtypes_for(reg, op)):
            if reg.plan.full:
                for n in FULL_SIZES:
                    for axes in AXES:
                        reduction_case(reg, op, dtype, n, axes)
                continue
            if i == 0 and op.name in QUICK_AXES_OPS:
                for axes in AXES:
                    reduction_case(reg, op, dtype, MI, axes)
            else:
                reduction_case(reg, op, dtype, MI, "rows")
            if i == 0 and op.name == "sum":
                reduction_case(reg, op, dtype, 4, "all")
                reduction_case(reg, op, dtype, 16 * MI, "all")


# -------------------------------------------------------- sorts and search

def sort_table(reg):
    full = reg.plan.full
    sizes = (KI, 64 * KI, MI, 16 * MI) if full else (MI,)
    dtypes = FLOAT + INT if full else ("f32",)
    for n in sizes:
        rows, cols = square_ish(n)
        for dtype in dtypes + (() if full else ("i32",)):
            def matrix(rng, dtype=dtype, shape=(rows, cols)):
                return (draw(rng, shape, dtype),)

            def flat(rng, dtype=dtype, n=n):
                return (draw(rng, (n,), dtype),)
            reg.add("jnp", "sort", dtype, n, lambda x: jnp.sort(x, axis=1),
                    matrix, variant="rows", tags=("sort",))
            if dtype != "f32" and not full:
                continue
            reg.add("jnp", "sort", dtype, n, lambda x: jnp.sort(x, axis=0),
                    matrix, variant="columns", tags=("sort",))
            reg.add("jnp", "sort", dtype, n, jnp.sort, flat, variant="flat",
                    tags=("sort",))
            reg.add("jnp", "argsort", dtype, n,
                    lambda x: jnp.argsort(x, axis=1), matrix, variant="rows",
                    tags=("sort",))
            for k in (8, 128):
                reg.add("lax", f"top_k {k}", dtype, n,
                        lambda x, k=k: lax.top_k(x, k)[0], matrix,
                        variant="rows", tags=("sort",))
            reg.add("jnp", "median", dtype, n,
                    lambda x: jnp.median(x, axis=1), matrix, variant="rows",
                    tags=("sort",))
            reg.add("lax", "sort_key_val", dtype, n,
                    lambda k, v: lax.sort_key_val(k, v, dimension=1),
                    lambda rng, dtype=dtype, shape=(rows, cols): (
                        draw(rng, shape, dtype),
                        rng.integers(0, 1 << 20, shape, dtype="int32")),
                    variant="rows", tags=("sort",))

            def search(rng, dtype=dtype, n=n):
                table = draw(rng, (min(n, 64 * KI),), dtype)
                return (table, draw(rng, (n,), dtype))
            reg.add("jnp", "searchsorted", dtype, n,
                    lambda a, q: jnp.searchsorted(jnp.sort(a), q), search,
                    tags=("sort",))


# --------------------------------------------------- data movement, index

def movement_table(reg):
    full = reg.plan.full
    dtypes = ("f32", "bf16", "u8", "bool", "f64", "c128") if full \
        else ("f32",)
    sizes = FULL_SIZES if full else (MI,)
    for dtype in dtypes:
        for n in sizes:
            movement_cases(reg, dtype, n)
    if not full:
        for dtype in ("bf16", "u8", "f64"):
            movement_cases(reg, dtype, MI, only=("transpose 2-D",))
        movement_cases(reg, "f32", 16 * MI,
                       only=("transpose 2-D", "concatenate"))


def movement_cases(reg, dtype, n, only=None):
    rows, cols = square_ish(n)
    side = max(2, round(n ** (1 / 3)))
    cube = (side, side, max(1, n // (side * side)))
    nhwc = (max(1, n // (32 * 32 * 16)), 32, 32, min(16, n)) if n >= 16 \
        else (1, 1, 1, n)

    def mat(rng, shape=(rows, cols)):
        return (draw(rng, shape, dtype),)

    def add(op, fn, args=mat, family="jnp", variant=""):
        if only is None or f"{op} {variant}".strip() in only:
            reg.add(family, op, dtype, n, fn, args, variant=variant,
                    tags=("movement",))

    add("transpose", lambda x: x.T, variant="2-D")
    add("transpose", lambda x: jnp.transpose(x, (1, 0, 2)),
        lambda rng: (draw(rng, cube, dtype),), variant="3-D 102")
    add("transpose", lambda x: jnp.transpose(x, (2, 1, 0)),
        lambda rng: (draw(rng, cube, dtype),), variant="3-D 210")
    add("transpose", lambda x: jnp.transpose(x, (0, 3, 1, 2)),
        lambda rng: (draw(rng, nhwc, dtype),), variant="NHWC->NCHW")
    add("concatenate", lambda x: jnp.concatenate([x, x[::-1]], axis=1))
    add("pad", lambda x: jnp.pad(x, ((1, 1), (3, 3))))
    add("slice", lambda x: x[::2, 1::2], variant="strided")
    add("flip", lambda x: jnp.flip(x, axis=1))
    add("roll", lambda x: jnp.roll(x, 3, axis=1))
    add("tile", lambda x: jnp.tile(x, (1, 2)))
    add("repeat", lambda x: jnp.repeat(x, 2, axis=0))
    add("broadcast_to", lambda v: jnp.broadcast_to(v[:, None], (rows, cols)),
        lambda rng: (draw(rng, (rows,), dtype),), variant="column")
    add("triu", lambda x: jnp.triu(x))
    add("reshape+transpose",
        lambda x: x.reshape(rows // 2 or 1, -1, cols).transpose(1, 0, 2)
        if rows >= 2 else x)
    add("dynamic_slice",
        lambda x, i: lax.dynamic_slice(x, (i, 0), (max(rows // 2, 1), cols)),
        lambda rng: (draw(rng, (rows, cols), dtype), np.int32(rows // 4)),
        family="lax")
    add("dynamic_update_slice",
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
        lambda rng: (draw(rng, (rows, cols), dtype),
                     draw(rng, (max(rows // 2, 1), cols), dtype),
                     np.int32(rows // 4)),
        family="lax")
    indices = lambda rng, m, k: rng.integers(0, m, (k,), dtype="int32")
    add("take", lambda x, i: jnp.take(x, i, axis=0),
        lambda rng: (draw(rng, (rows, cols), dtype),
                     indices(rng, rows, rows)), variant="rows")
    add("gather", lambda v, i: v[i],
        lambda rng: (draw(rng, (n,), dtype), indices(rng, n, n)),
        variant="elements")
    add("take_along_axis",
        lambda x, i: jnp.take_along_axis(x, i, axis=1),
        lambda rng: (draw(rng, (rows, cols), dtype),
                     rng.integers(0, cols, (rows, cols), dtype="int32")))
    if dtype == "bool":
        return  # no arithmetic scatters of booleans
    add("scatter-add", lambda x, i, u: x.at[i].add(u),
        lambda rng: (draw(rng, (rows, cols), dtype),
                     indices(rng, rows, rows), draw(rng, (rows, cols), dtype)),
        variant="rows")
    add("scatter-set", lambda v, i, u: v.at[i].set(u),
        lambda rng: (draw(rng, (n,), dtype), indices(rng, n, n // 4 or 1),
                     draw(rng, (n // 4 or 1,), dtype)), variant="elements")
    add("segment_sum",
        lambda v, i: jax.ops.segment_sum(v, i, num_segments=max(n // 64, 1)),
        lambda rng: (draw(rng, (n,), dtype), indices(rng, max(n // 64, 1), n)),
        family="ops")


# ------------------------------------------------------------ matmul, conv

def matmul_table(reg):
    full = reg.plan.full
    if full:
        grid = [(d, s) for d in NUMERIC for s in (8, 64, 256, 1024, 2048)]
    else:
        grid = [("f32", 64), ("f32", 256), ("f32", 1024), ("bf16", 256),
                ("bf16", 1024), ("f16", 256), ("i32", 256), ("i8", 256),
                ("c64", 256), ("f64", 256), ("c128", 256)]
    for dtype, s in grid:
        def args(rng, dtype=dtype, s=s):
            return (normal(rng, (s, s), dtype, s ** -0.5),
                    normal(rng, (s, s), dtype))
        reg.add("jnp", "matmul", dtype, f"{s}", jnp.matmul, args,
                tags=("matmul",),
                tolerance=1e-2 if dtype == "f16" else None)
        if full or (dtype == "f32" and s == 1024):
            reg.add("jnp", "matmul", dtype, f"{s}", lambda a, b: a.T @ b,
                    args, variant="a.T @ b", tags=("matmul",))
            reg.add("jnp", "matmul", dtype, f"{s}", lambda a, b: a @ b.T,
                    args, variant="a @ b.T", tags=("matmul",))
    for dtype in (NUMERIC if full else ("f32", "bf16")):
        def batched(rng, dtype=dtype):
            return (normal(rng, (64, 128, 128), dtype, 128 ** -0.5),
                    normal(rng, (64, 128, 128), dtype))
        reg.add("jnp", "matmul batched", dtype, "64x128x128x128", jnp.matmul,
                batched, tags=("matmul",))

        def matvec(rng, dtype=dtype):
            return (normal(rng, (4096, 4096), dtype, 4096 ** -0.5),
                    normal(rng, (4096,), dtype))
        reg.add("jnp", "matvec", dtype, "4096", jnp.matmul, matvec,
                tags=("matmul",))
    # Mixed precision: low-precision operands, f32 accumulation and result.
    for dtype in ("bf16", "f16"):
        def mixed(rng, dtype=dtype):
            return (normal(rng, (1024, 1024), dtype, 1024 ** -0.5),
                    normal(rng, (1024, 1024), dtype))
        reg.add("lax", "dot preferred f32", f"{dtype}->f32", "1024",
                lambda a, b: lax.dot(a, b,
                                     preferred_element_type=jnp.float32),
                mixed, tags=("matmul", "mixed"))
    reg.add("lax", "dot preferred i32", "i8->i32", "1024",
            lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32),
            lambda rng: (uniform(rng, (1024, 1024), "i8", -127, 127),
                         uniform(rng, (1024, 1024), "i8", -127, 127)),
            tags=("matmul", "mixed"))
    reg.add("jnp", "einsum bhqd,bhkd->bhqk", "f32", "8x8x256x64",
            lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k),
            lambda rng: (normal(rng, (8, 8, 256, 64), "f32"),
                         normal(rng, (8, 8, 256, 64), "f32")),
            tags=("matmul",))


NHWC = ("NHWC", "HWIO", "NHWC")


def conv_table(reg):
    full = reg.plan.full
    dtypes = ("f32", "bf16", "f16", "f64") if full else ("f32",)

    def conv(x, k, stride=1, groups=1, dilation=1):
        return lax.conv_general_dilated(
            x, k, (stride, stride), "SAME", rhs_dilation=(dilation, dilation),
            dimension_numbers=NHWC, feature_group_count=groups)

    specs = [
        ("conv 3x3", (8, 64, 64, 32), (3, 3, 32, 32), {}),
        ("conv 1x1", (8, 64, 64, 64), (1, 1, 64, 64), {}),
        ("conv 3x3 stride 2", (8, 64, 64, 32), (3, 3, 32, 64),
         {"stride": 2}),
        ("conv 3x3 depthwise", (8, 64, 64, 64), (3, 3, 1, 64),
         {"groups": 64}),
        ("conv 3x3 dilated 2", (8, 64, 64, 32), (3, 3, 32, 32),
         {"dilation": 2}),
        ("conv 7x7 stride 2, 3 channels", (8, 224, 224, 3), (7, 7, 3, 64),
         {"stride": 2}),
    ]
    for dtype in dtypes + (() if full else ("bf16",)):
        for name, xs, ks, kw in specs:
            if dtype != "f32" and not full and name != "conv 3x3":
                continue

            def args(rng, xs=xs, ks=ks, dtype=dtype):
                fan_in = ks[0] * ks[1] * ks[2]
                return (normal(rng, xs, dtype),
                        normal(rng, ks, dtype, fan_in ** -0.5))
            size = "x".join(map(str, xs))
            reg.add("lax", name, dtype, size,
                    lambda x, k, kw=kw: conv(x, k, **kw), args,
                    tags=("conv",), tolerance=1e-2 if dtype == "f16" else None)
        if dtype != "f32" and not full:
            continue
        def grad_args(rng, dtype=dtype):
            return (normal(rng, (8, 64, 64, 32), dtype),
                    normal(rng, (3, 3, 32, 32), dtype, 1 / 17))
        reg.add("lax", "conv 3x3 weight gradient", dtype, "8x64x64x32",
                lambda x, k: jax.grad(lambda kk: jnp.sum(conv(x, kk) ** 2))(k),
                grad_args, tags=("conv",))
        reg.add("lax", "conv 3x3 input gradient", dtype, "8x64x64x32",
                lambda x, k: jax.grad(lambda xx: jnp.sum(conv(xx, k) ** 2))(x),
                grad_args, tags=("conv",))
        reg.add("lax", "conv_transpose 3x3 stride 2", dtype, "16x32x32x32",
                lambda x, k: lax.conv_transpose(x, k, (2, 2), "SAME",
                                                dimension_numbers=NHWC),
                lambda rng, dtype=dtype: (
                    normal(rng, (16, 32, 32, 32), dtype),
                    normal(rng, (3, 3, 32, 32), dtype, 1 / 17)),
                tags=("conv",))
        reg.add("lax", "conv1d k5", dtype, "8x4096x64",
                lambda x, k: lax.conv_general_dilated(
                    x, k, (1,), "SAME", dimension_numbers=("NWC", "WIO",
                                                           "NWC")),
                lambda rng, dtype=dtype: (normal(rng, (8, 4096, 64), dtype),
                                          normal(rng, (5, 64, 64), dtype,
                                                 1 / 18)),
                tags=("conv",))

        def maxpool(x):
            return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1),
                                     (1, 2, 2, 1), "SAME")

        def img(rng, dtype=dtype):
            return (normal(rng, (16, 64, 64, 32), dtype),)
        reg.add("lax", "max pool 3x3/2", dtype, "16x64x64x32", maxpool, img,
                tags=("pool",))
        reg.add("lax", "avg pool 2x2/2", dtype, "16x64x64x32",
                lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1),
                                            (1, 2, 2, 1), "VALID") / 4,
                img, tags=("pool",))
        reg.add("lax", "max pool gradient", dtype, "16x64x64x32",
                lambda x: jax.grad(lambda y: jnp.sum(maxpool(y)))(x), img,
                tags=("pool",))


# --------------------------------------------------------- random numbers

def key(rng):
    """A raw threefry key (uint32[2]): no JAX call at registration."""
    return np.array([0, rng.integers(0, 1 << 31)], dtype=np.uint32)


def random_table(reg):
    full = reg.plan.full
    sizes = FULL_SIZES if full else (MI,)
    float_types = FLOAT if full else ("f32",)
    r = jax.random

    def add(op, dtype, n, fn):
        reg.add("random", op, dtype, n, fn, lambda rng: (key(rng),),
                tags=("random",), check=False)

    for n in sizes:
        for dtype in float_types:
            dt = DTYPES[dtype]
            add("normal", dtype, n, lambda k, n=n, dt=dt: r.normal(
                k, (n,), dt))
            add("uniform", dtype, n, lambda k, n=n, dt=dt: r.uniform(
                k, (n,), dt))
            if full or dtype == "f32":
                add("truncated_normal", dtype, n,
                    lambda k, n=n, dt=dt: r.truncated_normal(
                        k, -2.0, 2.0, (n,), dt))
                add("exponential", dtype, n,
                    lambda k, n=n, dt=dt: r.exponential(k, (n,), dt))
        for dtype in (("i8", "i32", "i64", "u8") if full else ("i32",)):
            add("randint", dtype, n, lambda k, n=n, dt=DTYPES[dtype]:
                r.randint(k, (n,), 0, 100, dt))
        add("bernoulli", "bool", n, lambda k, n=n: r.bernoulli(k, 0.3, (n,)))
        add("bits", "u32", n, lambda k, n=n: r.bits(k, (n,)))
        add("permutation", "i32", n, lambda k, n=n: r.permutation(k, n))
    add("normal", "f32", 4 * MI, lambda k: r.normal(k, (4 * MI,)))
    add("gamma a=2.5", "f32", 64 * KI,
        lambda k: r.gamma(k, 2.5, (64 * KI,)))
    if full:
        add("beta", "f32", 64 * KI,
            lambda k: r.beta(k, 2.0, 3.0, (64 * KI,)))
    add("categorical", "f32", "1024x1000",
        lambda k: r.categorical(k, jnp.zeros((1024, 1000))))
    add("choice without replacement", "i32", "1Ki of 64Ki",
        lambda k: r.choice(k, 64 * KI, (KI,), replace=False))
    add("split 1000", "u32", "1000", lambda k: r.split(k, 1000))


# -------------------------------------------------------------------- FFT

def fft_table(reg):
    full = reg.plan.full
    complex_types = COMPLEX if full else ("c64",)
    real_types = ("f32", "f64") if full else ("f32",)
    f = jnp.fft
    for dtype in complex_types:
        shapes = {"flat 1Mi": (MI,), "rows 1024x1024": (1024, 1024),
                  "rows 1000x1000": (1000, 1000), "rows 256x1009": (256, 1009)}
        if full:
            shapes.update({"flat 16Mi": (16 * MI,), "rows 64x64": (64, 64)})
        for label, shape in shapes.items():
            size, variant = label.split(" ")[1], label.split(" ")[0]

            def args(rng, shape=shape, dtype=dtype):
                return (normal(rng, shape, dtype),)
            reg.add("fft", "fft", dtype, size, f.fft, args, variant=variant,
                    tags=("fft",))
            if label == "rows 1024x1024" or full:
                reg.add("fft", "ifft", dtype, size, f.ifft, args,
                        variant=variant, tags=("fft",))
        reg.add("fft", "fft2", dtype, "1024x1024", f.fft2,
                lambda rng, dtype=dtype: (normal(rng, (1024, 1024), dtype),),
                tags=("fft",))
        reg.add("fft", "fftn", dtype, "64x64x64", f.fftn,
                lambda rng, dtype=dtype: (normal(rng, (64, 64, 64), dtype),),
                tags=("fft",))
    for dtype in real_types:
        def rows(rng, dtype=dtype):
            return (normal(rng, (1024, 1024), dtype),)
        reg.add("fft", "rfft", dtype, "1024x1024", f.rfft, rows,
                variant="rows", tags=("fft",))
        reg.add("fft", "irfft", dtype, "1024x1024",
                lambda x: f.irfft(x.astype(jnp.complex64 if x.dtype ==
                                           jnp.float32 else jnp.complex128),
                                  n=2046),
                rows, variant="rows", tags=("fft",))
        reg.add("fft", "rfft2", dtype, "512x1024", f.rfft2,
                lambda rng, dtype=dtype: (normal(rng, (512, 1024), dtype),),
                tags=("fft", "reported"))


# ---------------------------------------------------------- linear algebra

def _general(rng, s, dtype):
    a = normal(rng, (s, s), dtype, s ** -0.5)
    return (a + 2 * np.eye(s, dtype=a.dtype)).astype(a.dtype)


def _spd(rng, s, dtype):
    a = normal(rng, (s, s), dtype, s ** -0.5)
    # einsum without BLAS: numpy's matmul would wake OpenBLAS's threads
    # in the worker, which spin beside the timed calls (op_sweep.py).
    return (np.einsum("ik,jk->ij", a, a.conj(), optimize=False) +
            np.eye(s, dtype=a.dtype)).astype(a.dtype)


def linalg_table(reg):
    full = reg.plan.full
    if full:
        grid = [(d, s) for d in ("f32", "f64", "c64", "c128")
                for s in (16, 64, 256, 1024)]
    else:
        grid = [("f32", 256), ("f64", 256), ("c64", 64)]
    la = jnp.linalg
    for dtype, s in grid:
        general = lambda rng, dtype=dtype, s=s: (_general(rng, s, dtype),)
        spd = lambda rng, dtype=dtype, s=s: (_spd(rng, s, dtype),)
        system = lambda rng, dtype=dtype, s=s: (_general(rng, s, dtype),
                                                normal(rng, (s, s), dtype))
        quick_core = full or dtype == "f32"
        # Quick mode leaves out what repeats another case's work (pinv,
        # norm 2 and svd values are an svd; eigvalsh an eigh; slogdet an
        # lu; cho_solve a cholesky and two triangular solves).

        def add(op, fn, args, core=True, **kw):
            if core or full:
                reg.add("linalg", op, dtype, str(s), fn, args,
                        tags=("linalg",), **kw)

        add("solve", la.solve, system)
        add("cholesky", la.cholesky, spd)
        add("inv", la.inv, general, core=quick_core)
        add("qr", lambda a: _qr_invariants(a), general)
        add("svd", lambda a: _svd_invariants(a), general)
        add("svd values", lambda a: la.svd(a, compute_uv=False), general,
            core=full)
        add("eigh", lambda a: _eigh_invariants(a), spd, core=quick_core)
        add("eigvalsh", la.eigvalsh, spd, core=full)
        add("det", la.det, general, core=quick_core)
        add("slogdet", lambda a: tuple(la.slogdet(a)), general,
            core=full)
        add("pinv", la.pinv, general, core=full)
        add("norm 2", lambda a: la.norm(a, 2), general, core=full)
        add("matrix_power 8", lambda a: la.matrix_power(a * 0.5, 8), general,
            core=full)
        add("lu", lambda a: tuple(jsl.lu(a)[1:]), general, core=quick_core)
        add("solve_triangular",
            lambda a, b: jsl.solve_triangular(jnp.tril(a), b, lower=True),
            system, core=quick_core)
        add("cho_solve",
            lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
            lambda rng, dtype=dtype, s=s: (_spd(rng, s, dtype),
                                           normal(rng, (s, s), dtype)),
            core=full)
        add("lstsq", lambda a, b: la.lstsq(a, b)[0],
            lambda rng, dtype=dtype, s=s: (normal(rng, (2 * s, s), dtype),
                                           normal(rng, (2 * s, 8), dtype)),
            core=quick_core)
        add("expm", lambda a: jsl.expm(a * 0.5), general, core=quick_core)
        if dtype in ("f32", "f64"):
            add("eig values", lambda a: _eig_invariants(a), general,
                core=quick_core)


def _qr_invariants(a):
    # Q and R are unique up to the signs of R's rows (Q's columns):
    # compare what does not depend on them.
    q, r = jnp.linalg.qr(a)
    return q @ r, jnp.abs(r)


def _svd_invariants(a):
    u, s, vt = jnp.linalg.svd(a)
    return s, (u * s) @ vt


def _eigh_invariants(a):
    w, v = jnp.linalg.eigh(a)
    return w, (v * w) @ v.conj().T


def _eig_invariants(a):
    w = jnp.linalg.eigvals(a)
    return jnp.sort(jnp.abs(w)), jnp.sum(w)


TABLES = [
    elementwise_table(UNARY, 1),
    elementwise_table(BINARY, 2),
    elementwise_table(TERNARY, 3),
    convert_table,
    reduction_table,
    sort_table,
    movement_table,
    matmul_table,
    conv_table,
    random_table,
    fft_table,
    linalg_table,
]
