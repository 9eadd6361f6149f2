"""matmul, dot_general and einsum: vectors, matrices, batches, transposed
operands, mixed precision."""

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import bfloat16, check, random_array

# (lhs shape, rhs shape) for jnp.matmul.
MATMUL_SHAPES = [
    ((7,), (7,)),
    ((3, 7), (7,)),
    ((7,), (7, 4)),
    ((3, 7), (7, 4)),
    ((2, 3, 7), (2, 7, 4)),
    ((2, 1, 3, 7), (5, 7, 4)),  # broadcast batch
    ((1, 1), (1, 1)),
    ((33, 65), (65, 17)),  # sizes that miss any tile
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_float32(shapes):
    a = random_array(shapes[0], np.float32, seed=1)
    b = random_array(shapes[1], np.float32, seed=2)
    check(jnp.matmul, a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, bfloat16, np.int32, np.int8,
                                   np.uint8, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_matmul_dtypes(dtype):
    low, high = (0, 3) if np.dtype(dtype).kind in "iu" else (-1, 1)
    a = random_array((4, 6), dtype, seed=3, low=low, high=high)
    b = random_array((6, 5), dtype, seed=4, low=low, high=high)
    check(jnp.matmul, a, b, rtol=3e-2 if dtype in (np.float16, bfloat16)
          else None, atol=3e-2 if dtype in (np.float16, bfloat16) else None)


def test_transposed_operands():
    a = random_array((6, 4), np.float32, seed=5)
    b = random_array((5, 6), np.float32, seed=6)
    check(lambda x, y: (x.T @ y.T, (y @ x).T, jnp.dot(x.T, y.T)), a, b,
          atol=1e-5)


# (lhs shape, rhs shape, ((lhs contracting, rhs contracting), (lhs batch,
# rhs batch))).
DOT_GENERAL = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),  # lhs transposed
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),  # rhs transposed
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),  # batch not leading
    ((2, 3, 4, 6), (2, 6, 4, 5), (((2, 3), (2, 1)), ((0,), (0,)))),  # 2 contracting
    ((2, 3), (4, 5), (((), ()), ((), ()))),  # outer product
    ((2, 3, 4), (3, 2, 4), (((1,), (0,)), ((0, 2), (1, 2)))),  # 2 batch dims
]


@pytest.mark.parametrize("case", DOT_GENERAL, ids=lambda c: str(c[2]))
def test_dot_general(case):
    lhs_shape, rhs_shape, dims = case
    a = random_array(lhs_shape, np.float32, seed=7)
    b = random_array(rhs_shape, np.float32, seed=8)
    check(lambda x, y: lax.dot_general(x, y, dims), a, b, atol=1e-5)


def test_dot_general_preferred_type():
    a = random_array((4, 8), bfloat16, seed=9)
    b = random_array((8, 3), bfloat16, seed=10)
    check(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                       preferred_element_type=jnp.float32),
          a, b, atol=1e-5)
    i = random_array((4, 8), np.int8, seed=11, low=-100, high=100)
    j = random_array((8, 3), np.int8, seed=12, low=-100, high=100)
    check(lambda x, y: lax.dot(x, y, preferred_element_type=jnp.int32), i, j)


def test_dot_precision():
    a = random_array((5, 9), np.float32, seed=13)
    b = random_array((9, 2), np.float32, seed=14)
    check(lambda x, y: (jnp.dot(x, y, precision=lax.Precision.HIGHEST),
                        jnp.dot(x, y, precision="default")), a, b, atol=1e-5)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),  # attention scores
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,i->", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ijk,kl,lm->ijm", [(2, 3, 4), (4, 5), (5, 2)]),
    ("...ij,...jk->...ik", [(2, 3, 3, 4), (3, 4, 2)]),
    ("ijk->k", [(2, 3, 4)]),
]


@pytest.mark.parametrize("case", EINSUM, ids=lambda c: c[0])
def test_einsum(case):
    spec, shapes = case
    args = [random_array(s, np.float32, seed=20 + i)
            for i, s in enumerate(shapes)]
    check(lambda *xs: jnp.einsum(spec, *xs), *args, atol=1e-5)


def test_vdot_inner_outer_tensordot():
    a = random_array((3, 4), np.float32, seed=30)
    b = random_array((3, 4), np.float32, seed=31)
    c = random_array((4, 2, 3), np.float32, seed=32)
    check(lambda x, y, z: (jnp.vdot(x, y), jnp.inner(x, y), jnp.outer(x, y),
                           jnp.tensordot(x, z, axes=([0, 1], [2, 0])),
                           jnp.kron(x[:2, :2], y[:2, :2])), a, b, c, atol=1e-5)


# Products of at least 2^20 multiply-adds run through oneDNN's matmul
# (docs/compile.md), transposed operands as strides.
@pytest.mark.parametrize("transpose", ["nn", "tn", "nt", "tt"])
def test_matmul_onednn(transpose):
    a = random_array((192, 160), np.float32, seed=31, low=-1, high=1)
    b = random_array((160, 128), np.float32, seed=32, low=-1, high=1)
    if transpose[0] == "t":
        a = np.ascontiguousarray(a.T)
    if transpose[1] == "t":
        b = np.ascontiguousarray(b.T)

    def product(x, y):
        x = x.T if transpose[0] == "t" else x
        y = y.T if transpose[1] == "t" else y
        return x @ y

    check(product, a, b, rtol=1e-5, atol=1e-4)


def test_batched_dot_onednn():
    a = random_array((8, 64, 96), np.float32, seed=33, low=-1, high=1)
    b = random_array((96, 8, 48), np.float32, seed=34, low=-1, high=1)
    check(lambda x, y: jnp.einsum("bmk,kbn->bmn", x, y), a, b,
          rtol=1e-5, atol=1e-4)


def test_matmul_onednn_bf16():
    a = random_array((128, 128), bfloat16, seed=35, low=-1, high=1)
    b = random_array((128, 128), bfloat16, seed=36, low=-1, high=1)
    check(jnp.matmul, a, b, rtol=1e-2, atol=5e-2)
    check(lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32),
          a, b, rtol=1e-5, atol=1e-4)
