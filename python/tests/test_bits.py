"""The bits promise (docs/exec.md, "Bits"): the same program on the same
machine gives the same bits at any thread count and on every run.

bits_child.py runs a set of programs on Kiln (convolution gradients,
attention, f64 products and solves through OpenBLAS, complex products,
FFTs, reductions, MLP gradients) in a process of its own for each thread
count, OMP_NUM_THREADS=1, 2 and 4 (Kiln's parallel loops and oneDNN's
primitives run on OpenMP's threads), and twice at 2 threads; every digest
must agree.
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# oneDNN 2.6's f32 matmul splits the sums of some products over its
# threads when it has four of them (a narrow one, 512 -> 64 columns, and a
# product with a transposed operand, g @ W^T, in a gradient), so their bits
# change with the thread count; Kiln does not yet cut oneDNN's products
# into tiles of its own as it cuts OpenBLAS's (docs/exec.md, "Bits").
KNOWN_THREAD_DEPENDENT = {"mlp_grad_wide", "mlp_grad_narrow"}

# OpenBLAS's matrix-vector kernels for AVX-512 CPUs (its SkylakeX set, which
# it picks on Zen 4 too) give results that depend on how many threads the
# library started with (OMP_NUM_THREADS when it loads, else the core
# count), even though Kiln runs every call on one thread: dgemv and dger
# differ between a start with one thread and one with two or more, and so
# do the LAPACK factorizations built on them (getrf, potrf). Measured with
# the library alone through ctypes; its Haswell and Zen kernel sets do not
# (docs/exec.md, "Bits"). A solve is the same at every start with two or
# more threads.
OPENBLAS_START_DEPENDENT = {"f64_solve"}


def digests(threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, os.path.join(HERE, "bits_child.py")],
                         env=env, capture_output=True, text=True, timeout=600,
                         check=True).stdout
    return dict(line.split() for line in out.splitlines() if line.strip())


@pytest.fixture(scope="module")
def runs():
    return {label: digests(threads) for label, threads in
            [("1", 1), ("2", 2), ("2 again", 2), ("4", 4)]}


def test_every_program_ran(runs):
    for label, result in runs.items():
        assert len(result) == 9, (label, sorted(result))


def test_same_bits_at_one_two_and_four_threads_and_on_every_run(runs):
    names = sorted(runs["1"])
    differing = [name for name in names
                 if name not in KNOWN_THREAD_DEPENDENT | OPENBLAS_START_DEPENDENT
                 and len({result[name] for result in runs.values()}) != 1]
    assert differing == []


def test_library_solves_same_bits_wherever_the_library_started_threaded(runs):
    for name in OPENBLAS_START_DEPENDENT:
        assert runs["2"][name] == runs["2 again"][name] == runs["4"][name]


def test_same_bits_on_every_run_even_where_threads_change_them(runs):
    for name in KNOWN_THREAD_DEPENDENT:
        assert runs["2"][name] == runs["2 again"][name]


@pytest.mark.xfail(reason="oneDNN splits some products' sums over four "
                   "threads (KNOWN_THREAD_DEPENDENT)", strict=False)
def test_onednn_products_at_four_threads(runs):
    for name in KNOWN_THREAD_DEPENDENT:
        assert runs["1"][name] == runs["4"][name]
