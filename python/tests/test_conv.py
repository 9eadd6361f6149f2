"""lax.conv_general_dilated: 1-D and 2-D, strides, padding, dilation,
feature and batch groups, NHWC and NCHW layouts, transposed convolution."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import bfloat16, check, random_array

# id -> (lhs shape, rhs shape, keyword arguments of conv_general_dilated).
CASES = {
    "1d_valid": ((2, 3, 10), (4, 3, 3),
                 dict(window_strides=(1,), padding="VALID")),
    "1d_stride_same": ((2, 3, 11), (4, 3, 3),
                       dict(window_strides=(2,), padding="SAME")),
    "1d_nwc": ((2, 10, 3), (3, 3, 4),
               dict(window_strides=(1,), padding=((2, 1),),
                    dimension_numbers=("NWC", "WIO", "NWC"))),
    "1d_rhs_dilation": ((1, 2, 12), (3, 2, 3),
                        dict(window_strides=(1,), padding="VALID",
                             rhs_dilation=(2,))),
    "2d_nchw_valid": ((2, 3, 8, 8), (4, 3, 3, 3),
                      dict(window_strides=(1, 1), padding="VALID")),
    "2d_nchw_same_stride": ((2, 3, 9, 8), (4, 3, 3, 2),
                            dict(window_strides=(2, 2), padding="SAME")),
    "2d_explicit_pad": ((1, 2, 6, 7), (3, 2, 3, 3),
                        dict(window_strides=(1, 2),
                             padding=((1, 2), (0, 3)))),
    "2d_negative_pad": ((1, 2, 8, 8), (3, 2, 2, 2),
                        dict(window_strides=(1, 1),
                             padding=((-1, 0), (0, -2)))),
    "2d_nhwc_hwio": ((2, 8, 8, 3), (3, 3, 3, 5),
                     dict(window_strides=(1, 1), padding="SAME",
                          dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d_nhwc_stride_dilation": ((1, 11, 10, 2), (2, 3, 2, 4),
                                dict(window_strides=(2, 1), padding="VALID",
                                     rhs_dilation=(2, 3),
                                     dimension_numbers=("NHWC", "HWIO",
                                                        "NHWC"))),
    "2d_lhs_dilation": ((1, 2, 5, 5), (3, 2, 3, 3),
                        dict(window_strides=(1, 1), padding=((2, 2), (2, 2)),
                             lhs_dilation=(2, 2))),
    "2d_feature_groups": ((2, 4, 6, 6), (6, 2, 3, 3),
                          dict(window_strides=(1, 1), padding="SAME",
                               feature_group_count=2)),
    "2d_depthwise_nhwc": ((1, 7, 7, 4), (3, 3, 1, 4),
                          dict(window_strides=(1, 1), padding="SAME",
                               feature_group_count=4,
                               dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d_batch_groups": ((4, 3, 5, 5), (6, 3, 2, 2),
                        dict(window_strides=(1, 1), padding="VALID",
                             batch_group_count=2)),
    "2d_output_nhwc_from_nchw": ((2, 3, 6, 6), (4, 3, 2, 2),
                                 dict(window_strides=(1, 1), padding="VALID",
                                      dimension_numbers=("NCHW", "OIHW",
                                                         "NHWC"))),
    "2d_1x1": ((2, 5, 4, 4), (7, 5, 1, 1),
               dict(window_strides=(1, 1), padding="VALID")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_float32(name):
    lhs_shape, rhs_shape, kwargs = CASES[name]
    lhs = random_array(lhs_shape, np.float32, seed=1)
    rhs = random_array(rhs_shape, np.float32, seed=2)
    check(lambda x, w: lax.conv_general_dilated(x, w, **kwargs), lhs, rhs,
          atol=1e-5)


def test_conv_3d():
    lhs = random_array((1, 2, 5, 6, 4), np.float32, seed=3)
    rhs = random_array((3, 2, 2, 3, 2), np.float32, seed=4)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 2, 1), "SAME"),
          lhs, rhs, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, bfloat16],
                         ids=["f16", "bf16"])
def test_conv_half(dtype):
    lhs = random_array((1, 2, 6, 6), dtype, seed=5, low=-1, high=1)
    rhs = random_array((3, 2, 3, 3), dtype, seed=6, low=-1, high=1)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
          lhs, rhs, rtol=5e-2, atol=5e-2)


def test_conv_preferred_type():
    lhs = random_array((1, 2, 6, 6), bfloat16, seed=7, low=-1, high=1)
    rhs = random_array((3, 2, 3, 3), bfloat16, seed=8, low=-1, high=1)
    check(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", preferred_element_type=jnp.float32),
        lhs, rhs, atol=1e-5)


def test_conv_transpose():
    x = random_array((1, 5, 5, 2), np.float32, seed=9)
    w = random_array((3, 3, 2, 4), np.float32, seed=10)
    check(lambda a, k: lax.conv_transpose(a, k, (2, 2), "SAME",
                                          dimension_numbers=("NHWC", "HWIO",
                                                             "NHWC")),
          x, w, atol=1e-5)


def test_conv_gradients():
    # The backward pass is convolutions too (transposed, dilated, grouped).
    x = random_array((2, 3, 7, 7), np.float32, seed=11)
    w = random_array((4, 3, 3, 3), np.float32, seed=12)

    def loss(a, k):
        y = lax.conv_general_dilated(a, k, (2, 2), ((1, 1), (1, 1)))
        return jnp.sum(jnp.tanh(y))

    check(jax.grad(loss, argnums=(0, 1)), x, w, atol=1e-5)


def test_conv_integer():
    lhs = random_array((1, 2, 5, 5), np.int32, seed=13, low=-3, high=3)
    rhs = random_array((2, 2, 2, 2), np.int32, seed=14, low=-3, high=3)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"),
          lhs, rhs)


# Convolutions of at least 2^20 multiply-adds run through oneDNN
# (docs/compile.md): ResNet-50's NHWC / HWIO blocks at a quarter of the
# width, a strided one with its gradients (the input gradient is a
# transposed convolution, a oneDNN deconvolution), depthwise, and bf16.
NHWC = ("NHWC", "HWIO", "NHWC")


def test_conv_onednn_resnet_block():
    x = random_array((1, 28, 28, 32), np.float32, seed=21, low=-1, high=1)
    w = random_array((3, 3, 32, 32), np.float32, seed=22, low=-1, high=1)
    check(lambda a, k: lax.conv_general_dilated(
        a, k, (1, 1), "SAME", dimension_numbers=NHWC), x, w,
        rtol=1e-5, atol=1e-4)


def test_conv_onednn_strided_gradients():
    x = random_array((2, 28, 28, 16), np.float32, seed=23, low=-1, high=1)
    w = random_array((3, 3, 16, 32), np.float32, seed=24, low=-1, high=1)

    def loss(a, k):
        y = lax.conv_general_dilated(a, k, (2, 2), "SAME",
                                     dimension_numbers=NHWC)
        return jnp.sum(jnp.tanh(y))

    check(jax.grad(loss, argnums=(0, 1)), x, w, rtol=1e-4, atol=1e-4)


def test_conv_onednn_depthwise():
    x = random_array((2, 56, 56, 64), np.float32, seed=25, low=-1, high=1)
    w = random_array((3, 3, 1, 64), np.float32, seed=26, low=-1, high=1)
    check(lambda a, k: lax.conv_general_dilated(
        a, k, (1, 1), "SAME", dimension_numbers=NHWC,
        feature_group_count=64), x, w, rtol=1e-5, atol=1e-5)


def test_conv_onednn_bf16():
    x = random_array((1, 28, 28, 32), bfloat16, seed=27, low=-1, high=1)
    w = random_array((3, 3, 32, 32), bfloat16, seed=28, low=-1, high=1)
    # Both sum in f32 and round once to bf16: one bf16 step apart at most
    # (2^-8 of values up to about 10).
    check(lambda a, k: lax.conv_general_dilated(
        a, k, (1, 1), "SAME", dimension_numbers=NHWC), x, w,
        rtol=1e-2, atol=5e-2)
