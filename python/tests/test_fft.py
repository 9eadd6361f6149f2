"""FFT: fft, ifft, rfft, irfft, fft2 and n-dimensional transforms."""

import jax.numpy as jnp
import numpy as np
import pytest

from conftest import check, random_array

C = random_array((4, 16), np.complex64, seed=1, low=-1, high=1)
R = random_array((4, 16), np.float32, seed=2, low=-1, high=1)
# FFTs sum N terms: tolerances relative to the size of the output.
TOL = dict(rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [None, 8, 12, 20])
def test_fft_ifft(n):
    check(lambda c: (jnp.fft.fft(c, n=n), jnp.fft.ifft(c, n=n)), C, **TOL)


@pytest.mark.parametrize("n", [None, 10, 16, 7])
def test_rfft_irfft(n):
    check(lambda r: (jnp.fft.rfft(r, n=n), jnp.fft.irfft(r.astype(jnp.complex64)
                                                         + 0j, n=n)), R, **TOL)


def test_irfft_of_rfft_roundtrip():
    check(lambda r: jnp.fft.irfft(jnp.fft.rfft(r), n=16), R, **TOL)


def test_fft_axes_and_norm():
    check(lambda c: (jnp.fft.fft(c, axis=0), jnp.fft.fft(c, norm="ortho"),
                     jnp.fft.ifft(c, norm="forward"),
                     jnp.fft.fftshift(jnp.fft.fft(c))), C, **TOL)


def test_fft2_ifft2():
    x = random_array((2, 6, 8), np.complex64, seed=3, low=-1, high=1)
    check(lambda c: (jnp.fft.fft2(c), jnp.fft.ifft2(c),
                     jnp.fft.fft2(c, axes=(0, 2))), x, **TOL)


def test_rfft2_irfft2_fftn():
    x = random_array((3, 6, 8), np.float32, seed=4, low=-1, high=1)
    check(lambda r: (jnp.fft.rfft2(r), jnp.fft.irfft2(jnp.fft.rfft2(r)),
                     jnp.fft.fftn(r), jnp.fft.rfftn(r),
                     jnp.fft.ifftn(r.astype(jnp.complex64))), x, **TOL)


def test_fft_prime_and_power_of_two_sizes():
    for n in (1, 2, 3, 17, 64, 100):
        x = random_array((n,), np.complex64, seed=n, low=-1, high=1)
        check(jnp.fft.fft, x, rtol=1e-5, atol=1e-5 * max(1, np.sqrt(n)))
