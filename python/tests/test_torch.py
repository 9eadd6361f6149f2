"""PyTorch/XLA on Kiln: the digits training loop, single ops, bad input.

torch_xla keeps one PJRT client per process, so each backend runs in a child
process (torch/torch_child.py) and reports JSON; this module compares. It
needs the pinned torch==2.9.0 and torch_xla==2.9.0 (several GB: not part of
python/requirements.txt); `./scripts/test_torch.sh` installs them and runs
it (docs/torch.md). Without torch_xla every test here is skipped.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

# Looked up, not imported: importing torch_xla here would load torch into the
# JAX suite's process; only the children import it.
if importlib.util.find_spec("torch_xla") is None:
    pytest.skip(
        "torch_xla is not installed: PyTorch/XLA tests run with "
        "./scripts/test_torch.sh (pins torch==2.9.0 and torch_xla==2.9.0)",
        allow_module_level=True)

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch",
                     "torch_child.py")
STEPS = 30
_results = {}


def run_child(*args, device="KILN", stablehlo=False, extra_env=None):
    env = dict(os.environ)
    env["PJRT_DEVICE"] = device
    env.pop("XLA_STABLEHLO_COMPILE", None)
    if stablehlo:
        env["XLA_STABLEHLO_COMPILE"] = "1"
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, CHILD, *args], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"child {args} on {device} exited {proc.returncode}\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def train(model, device="KILN", stablehlo=False):
    key = (model, device, stablehlo)
    if key not in _results:
        _results[key] = run_child("train", model, str(STEPS), device=device,
                                  stablehlo=stablehlo)
    return _results[key]


def ms_per_step(result):
    # Steps after the first two (compile and warm-up).
    times = result["ms"][2:]
    return sum(times) / len(times)


@pytest.mark.parametrize("stablehlo", [False, True], ids=["hlo", "mlir"])
@pytest.mark.parametrize("model", ["cnn", "mlp"])
def test_training_loop_on_kiln(model, stablehlo):
    result = train(model, stablehlo=stablehlo)
    assert result["device"] == "KILN"
    losses = result["losses"]
    assert min(losses[-5:]) < losses[0] - 0.2, losses
    # One compile, at the first step; one execution per step after it.
    assert result["compiles"] == [1] * STEPS, result["compiles"]
    assert result["executes"] == list(range(1, STEPS + 1)), result["executes"]
    assert result["params_on_device"]
    # torch CPU eager, from the same initial weights and batches.
    for step, (got, want) in enumerate(zip(losses, result["eager"])):
        assert abs(got - want) <= 1e-4 + 1e-4 * abs(want), (step, got, want)


def test_library_route_trains():
    import kiln_pjrt
    result = run_child("train", "mlp", "6", device="LIBRARY",
                       extra_env={"PJRT_LIBRARY_PATH": kiln_pjrt.library_path()})
    assert result["losses"][-1] < result["losses"][0]
    assert result["compiles"][-1] == 1


def test_kiln_next_to_torch_xla_cpu():
    """torch_xla's own CPU backend (XLA:CPU) on the same loop; ms/step."""
    rows = []
    for model in ("cnn", "mlp"):
        kiln = train(model)
        cpu = train(model, device="CPU")
        assert cpu["device"] == "CPU"
        for got, want in zip(kiln["losses"], cpu["losses"]):
            assert abs(got - want) <= 1e-4 + 1e-4 * abs(want)
        rows.append((model, ms_per_step(kiln), ms_per_step(cpu),
                     kiln["ms"][0], cpu["ms"][0]))
    print("\nmodel  kiln ms/step  torch_xla CPU ms/step  "
          "(first step: kiln, cpu)")
    for model, kiln_ms, cpu_ms, kiln_first, cpu_first in rows:
        print(f"{model:5}  {kiln_ms:12.2f}  {cpu_ms:21.2f}  "
              f"({kiln_first:.0f} ms, {cpu_first:.0f} ms)")


def test_single_ops_match_torch_eager():
    ops = run_child("ops")["ops"]
    failed = {name: r for name, r in ops.items() if not r["ok"]}
    print(f"\n{len(ops) - len(failed)}/{len(ops)} single ops match torch eager")
    assert not failed, failed


def test_unsupported_program_is_a_python_exception():
    result = run_child("bad")
    assert result["raised"] is not None, result
    assert "not supported by Kiln" in result["message"], result["message"]
