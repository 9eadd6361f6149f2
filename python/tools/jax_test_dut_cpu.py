"""A pytest plugin for JAX's test modules: the device under test is a CPU.

JAX's test harness picks tests and tolerances by the platform it runs on
(`jtu.run_on_devices("cpu")`, `jtu.skip_on_devices("cpu")`, per-device
tolerances), and knows nothing of `kiln`: on Kiln it would skip hundreds of
tests that run on `cpu`, and run others `cpu` skips. Kiln's devices are CPU
devices, so run_jax_tests.py loads this plugin (`-p jax_test_dut_cpu`) for
the kiln run, setting JAX's own `jax_test_dut` flag: both runs then select
the same tests with the same expectations, and a test that assumes XLA:CPU
fails on Kiln instead of being skipped.
"""


import sys

_done = False


def _set_dut():
    global _done
    if _done:
        return
    import jax
    from jax._src import test_util  # noqa: F401  (defines the flag)

    jax.config.update("jax_test_dut", "cpu")
    _done = True


def pytest_configure(config):
    # JAX's test modules parse the --jax* flags of sys.argv when they are
    # imported (jax.config.parse_flags_with_absl), before they generate their
    # tests: the parameters some tests are generated with depend on the
    # device under test (linalg_test's SVD algorithms), and both runs must
    # generate the same tests. jax itself is not imported here: importing it
    # before pytest captures output would bind jax.debug.print's stream to
    # the uncaptured stdout.
    if not any(arg.startswith("--jax_test_dut") for arg in sys.argv):
        sys.argv.append("--jax_test_dut=cpu")


def pytest_runtest_setup(item):
    _set_dut()
