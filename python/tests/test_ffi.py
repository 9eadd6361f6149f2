"""User FFI handlers on Kiln: a handler library built with the FFI headers
jaxlib ships (`jax.ffi.include_dir()`), registered for `kiln` and for `cpu`
with `jax.ffi.register_ffi_target`, called from `jax.jit` through
`jax.ffi.ffi_call`; results are checked against numpy and against the same
handler on XLA:CPU in the same process.
"""

import ctypes
import shutil
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import assert_close, run_both, run_on

# The handlers, written against XLA's C++ FFI API (ffi.h):
#   kiln_test_affine: y = x * scale + offsets[i % len(offsets)] + opts.bias
#     (attributes: an f32 scalar, an i64 array, a string, a dictionary) and a
#     second result [element count, len(label)];
#   kiln_test_split: two inputs, three results (sum, product, x > y);
#   kiln_test_refuse: always fails with its attribute `why`.
_HANDLERS = r"""
#include <cstdint>
#include <string>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error Affine(ffi::Buffer<ffi::F32> x, float scale,
                         ffi::Span<const int64_t> offsets,
                         std::string_view label, ffi::Dictionary opts,
                         ffi::ResultBuffer<ffi::F32> y,
                         ffi::ResultBuffer<ffi::S32> info) {
  auto bias = opts.get<int64_t>("bias");
  if (!bias.has_value()) return ffi::Error::InvalidArgument("opts.bias is missing");
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) {
    float offset = offsets.size() == 0
        ? 0.0f : static_cast<float>(offsets[i % offsets.size()]);
    y->typed_data()[i] = x.typed_data()[i] * scale + offset +
                         static_cast<float>(*bias);
  }
  info->typed_data()[0] = static_cast<int32_t>(n);
  info->typed_data()[1] = static_cast<int32_t>(label.size());
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    KilnTestAffine, Affine,
    ffi::Ffi::Bind()
        .Arg<ffi::Buffer<ffi::F32>>()
        .Attr<float>("scale")
        .Attr<ffi::Span<const int64_t>>("offsets")
        .Attr<std::string_view>("label")
        .Attr<ffi::Dictionary>("opts")
        .Ret<ffi::Buffer<ffi::F32>>()
        .Ret<ffi::Buffer<ffi::S32>>());

static ffi::Error Split(ffi::Buffer<ffi::F64> x, ffi::Buffer<ffi::F64> y,
                        ffi::ResultBuffer<ffi::F64> sum,
                        ffi::ResultBuffer<ffi::F64> product,
                        ffi::ResultBuffer<ffi::PRED> greater) {
  if (x.element_count() != y.element_count()) {
    return ffi::Error::InvalidArgument("x and y differ in size");
  }
  for (size_t i = 0; i < x.element_count(); ++i) {
    double a = x.typed_data()[i], b = y.typed_data()[i];
    sum->typed_data()[i] = a + b;
    product->typed_data()[i] = a * b;
    greater->typed_data()[i] = a > b;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    KilnTestSplit, Split,
    ffi::Ffi::Bind()
        .Arg<ffi::Buffer<ffi::F64>>()
        .Arg<ffi::Buffer<ffi::F64>>()
        .Ret<ffi::Buffer<ffi::F64>>()
        .Ret<ffi::Buffer<ffi::F64>>()
        .Ret<ffi::Buffer<ffi::PRED>>());

static ffi::Error Refuse(ffi::AnyBuffer, std::string_view why,
                         ffi::Result<ffi::AnyBuffer>) {
  return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                    "refused: " + std::string(why));
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    KilnTestRefuse, Refuse,
    ffi::Ffi::Bind()
        .Arg<ffi::AnyBuffer>()
        .Attr<std::string_view>("why")
        .Ret<ffi::AnyBuffer>());
"""

_TARGETS = {
    "kiln_test_affine": "KilnTestAffine",
    "kiln_test_split": "KilnTestSplit",
    "kiln_test_refuse": "KilnTestRefuse",
}


@pytest.fixture(scope="module")
def handlers(tmp_path_factory):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler (g++ or c++) to build the FFI handlers")
    folder = tmp_path_factory.mktemp("ffi")
    source = folder / "handlers.cc"
    source.write_text(_HANDLERS)
    library = folder / "libkiln_test_handlers.so"
    subprocess.run(
        [compiler, "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
         f"-I{jax.ffi.include_dir()}", str(source), "-o", str(library)],
        check=True, capture_output=True, text=True)
    lib = ctypes.CDLL(str(library))
    for target, symbol in _TARGETS.items():
        capsule = jax.ffi.pycapsule(getattr(lib, symbol))
        jax.ffi.register_ffi_target(target, capsule, platform="kiln")
        jax.ffi.register_ffi_target(target, capsule, platform="cpu")
    return lib


def _affine(x, scale=np.float32(1.5)):
    return jax.ffi.ffi_call(
        "kiln_test_affine",
        (jax.ShapeDtypeStruct(x.shape, x.dtype),
         jax.ShapeDtypeStruct((2,), jnp.int32)))(
            x, scale=scale, offsets=np.array([1, -2, 3], np.int64),
            label="seven c", opts={"bias": 10})


def test_attributes_reach_the_handler(handlers):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)

    def f(x):
        y, info = _affine(x)
        return y * 2, info  # JAX ops around the call

    kiln, cpu = run_both(f, x)
    offsets = np.array([1, -2, 3], np.float32)[np.arange(12) % 3].reshape(3, 4)
    expected = (x * np.float32(1.5) + offsets + 10) * 2
    assert_close(kiln[0], expected.astype(np.float32), np.float32)
    assert_close(kiln[0], cpu[0], np.float32)
    np.testing.assert_array_equal(kiln[1], [12, 7])
    np.testing.assert_array_equal(kiln[1], cpu[1])


def test_multiple_inputs_and_outputs(handlers):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    y = rng.standard_normal((5, 3))

    def f(x, y):
        return jax.ffi.ffi_call(
            "kiln_test_split",
            (jax.ShapeDtypeStruct(x.shape, jnp.float64),
             jax.ShapeDtypeStruct(x.shape, jnp.float64),
             jax.ShapeDtypeStruct(x.shape, jnp.bool_)))(x, y)

    with jax.enable_x64(True):
        kiln, cpu = run_both(f, x, y)
    np.testing.assert_allclose(kiln[0], x + y, rtol=1e-15)
    np.testing.assert_allclose(kiln[1], x * y, rtol=1e-15)
    np.testing.assert_array_equal(kiln[2], x > y)
    for k, c in zip(kiln, cpu):
        np.testing.assert_array_equal(k, c)


def test_vmapped_call_matches_cpu(handlers):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def f(x):
        def one(row):
            return jax.ffi.ffi_call(
                "kiln_test_affine",
                (jax.ShapeDtypeStruct(row.shape, row.dtype),
                 jax.ShapeDtypeStruct((2,), jnp.int32)),
                vmap_method="sequential")(
                    row, scale=np.float32(-1), offsets=np.array([], np.int64),
                    label="", opts={"bias": 0})[0]
        return jax.vmap(one)(x)

    kiln, cpu = run_both(f, x)
    assert_close(kiln, -x, np.float32)
    assert_close(kiln, cpu, np.float32)


def test_handler_error_fails_the_call_with_its_message(handlers, kiln):
    def f(x):
        return jax.ffi.ffi_call(
            "kiln_test_refuse", jax.ShapeDtypeStruct(x.shape, x.dtype))(
                x, why="no such thing")

    x = jax.device_put(np.ones(3, np.float32), kiln)
    with pytest.raises(jax.errors.JaxRuntimeError) as error:
        np.asarray(jax.jit(f)(x))
    message = str(error.value)
    assert "refused: no such thing" in message
    assert "kiln_test_refuse" in message
    # The same handler fails the same way on XLA:CPU.
    with pytest.raises(Exception, match="refused: no such thing"):
        np.asarray(jax.jit(f)(jax.device_put(np.ones(3, np.float32),
                                             jax.devices("cpu")[0])))


def test_unregistered_target_is_unimplemented_naming_it(kiln):
    def f(x):
        return jax.ffi.ffi_call(
            "kiln_test_nobody_registered",
            jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    with pytest.raises(jax.errors.JaxRuntimeError,
                       match="UNIMPLEMENTED.*kiln_test_nobody_registered"):
        run_on(kiln, f, np.ones(3, np.float32))


def test_register_ffi_type_gives_an_id(kiln):
    # An XLA_FFI_TypeId the plugin fills (PJRT_FFI_TypeID_Register).
    type_id = ctypes.c_int64(0)
    capsule = jax.ffi.pycapsule(ctypes.addressof(type_id))
    jax.ffi.register_ffi_type("kiln_test_type", {"type_id": capsule},
                              platform="kiln")
    assert type_id.value > 0
    # The same name again keeps its id.
    again = ctypes.c_int64(0)
    jax.ffi.register_ffi_type(
        "kiln_test_type", {"type_id": jax.ffi.pycapsule(ctypes.addressof(again))},
        platform="kiln")
    assert again.value == type_id.value
