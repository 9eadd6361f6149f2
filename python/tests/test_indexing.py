"""Gather, scatter and indexing: x[idx], .at[].set/add/mul/min/max,
dynamic_slice, dynamic_update_slice, take_along_axis, slicing."""

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import check, random_array

X = random_array((5, 6, 4), np.float32, seed=1)


INDEXERS = {
    "int": lambda x, i: x[i[0]],
    "array_first_axis": lambda x, i: x[i],
    "array_second_axis": lambda x, i: x[:, i],
    "array_last_axis": lambda x, i: x[..., i % 4],
    "two_arrays": lambda x, i: x[i, i],
    "array_and_slice": lambda x, i: x[i, 1:5:2],
    "broadcast_arrays": lambda x, i: x[i[:, None], i[None, :]],
    "negative": lambda x, i: x[-i - 1],
    "newaxis": lambda x, i: x[None, i, :, None],
    "take": lambda x, i: jnp.take(x, i, axis=1),
    "clip_mode": lambda x, i: x.at[i + 3].get(mode="clip"),
    "fill_mode": lambda x, i: x.at[i + 3].get(mode="fill", fill_value=-7.0),
}


@pytest.mark.parametrize("name", sorted(INDEXERS))
def test_gather_indexing(name):
    idx = np.array([0, 2, 4, 1], np.int32)
    check(INDEXERS[name], X, idx)


def test_static_slicing():
    check(lambda x: (x[1:4], x[::2, ::-1], x[:, 2], x[..., -1], x[3, 1:, ::3],
                     lax.slice(x, (0, 1, 0), (4, 6, 4), (2, 2, 3)),
                     jnp.flip(x, axis=(0, 2)), jnp.roll(x, 2, axis=1)), X)


def test_boolean_mask_as_where():
    mask = X > 0
    check(lambda x, m: (jnp.where(m, x, 0.0), jnp.sum(x, where=m)), X, mask)


SCATTERS = ["set", "add", "mul", "min", "max"]


@pytest.mark.parametrize("op", SCATTERS)
def test_scatter_unique_indices(op):
    idx = np.array([4, 0, 2], np.int32)
    upd = random_array((3, 6, 4), np.float32, seed=2)
    check(lambda x, i, u: getattr(x.at[i], op)(u), X, idx, upd)


@pytest.mark.parametrize("op", ["add", "mul", "min", "max"])
def test_scatter_duplicate_indices(op):
    # Combining ops are well defined with repeated indices.
    idx = np.array([1, 3, 1, 1, 0], np.int32)
    upd = random_array((5, 4), np.float32, seed=3, low=0.5, high=1.5)
    check(lambda x, i, u: getattr(x.at[2, i], op)(u), X, idx, upd)


def test_scatter_forms():
    idx = np.array([0, 2], np.int32)
    check(lambda x, i: (x.at[i, 1].set(9.0),
                        x.at[:, i].add(1.0),
                        x.at[1:3, :, 2].mul(3.0),
                        x.at[i, i].set(jnp.array([5.0, 6.0, 7.0, 8.0])),
                        x.at[-1].set(0.0)), X, idx)


def test_scatter_out_of_bounds_dropped():
    idx = np.array([1, 7, -9, 3], np.int32)
    check(lambda x, i: (x.at[i].set(-1.0, mode="drop"),
                        x.at[i].add(5.0, mode="drop"),
                        x.at[i].get(mode="fill", fill_value=0.0)), X, idx)


def test_scatter_integer():
    x = np.zeros((8,), np.int32)
    idx = np.array([1, 1, 5, 7, 1], np.int32)
    upd = np.array([3, 4, 5, 6, 7], np.int32)
    check(lambda a, i, u: (a.at[i].add(u), a.at[i].max(u), a.at[i].min(u),
                           jnp.bincount(i, length=8)), x, idx, upd)


def test_dynamic_slice():
    def fn(x, start):
        return (lax.dynamic_slice(x, (start, 1, 0), (2, 3, 4)),
                lax.dynamic_slice_in_dim(x, start, 3, axis=1),
                lax.dynamic_index_in_dim(x, start, axis=2, keepdims=False))
    for start in (0, 2, 3, 10, -4):  # out of range starts are clamped
        check(fn, X, np.int32(start))


def test_dynamic_update_slice():
    upd = random_array((2, 3, 2), np.float32, seed=4)

    def fn(x, u, s):
        return (lax.dynamic_update_slice(x, u, (s, s, 0)),
                lax.dynamic_update_slice_in_dim(x, u[:1], s, axis=0))
    for start in (0, 1, 4, 100, -3):
        check(fn, X, upd, np.int32(start))


def test_dynamic_update_slice_in_loop():
    def fn(x):
        def body(i, acc):
            return lax.dynamic_update_slice(acc, x[i][None] * i, (i, 0, 0))
        return lax.fori_loop(0, x.shape[0], body, jnp.zeros_like(x))
    check(fn, X)


def test_take_along_axis():
    idx = np.argsort(X, axis=1).astype(np.int32)
    check(lambda x, i: (jnp.take_along_axis(x, i, axis=1),
                        jnp.take_along_axis(x, i[:, :2], axis=1)), X, idx)
    idx2 = random_array((5, 6, 2), np.int32, seed=5, low=0, high=3)
    check(lambda x, i: jnp.take_along_axis(x, i, axis=2), X, idx2)


def test_put_along_axis_and_index_update():
    idx = random_array((5, 1, 4), np.int32, seed=6, low=0, high=5)
    check(lambda x, i: jnp.put_along_axis(x, i, -1.0, axis=1, inplace=False),
          X, idx)


def test_gather_general():
    # lax.gather with explicit dimension numbers: batched windows.
    operand = random_array((4, 5, 6), np.float32, seed=7)
    indices = np.array([[0, 1], [2, 3], [3, 0]], np.int32)
    dnums = lax.GatherDimensionNumbers(offset_dims=(1,),
                                       collapsed_slice_dims=(0, 1),
                                       start_index_map=(0, 1))
    check(lambda o, i: lax.gather(o, i, dnums, slice_sizes=(1, 1, 3),
                                  mode=lax.GatherScatterMode.CLIP),
          operand, indices)


def test_concatenate_pad_reshape():
    check(lambda x: (jnp.concatenate([x, x * 2], axis=1),
                     jnp.stack([x, -x], axis=-1),
                     jnp.pad(x, ((1, 0), (0, 2), (1, 1))),
                     lax.pad(x, 0.5, ((1, -1, 1), (0, 0, 0), (-1, 2, 0))),
                     x.reshape(30, 4).T,
                     jnp.transpose(x, (2, 0, 1)),
                     jnp.broadcast_to(x[:, :1], (5, 3, 4)),
                     jnp.tile(x[:2, :2, :2], (2, 1, 3)),
                     jnp.repeat(x[:2], 2, axis=0),
                     lax.rev(x, (1,)),
                     jnp.tril(x[0]), jnp.triu(x[0], 1),
                     jnp.eye(4, 5, 1), jnp.arange(10) * 2,
                     lax.iota(jnp.int32, 7)), X)
