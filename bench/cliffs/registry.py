"""The case registry: what a case is, the element types and sizes it comes
in, the inputs it gets, and how its results are compared.

A `Case` is one program at one element type and size: a JAX function, a
builder of its (numpy) arguments, and labels. Tables in ops.py and
programs.py register cases through `Registry.add`; `all_cases(full)`
collects them. Nothing here touches a JAX backend: the parent process
lists the cases with this module, and each child (worker.py) compiles and
times the ones its backend and group run.

To add a case, write a function of JAX arrays and an argument builder
(`rng -> tuple of numpy arrays`) and call `reg.add(...)` from a table
function in ops.py or programs.py; a new table function goes in
`TABLES` at the end of ops.py or programs.py.
"""

import dataclasses
import zlib
from typing import Any, Callable, Optional

import ml_dtypes
import numpy as np

# ------------------------------------------------------------ element types

DTYPES = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f16": np.dtype(np.float16),
    "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "bool": np.dtype(np.bool_),
    "c64": np.dtype(np.complex64),
    "c128": np.dtype(np.complex128),
}

FLOAT = ("f32", "f64", "bf16", "f16")
COMPLEX = ("c64", "c128")
INT = ("i8", "i32", "i64", "u8")
SIGNED = ("i8", "i32", "i64")
BOOL = ("bool",)
INEXACT = FLOAT + COMPLEX
NUMERIC = FLOAT + INT + COMPLEX
ALL = FLOAT + INT + BOOL + COMPLEX

# Element types that exist only with jax_enable_x64 (without it JAX turns
# them into their 32-bit kin): their cases run in the x64 processes.
X64_DTYPES = ("f64", "i64", "c128")

# ------------------------------------------------------------------- sizes

KI, MI = 1 << 10, 1 << 20


def size_label(n: int) -> str:
    """4, 1Ki, 64Ki, 1Mi, 16Mi."""
    if n >= MI and n % MI == 0:
        return f"{n // MI}Mi"
    if n >= KI and n % KI == 0:
        return f"{n // KI}Ki"
    return str(n)


def square_ish(n: int) -> tuple[int, int]:
    """A 2-D shape of n (a power of two) elements, rows <= columns."""
    rows = 1 << (max(n.bit_length() - 1, 0) // 2)
    return rows, n // rows


# Elementwise and reduction sizes, in elements: a handful (dispatch), L1,
# L2, beyond the caches, and 16 Mi (memory bound).
FULL_SIZES = (4, KI, 64 * KI, MI, 16 * MI)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one mode covers: `quick` takes a representative slice of each
    table, `full` every size and element type a table lists."""
    full: bool

    def pick(self, quick, full):
        return full if self.full else quick


# ------------------------------------------------------------------- inputs

def uniform(rng, shape, dtype, low, high):
    dt = DTYPES[dtype]
    if dt.kind == "c":
        part = np.float64 if dt == np.complex128 else np.float32
        return (rng.uniform(low, high, shape).astype(part) +
                1j * rng.uniform(low, high, shape).astype(part)).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(low), int(info.min)), min(int(high), int(info.max))
        return rng.integers(lo, hi + 1, shape, dtype=dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.uniform(low, high, shape).astype(np.float32).astype(dt) \
        if dt != np.float64 else rng.uniform(low, high, shape)


def normal(rng, shape, dtype, scale=1.0):
    dt = DTYPES[dtype]
    if dt.kind == "c":
        part = np.float64 if dt == np.complex128 else np.float32
        return ((rng.standard_normal(shape, dtype=part) +
                 1j * rng.standard_normal(shape, dtype=part)) *
                scale).astype(dt)
    if dt.kind in "iub":
        return uniform(rng, shape, dtype, -100, 100)
    if dt == np.float64:
        return rng.standard_normal(shape) * scale
    return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dt)


# Input domains of elementwise ops: (low, high) of a uniform draw, or None
# for a normal one. Integer types clip them to their range.
DOMAINS = {
    "any": None,
    "small": (-4.0, 4.0),    # exp and friends: finite in f16
    "pos": (0.05, 8.0),      # log, sqrt, lgamma
    "unit": (-0.95, 0.95),   # asin, atanh, erfinv
    "prob": (0.02, 0.98),    # logit, ndtri
    "ge1": (1.05, 8.0),      # acosh
    "int": (-100, 100),      # integer values for any type
    "nonzero": None,         # normal, kept away from 0 (divisors)
    "shift": (0, 7),         # shift amounts
    "exponent": (0, 4),      # integer powers
}


def draw(rng, shape, dtype, domain="any"):
    """An input array of `shape` and `dtype` from an op's domain."""
    dt = DTYPES[dtype]
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if domain == "nonzero":
        if dt.kind in "iu":
            value = uniform(rng, shape, dtype, 1, 100)
            if dt.kind == "i":
                value = np.where(rng.random(shape) < 0.5, -value, value)
            return value.astype(dt)
        a = normal(rng, shape, dtype)
        return (a + np.where(np.real(a) >= 0, 0.5, -0.5)).astype(dt)
    if domain == "shift":
        return uniform(rng, shape, dtype, 0, 8 * dt.itemsize - 1)
    bounds = DOMAINS[domain]
    if bounds is None:
        if dt.kind in "iu":
            return uniform(rng, shape, dtype, -100, 100)
        return normal(rng, shape, dtype)
    return uniform(rng, shape, dtype, *bounds)


def seed_of(case_id: str) -> int:
    """The same seed for a case in every process (hash() is salted)."""
    return zlib.crc32(case_id.encode())


# -------------------------------------------------------------- comparison

# Relative tolerance of each result type, also used (scaled by the largest
# magnitude of the reference) as an absolute one: results of different
# summation orders, fused or not, and kernels a few ulps apart pass;
# wrong answers do not.
TOLERANCE = {
    "float64": 1e-9, "complex128": 1e-9,
    "float32": 1e-4, "complex64": 1e-4,
    "float16": 4e-3, "bfloat16": 3e-2,
}


def compare(reference: np.ndarray, result: np.ndarray, dtype_name: str,
            tolerance: Optional[float] = None) -> Optional[str]:
    """None where `result` matches `reference`, else what differs.

    Both come as the arrays the worker saved (bf16 and f16 widened to
    f32); `dtype_name` is the result's own element type.
    """
    if reference.shape != result.shape:
        return f"shape {result.shape} where XLA:CPU gives {reference.shape}"
    if reference.size == 0:
        return None
    if dtype_name not in TOLERANCE:  # integers and booleans: exact
        bad = reference != result
        if not bad.any():
            return None
        where = np.unravel_index(np.argmax(bad), bad.shape)
        return (f"{int(bad.sum())} of {bad.size} elements differ "
                f"(first at {tuple(int(i) for i in where)}: "
                f"{result[where]!r} where XLA:CPU gives {reference[where]!r})")
    tol = TOLERANCE[dtype_name] if tolerance is None else tolerance
    ref = reference.astype(np.complex128 if reference.dtype.kind == "c"
                           else np.float64)
    got = result.astype(ref.dtype)
    finite = np.isfinite(ref)
    scale = float(np.max(np.abs(ref[finite]))) if finite.any() else 1.0
    close = np.isclose(got, ref, rtol=tol, atol=tol * max(scale, 1e-30),
                       equal_nan=True)
    if close.all():
        return None
    bad = ~close
    where = np.unravel_index(np.argmax(bad), bad.shape)
    both = finite & np.isfinite(got)
    error = float(np.max(np.abs(got[both] - ref[both]))) if both.any() else \
        float("nan")
    return (f"{int(bad.sum())} of {bad.size} elements outside rtol {tol:g} "
            f"(largest difference {error:.3g}, magnitude {scale:.3g}; first "
            f"at {tuple(int(i) for i in where)}: {got[where]!r} where "
            f"XLA:CPU gives {ref[where]!r})")


# -------------------------------------------------------------------- cases

@dataclasses.dataclass
class Case:
    """One program at one element type and size.

    fn: the function jitted (of JAX arrays), or, for `devices` > 1,
        `sharded(mesh) -> (fn, in_specs)` builds it with the process's mesh.
    args: `rng -> tuple` of numpy arrays (or pytrees of them).
    family: where the op comes from (lax, jnp, nn, random, fft, linalg,
        special, program, sharded); the id begins with it.
    step: the function maps its first argument (a state) to a new one of
        the same structure, donated: each timed call feeds the last state
        back, as a training loop does.
    check: compare Kiln's results with XLA:CPU's (False for random
        numbers, whose bits neither backend promises).
    tolerance: a relative tolerance overriding the result type's.
    """
    family: str
    op: str
    dtype: str
    size: str
    args: Callable[[Any], tuple]
    fn: Optional[Callable] = None
    sharded: Optional[Callable] = None
    variant: str = ""
    tags: tuple = ()
    x64: bool = False
    devices: int = 1
    step: bool = False
    check: bool = True
    tolerance: Optional[float] = None

    @property
    def id(self) -> str:
        words = [f"{self.family}.{self.op}", self.dtype, self.size]
        if self.variant:
            words.append(self.variant)
        return " ".join(words)

    @property
    def group(self) -> str:
        """The process kind that runs it: jax_enable_x64 and the device
        count are fixed when a process starts."""
        if self.devices > 1:
            return f"dev{self.devices}" + ("-x64" if self.x64 else "")
        return "x64" if self.x64 else "main"


class Registry:
    """Collects cases; refuses two with one id."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.cases: dict[str, Case] = {}

    def add(self, family, op, dtype, size, fn=None, args=None, **fields):
        if isinstance(size, int):
            size = size_label(size)
        dtypes = [d for d in dtype.split("->")] if isinstance(dtype, str) \
            else []
        x64 = fields.pop("x64", False) or any(
            d in X64_DTYPES for part in dtypes for d in part.split("/"))
        case = Case(family=family, op=op, dtype=dtype, size=size, fn=fn,
                    args=args, x64=x64, **fields)
        if case.id in self.cases:
            raise ValueError(f"two cases named {case.id!r}")
        self.cases[case.id] = case
        return case


GROUP_ORDER = ("main", "x64", "dev8", "dev8-x64")


def all_cases(full: bool) -> list[Case]:
    """Every case of a mode, in registration order."""
    import ops
    import programs

    registry = Registry(Plan(full=full))
    for table in ops.TABLES + programs.TABLES:
        table(registry)
    return list(registry.cases.values())
