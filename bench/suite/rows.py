"""The suite's rows: what each measures, on which backends, against what.

Groups (`--rows` takes their numbers or names, or model ids):

  1 gelu      gelu(x*a+b), erf form: Kiln GB/s beside memcpy, XLA:CPU
  2 dot       f32 matmul: Kiln GFLOP/s beside dnnl_sgemm, XLA:CPU
  3 models    ResNet-50 (batch 1 from the corpus, batch 8 in plain JAX),
              the chess transformer, an MLP training step: Kiln ms beside
              XLA:CPU and PyTorch
  4 layers    a BERT-base encoder layer and a small CNN training step
  5 dispatch  a tiny program's round trip: through the C API, through
              jaxlib's executable, through jax.jit
  6 compile   lower + compile of every model above, Kiln beside XLA:CPU

Within a row every contender is prepared first (compiled, inputs on its
device), then all are measured in alternating rounds (timing.interleave).
"""

import dataclasses
import gc
import os
import time
import traceback
from typing import Callable

import jax
import jax.extend
import numpy as np
from jax._src import compiler
from jax._src.lib import xla_client

import corpus
import jax_programs as jp
import native_peers
import step_profile
import torch_programs
from results import Condition, Figure, Goal, Row, figure_from_seconds
from timing import (Budget, Sampler, Timing, calls_for, interleave,
                    run_sampler, seconds_sampler)

XLA = "XLA:CPU"
TORCH = "PyTorch"
MEMCPY = "memcpy"
ONEDNN = "oneDNN sgemm"
HOST_ROUND_TRIP = "C API host round trip"

GROUPS = {"gelu": 1, "dot": 2, "models": 3, "layers": 4, "dispatch": 5,
          "compile": 6}


@dataclasses.dataclass
class Suite:
    """What every row needs: the devices, the budget, where things are."""
    repo_root: str
    bin_dir: str
    budget: Budget
    compile_budget: Budget
    quick: bool
    torch_reason: str | None  # why PyTorch is not measured, or None
    profile: bool = False  # trace Kiln's steps after each timed row
    kiln: object = None  # the first Kiln device
    cpu: object = None  # the first XLA:CPU device

    def __post_init__(self):
        self.kiln = jax.devices("kiln")[0]
        self.cpu = jax.devices("cpu")[0]


# --- Preparing programs on a backend -----------------------------------------

@dataclasses.dataclass
class Prepared:
    compile_seconds: float
    run: Callable[[], object]
    finite: Callable[[], bool]
    recompile: Callable[[], float]  # a fresh, uncached compile's seconds


def prepare_jax(program: jp.JaxProgram, device) -> Prepared:
    prepared = jp.prepare_jax(program, device)
    return Prepared(
        prepared.compile_seconds, prepared.run, prepared.finite,
        lambda: jp.prepare_jax(program, device).compile_seconds)


def prepare_corpus(program: corpus.Program, arguments: list[np.ndarray],
                   device) -> Prepared:
    """Compiles a module through the backend's client, as JAX would."""
    backend = jax.extend.backend.get_backend(device.platform)
    options = compiler.get_compile_options(
        num_replicas=1, num_partitions=1, device_assignment=[device],
        backend=backend)
    devices = xla_client.DeviceList((device,))

    def compile_once():
        start = time.perf_counter()
        executable = backend.compile_and_load(program.code, devices, options)
        return executable, time.perf_counter() - start

    executable, seconds = compile_once()
    on_device = [jax.device_put(a, device) for a in arguments]
    jax.block_until_ready(on_device)
    last = {}

    def run():
        results = executable.execute_sharded(on_device)
        outputs = [o[0] for o in
                   results.disassemble_into_single_device_arrays()]
        jax.block_until_ready(outputs)
        last["outputs"] = outputs

    def finite():
        return all(bool(np.all(np.isfinite(np.asarray(o))))
                   for o in last["outputs"])

    return Prepared(seconds, run, finite, lambda: compile_once()[1])


def _figure(unit: str, timing: Timing, work: float | None = None,
            **details) -> Figure:
    return figure_from_seconds(unit, timing.median, timing.min,
                               len(timing.samples), work, **details)


def _prepared_details(prepared: Prepared) -> dict:
    return {"finite": prepared.finite(),
            "compile_s": prepared.compile_seconds}


def _attach_profile(suite: Suite, figure: Figure,
                    run: Callable[[], object]) -> None:
    """With --profile: Kiln's steps in a traced run, into the figure."""
    if not suite.profile or figure.value is None:
        return
    try:
        figure.details["profile"] = step_profile.profile_steps(run)
    except Exception as e:  # noqa: BLE001 - the figure stands without it
        figure.details["profile"] = {"error": f"{type(e).__name__}: {e}"}


def _native_sampler(call: Callable[[Budget], dict]) -> tuple[Sampler, dict]:
    """A sampler of a native peer: each round runs the binary once with the
    round's budget. The returned dict keeps the last JSON it printed, or
    the reason it could not run (under "unavailable")."""
    last: dict = {}

    def sample(budget: Budget, warmup: bool) -> list[float]:
        if warmup or "unavailable" in last:
            return []
        try:
            last.update(call(budget))
        except native_peers.PeerUnavailable as e:
            last["unavailable"] = str(e)
            return []
        return last["samples_s"]

    return sample, last


def _native_figure(unit: str, timing: Timing, last: dict, work: float,
                   **details) -> Figure:
    if "unavailable" in last or not timing.samples:
        return Figure.missing(last.get("unavailable", "not measured"))
    return _figure(unit, timing, work, **details)


# --- 1: gelu beside memcpy ---------------------------------------------------

def gelu_rows(suite: Suite) -> list[Row]:
    elements = (1 << 20) if suite.quick else (16 << 20)
    moved = 2 * 4 * elements  # x read once, the result written once
    program = jp.gelu_program(elements)
    row = Row(group=1, id="gelu",
              name=f"gelu(x*a+b) erf, {elements >> 20} Mi f32", unit="GB/s",
              kiln=Figure(), peers={},
              params={"elements": elements, "bytes_moved": moved},
              goal=Goal(">=0.7x memcpy", [Condition(MEMCPY, 0.7)]),
              notes=["GB/s counts bytes read + written (x in, result out); "
                     "memcpy copies 4 x elements bytes, so it moves the "
                     "same; its figure is the faster of 1 thread and all "
                     "cores"])
    kiln = prepare_jax(program, suite.kiln)
    xla = prepare_jax(program, suite.cpu)
    copies = {}
    samplers = {"kiln": run_sampler(kiln.run)}
    for threads in (1, 0):  # 0: every available core
        samplers[f"memcpy{threads}"], copies[threads] = _native_sampler(
            lambda budget, threads=threads: native_peers.memcpy(
                suite.bin_dir, 4 * elements, threads, budget))
    samplers[XLA] = run_sampler(xla.run)
    timings = interleave(samplers, suite.budget)
    row.kiln = _figure("GB/s", timings["kiln"], moved,
                       **_prepared_details(kiln))
    _attach_profile(suite, row.kiln, kiln.run)
    row.peers[MEMCPY] = Figure.missing(copies[1].get("unavailable", ""))
    for threads, last in copies.items():
        figure = _native_figure("GB/s", timings[f"memcpy{threads}"], last,
                                moved, threads=last.get("threads"))
        if figure.value is not None and (row.peers[MEMCPY].value is None or
                                         figure.value >
                                         row.peers[MEMCPY].value):
            row.peers[MEMCPY] = figure
        row.params[f"memcpy_gbps_{last.get('threads', threads)}_threads"] = (
            figure.value)
    row.peers[XLA] = _figure("GB/s", timings[XLA], moved,
                             **_prepared_details(xla))
    return [row]


# --- 2: matmul beside oneDNN -------------------------------------------------

def dot_rows(suite: Suite) -> list[Row]:
    sizes = [128, 256] if suite.quick else [256, 1024, 2048]
    rows = []
    for n in sizes:
        flops = 2.0 * n ** 3
        goal = (Goal(">=0.9x oneDNN", [Condition(ONEDNN, 0.9)])
                if n >= 1024 else None)
        row = Row(group=2, id=f"dot_{n}", name=f"dot_general f32 {n}^3",
                  unit="GFLOP/s", kiln=Figure(), peers={}, goal=goal,
                  params={"n": n, "flops": flops})
        program = jp.matmul_program(n)
        kiln = prepare_jax(program, suite.kiln)
        xla = prepare_jax(program, suite.cpu)

        def sgemm(budget, n=n):
            out = native_peers.sgemm(suite.bin_dir, [n], budget)
            return {"threads": out["threads"],
                    "dnnl_version": out["dnnl_version"], **out["results"][0]}

        sgemm_sampler, sgemm_last = _native_sampler(sgemm)
        timings = interleave({"kiln": run_sampler(kiln.run),
                              ONEDNN: sgemm_sampler,
                              XLA: run_sampler(xla.run)}, suite.budget)
        row.kiln = _figure("GFLOP/s", timings["kiln"], flops,
                           **_prepared_details(kiln))
        _attach_profile(suite, row.kiln, kiln.run)
        row.peers[ONEDNN] = _native_figure(
            "GFLOP/s", timings[ONEDNN], sgemm_last, flops,
            threads=sgemm_last.get("threads"),
            version=sgemm_last.get("dnnl_version"))
        row.peers[XLA] = _figure("GFLOP/s", timings[XLA], flops,
                                 **_prepared_details(xla))
        rows.append(row)
    return rows


# --- 3, 4: models ------------------------------------------------------------

@dataclasses.dataclass
class Model:
    id: str
    group: int
    name: str
    # Returns a function that prepares the model on a device; raises
    # Unavailable when its inputs are missing.
    make: Callable[[Suite], Callable[[object], Prepared]]
    torch: Callable[[], Callable[[], object]] | None  # None: no such program
    params: dict


class Unavailable(Exception):
    pass


def _corpus_model(load, *needs: str):
    def make(suite: Suite):
        reason = corpus.missing_reason(suite.repo_root, *needs)
        if reason:
            raise Unavailable(reason)
        program = load(suite.repo_root)
        arguments = corpus.fill_arguments(program)
        return lambda device: prepare_corpus(program, arguments, device)
    return make


def _jax_model(factory, *args):
    def make(suite: Suite):
        program = factory(*args)
        return lambda device: prepare_jax(program, device)
    return make


def models(quick: bool) -> list[Model]:
    resnet_batch = 2 if quick else 8
    bert_batch, bert_sequence = (1, 32) if quick else (8, 128)
    return [
        Model("resnet50_b1", 3, "ResNet-50 inference b1 (corpus)",
              _corpus_model(corpus.load_resnet50, corpus.RESNET50),
              lambda: torch_programs.resnet50(1), {"batch": 1}),
        Model("resnet50_b8", 3,
              f"ResNet-50 inference b{resnet_batch} (plain JAX)",
              _jax_model(jp.resnet50_program, resnet_batch),
              lambda: torch_programs.resnet50(resnet_batch),
              {"batch": resnet_batch}),
        Model("chess", 3, "searchless_chess_9m (corpus)",
              _corpus_model(corpus.load_chess, corpus.CHESS_BYTECODE,
                            corpus.CHESS_TEXT), None, {}),
        Model("mlp_train", 3, "MLP train step 128x784-512-512-10",
              _jax_model(jp.mlp_train_program),
              torch_programs.mlp_train, {"batch": 128}),
        Model("bert_layer", 4,
              f"BERT-base layer b{bert_batch} s{bert_sequence}",
              _jax_model(jp.bert_layer_program, bert_batch, bert_sequence),
              lambda: torch_programs.bert_layer(bert_batch, bert_sequence),
              {"batch": bert_batch, "sequence": bert_sequence}),
        Model("cnn_train", 4, "small CNN train step b64 28x28",
              _jax_model(jp.cnn_train_program),
              torch_programs.cnn_train, {"batch": 64}),
    ]

@dataclasses.dataclass
class ModelResult:
    run_row: Row | None
    compile_row: Row


def model_rows(suite: Suite, model: Model, execute: bool) -> ModelResult:
    """The model's execution row (when `execute`) and its compile row."""
    goal_faster = Goal("faster than XLA:CPU and PyTorch",
                       [Condition(XLA, 1.0, strict=True),
                        Condition(TORCH, 1.0, strict=True, optional=True)])
    run_row = Row(group=model.group, id=model.id, name=model.name, unit="ms",
                  kiln=Figure(), peers={}, goal=goal_faster,
                  params=model.params) if execute else None
    compile_goal = Goal("faster compile than XLA:CPU",
                        [Condition(XLA, 1.0, strict=True)])
    if model.id == "resnet50_b1":
        compile_goal = Goal("faster than XLA:CPU, < 50 ms",
                            [Condition(XLA, 1.0, strict=True),
                             Condition(None, limit=50.0)])
    compile_row = Row(group=6, id=f"compile_{model.id}",
                      name=f"compile {model.name}", unit="ms", kiln=Figure(),
                      peers={}, goal=compile_goal, params=model.params,
                      notes=["wall time of lower + compile (corpus programs: "
                             "compile_and_load of the module), JAX's caches "
                             "cleared, persistent cache off"])
    try:
        prepare = model.make(suite)
    except Unavailable as e:
        for row in (run_row, compile_row):
            if row:
                row.skipped = str(e)
        return ModelResult(run_row, compile_row)
    kiln = prepare(suite.kiln)
    xla = prepare(suite.cpu)
    # The first compile of each backend (whose executable runs below) also
    # warms JAX's own lowering paths: it is kept in the JSON as first_s, and
    # the figure is over fresh compiles after it.
    compiles = interleave({"kiln": seconds_sampler(kiln.recompile),
                           XLA: seconds_sampler(xla.recompile)},
                          suite.compile_budget)
    gc.collect()
    compile_row.kiln = _figure("ms", compiles["kiln"],
                               first_s=kiln.compile_seconds)
    compile_row.peers[XLA] = _figure("ms", compiles[XLA],
                                     first_s=xla.compile_seconds)
    if run_row is not None:
        samplers = {"kiln": run_sampler(kiln.run), XLA: run_sampler(xla.run)}
        torch_missing = _torch_missing(suite, model)
        if torch_missing is None:
            samplers[TORCH] = run_sampler(model.torch())
        timings = interleave(samplers, suite.budget)
        run_row.kiln = _figure("ms", timings["kiln"],
                               **_prepared_details(kiln))
        _attach_profile(suite, run_row.kiln, kiln.run)
        run_row.peers[XLA] = _figure("ms", timings[XLA],
                                     **_prepared_details(xla))
        run_row.peers[TORCH] = (
            Figure.missing(torch_missing) if torch_missing else
            _figure("ms", timings[TORCH], threads=torch_programs.threads()))
        for label, figure in (("Kiln", run_row.kiln),
                              (XLA, run_row.peers[XLA])):
            if not figure.details["finite"]:
                run_row.notes.append(f"{label}: results not all finite")
    return ModelResult(run_row, compile_row)


def _torch_missing(suite: Suite, model: Model) -> str | None:
    """Why the model has no PyTorch figure, or None if it can have one."""
    if model.torch is None:
        return "no PyTorch version of this program"
    return suite.torch_reason


# --- 5: dispatch -------------------------------------------------------------

_TINY_ADD = """
module @tiny_add {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def dispatch_rows(suite: Suite) -> list[Row]:
    capi = Row(group=5, id="dispatch_capi",
               name="f32[4] add: C API execute round trip", unit="us",
               kiln=Figure(), peers={},
               notes=["Kiln only (XLA:CPU has no C API plugin here): "
                      "bench/pjrt/execute_bench.cc, whose host round trip "
                      "of the same 16 bytes through the same API stands "
                      "beside it as a reference, not a goal"])
    try:
        trips = native_peers.capi_round_trips(suite.bin_dir, suite.budget)
        for name, target in (("BM_ExecuteTinyRoundTrip", None),
                             ("BM_HostRoundTrip16Bytes", HOST_ROUND_TRIP)):
            t = trips[name]
            figure = figure_from_seconds("us", t["median_s"], t["min_s"],
                                         t["repeats"], benchmark=name)
            if target is None:
                capi.kiln = figure
            else:
                capi.peers[target] = figure
    except native_peers.PeerUnavailable as e:
        capi.skipped = str(e)

    no_slower = Goal("no slower than XLA:CPU", [Condition(XLA, 1.0)])
    execute = Row(group=5, id="dispatch_execute",
                  name="f32[4] add: jaxlib executable.execute_sharded",
                  unit="us", kiln=Figure(), peers={}, goal=no_slower,
                  notes=["jaxlib's LoadedExecutable below jax.jit, inputs "
                         "on the device, outputs awaited"])
    program = corpus.Program(_TINY_ADD, [((4,), "f32")] * 2)
    inputs = [np.arange(4, dtype=np.float32)] * 2
    calls = {label: prepare_corpus(program, inputs, device).run
             for label, device in (("kiln", suite.kiln), (XLA, suite.cpu))}
    _measure_calls(suite, execute, calls)

    jitted = Row(group=5, id="dispatch_jit",
                 name="f32[4] add: jax.jit call + block_until_ready",
                 unit="us", kiln=Figure(), peers={}, goal=no_slower)
    calls = {}
    for label, device in (("kiln", suite.kiln), (XLA, suite.cpu)):
        x, y = jax.device_put(jp.tiny_add_program().arguments, device)
        add = jax.jit(lambda a, b: a + b)
        calls[label] = lambda add=add, x=x, y=y: add(x, y).block_until_ready()
    _measure_calls(suite, jitted, calls)
    return [capi, execute, jitted]


def _measure_calls(suite: Suite, row: Row,
                   calls: dict[str, Callable[[], object]]) -> None:
    """Per-call times of calls of microseconds: each sample is many calls."""
    samplers, counts = {}, {}
    for label, call in calls.items():
        call()
        counts[label] = calls_for(call, 0.002 if suite.quick else 0.02)
        samplers[label] = run_sampler(call, counts[label])
    budget = dataclasses.replace(suite.budget,
                                 min_repeats=max(6, suite.budget.min_repeats))
    timings = interleave(samplers, budget)
    for label, timing in timings.items():
        figure = _figure("us", timing, calls_per_sample=counts[label])
        if label == "kiln":
            row.kiln = figure
        else:
            row.peers[label] = figure


# --- Running a selection -----------------------------------------------------

def parse_selection(text: str | None, quick: bool
                    ) -> tuple[set[int], set[str]]:
    """`--rows` as (groups, model ids); None or "all" selects everything."""
    model_ids = {m.id for m in models(quick)}
    if not text or text == "all":
        return set(GROUPS.values()), set()
    groups, ids = set(), set()
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if item.isdigit() and int(item) in GROUPS.values():
            groups.add(int(item))
        elif item in GROUPS:
            groups.add(GROUPS[item])
        elif item in model_ids:
            ids.add(item)
        else:
            raise ValueError(
                f"--rows: unknown row '{item}' (expected 1-6, one of "
                f"{', '.join(GROUPS)}, or a model: "
                f"{', '.join(sorted(model_ids))})")
    return groups, ids


def run_selection(suite: Suite, groups: set[int], model_ids: set[str],
                  log: Callable[[str], None]) -> list[Row]:
    rows: list[Row] = []

    def guarded(what: str, make_rows: Callable[[], list[Row]],
                group: int) -> None:
        start = time.perf_counter()
        load = [round(x, 2) for x in os.getloadavg()]
        log(f"[bench] {what} ... (load average {load[0]})")
        try:
            made = make_rows()
        except Exception as e:  # noqa: BLE001 - one row must not end the run
            traceback.print_exc()
            made = [Row(group=group, id=what, name=what, unit="-",
                        kiln=Figure(), peers={},
                        error=f"{type(e).__name__}: {e}")]
        for row in made:
            row.load_average = load
        rows.extend(made)
        gc.collect()  # the row's programs and buffers, on both backends
        log(f"[bench] {what}: {time.perf_counter() - start:.1f} s")

    if 1 in groups:
        guarded("gelu", lambda: gelu_rows(suite), 1)
    if 2 in groups:
        guarded("dot", lambda: dot_rows(suite), 2)
    compile_rows: list[Row] = []
    for model in models(suite.quick):
        execute = model.group in groups or model.id in model_ids
        if not execute and 6 not in groups:
            continue

        def make(model=model, execute=execute):
            result = model_rows(suite, model, execute)
            result.compile_row.load_average = [round(x, 2)
                                               for x in os.getloadavg()]
            compile_rows.append(result.compile_row)
            return [result.run_row] if result.run_row else []

        guarded(model.id, make, model.group)
    if 5 in groups:
        guarded("dispatch", lambda: dispatch_rows(suite), 5)
    rows.extend(compile_rows)
    return sorted(rows, key=lambda r: r.group)
