"""The benchmark suite (bench/suite, scripts/bench.sh) works end to end.

Runs the suite in `--quick` mode on a few small rows in a process of its own
and checks the JSON it writes: every row has Kiln's figure, its peers (or
the reason one is missing), ratios and a verdict. Performance is not
asserted: the machine is shared and Kiln is not yet fast.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SUITE = os.path.join(REPO, "bench", "suite")


def _run_suite(out_dir, *arguments):
    env = dict(os.environ)
    env.pop("KILN_CPU_DEVICE_COUNT", None)
    done = subprocess.run(
        [sys.executable, os.path.join(SUITE, "run.py"), "--quick",
         "--no-torch", "--out", str(out_dir), *arguments],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(os.path.join(out_dir, "bench.json"), encoding="utf-8") as f:
        return json.load(f), done.stdout


def test_quick_rows_write_the_expected_json(tmp_path):
    document, stdout = _run_suite(tmp_path, "--rows", "gelu,dispatch,mlp_train")
    for key in ("date", "machine", "threads", "versions", "timing", "rows"):
        assert key in document
    assert document["quick"] is True
    assert document["threads"]["kiln"] >= 1
    rows = {row["id"]: row for row in document["rows"]}
    assert {"gelu", "mlp_train", "compile_mlp_train", "dispatch_capi",
            "dispatch_execute", "dispatch_jit"} <= set(rows)
    for row in rows.values():
        assert row["error"] is None, row
        for key in ("group", "name", "unit", "kiln", "peers", "ratios",
                    "goal", "pass"):
            assert key in row
        if row["skipped"]:
            continue
        assert row["kiln"]["value"] > 0
        assert row["kiln"]["repeats"] >= 1
        for name, peer in row["peers"].items():
            assert (peer["value"] or 0) > 0 or peer["unavailable"], (name, row)
            if peer["value"]:
                assert row["ratios"][name] > 0
    assert set(rows["gelu"]["peers"]) == {"memcpy", "XLA:CPU"}
    assert rows["gelu"]["kiln"]["finite"] is True
    mlp = rows["mlp_train"]
    assert mlp["peers"]["XLA:CPU"]["value"] > 0
    assert "no-torch" in mlp["peers"]["PyTorch"]["unavailable"]
    # Without PyTorch the verdict rests on XLA:CPU alone.
    assert mlp["pass"] in (True, False)
    assert rows["compile_mlp_train"]["group"] == 6
    assert "Kiln/peer" in stdout and "goals:" in stdout
    if importlib.util.find_spec("matplotlib"):
        assert os.path.getsize(tmp_path / "bench.png") > 0


def test_profile_lists_kilns_steps(tmp_path):
    """--profile: each row's Kiln figure carries its steps from a traced
    run; the MLP step's time is mostly its matmuls, and its steps by kind
    add up to the total."""
    document, stdout = _run_suite(tmp_path, "--rows", "mlp_train",
                                  "--profile")
    rows = {row["id"]: row for row in document["rows"]}
    profile = rows["mlp_train"]["kiln"]["profile"]
    assert "error" not in profile, profile
    assert profile["runs"] >= 1 and profile["total_ms"] > 0
    kinds = {k["kind"]: k for k in profile["kinds"]}
    # Forward, backward and weight-gradient products: 3 + 2 + 3 at least.
    assert kinds["stablehlo.dot_general"]["count"] >= 8
    assert sum(k["ms"] for k in profile["kinds"]) == pytest.approx(
        profile["total_ms"], rel=1e-6)
    steps = profile["steps"]
    assert steps and all(s["ms"] >= 0 for s in steps)
    assert [s["ms"] for s in steps] == sorted((s["ms"] for s in steps),
                                              reverse=True)
    assert "mlp_train: Kiln" in stdout and "Kiln's steps" in stdout
    # Rows without --profile carry none.
    assert "profile" not in rows["compile_mlp_train"]["kiln"]


def test_unknown_row_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, os.path.join(SUITE, "run.py"), "--quick", "--rows",
         "nope", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0
    assert "unknown row 'nope'" in done.stderr


def test_resnet50_weights_become_arguments():
    sys.path.insert(0, SUITE)
    try:
        import corpus
    finally:
        sys.path.remove(SUITE)
    if corpus.missing_reason(REPO, corpus.RESNET50):
        pytest.skip(corpus.missing_reason(REPO, corpus.RESNET50))
    program = corpus.load_resnet50(REPO)
    assert "dense_resource" not in program.code
    assert program.arguments[0] == ((1, 3, 224, 224), "f32")
    assert len(program.arguments) == 1 + 265
    arguments = corpus.fill_arguments(program)
    assert [a.shape for a in arguments] == [s for s, _ in program.arguments]
