"""One torch_xla process for Kiln's PyTorch/XLA tests (test_torch.py).

torch_xla holds one PJRT client per process and picks it from PJRT_DEVICE
when it first touches a device, so every backend runs in a process of its
own: this script, started with PJRT_DEVICE set, runs one job and prints one
JSON line. torch CPU eager results (the reference) are computed in the same
process before the device is touched.

  python torch_child.py train MODEL STEPS   the training loop on digits
  python torch_child.py ops                 single-op checks
  python torch_child.py bad                 a program Kiln refuses
"""

import json
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64


def digits():
    from sklearn.datasets import load_digits
    data = load_digits()
    x = torch.tensor(data.data, dtype=torch.float32) / 16.0
    y = torch.tensor(data.target, dtype=torch.long)
    return x, y


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 8, 8)
        x = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(),
                                 nn.Linear(128, 64), nn.Tanh(),
                                 nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


def run_steps(model, x, y, steps, device, sync):
    """Plain SGD on batches of digits: losses, ms per step, metric counts.

    (Momentum would trace a second graph at step 2, when its buffers appear.)
    """
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses, times, compiles, executes = [], [], [], []
    for step in range(steps):
        start = time.perf_counter()
        lo = (step * BATCH) % (len(x) - BATCH)
        xb = x[lo:lo + BATCH].to(device)
        yb = y[lo:lo + BATCH].to(device)
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        sync()
        losses.append(float(loss.item()))
        times.append((time.perf_counter() - start) * 1000.0)
        if device != "cpu":
            import torch_xla.debug.metrics as met
            compile_data = met.metric_data("CompileTime")
            execute_data = met.metric_data("ExecuteTime")
            compiles.append(compile_data[0] if compile_data else 0)
            executes.append(execute_data[0] if execute_data else 0)
    return losses, times, compiles, executes


def train(model_name, steps):
    # The device first: autograd sizes its per-device queues at the first
    # backward, which must already see the XLA device.
    import torch_xla
    import torch_xla.runtime as xr
    device = torch_xla.device()
    torch.manual_seed(0)
    x, y = digits()
    model_class = {"cnn": CNN, "mlp": MLP}[model_name]
    reference_model = model_class()
    state = {k: v.clone() for k, v in reference_model.state_dict().items()}
    eager, _, _, _ = run_steps(reference_model, x, y, steps, "cpu", lambda: None)
    model = model_class()
    model.load_state_dict(state)
    model.to(device)
    losses, times, compiles, executes = run_steps(model, x, y, steps, device,
                                                  torch_xla.sync)
    import torch_xla.debug.metrics as met
    counters = {name: met.counter_value(name)
                for name in ("StableHloCompile", "CachedCompile")}
    params_on_device = all(p.device.type == "xla" for p in model.parameters())
    return {"device": xr.device_type(), "losses": losses, "eager": eager,
            "ms": times, "compiles": compiles, "executes": executes,
            "counters": counters, "params_on_device": params_on_device}


def single_ops():
    """Each op on the device and in torch CPU eager: the largest difference."""
    import torch_xla
    device = torch_xla.device()
    torch.manual_seed(1)
    a = torch.randn(4, 6)
    b = torch.randn(4, 6)
    m = torch.randn(6, 5)
    img = torch.randn(2, 3, 8, 8)
    kernel = torch.randn(4, 3, 3, 3)
    idx = torch.tensor([3, 0, 2])
    seq = torch.randn(3, 4, 5)
    ones5 = torch.ones(5)
    gather_idx = torch.tensor([[0, 5]] * 4)
    zeros = torch.zeros(4, 6)
    scatter_idx = torch.tensor([[0, 1, 0, 2, 5, 5]] * 4)
    labels = torch.tensor([0, 5, 2, 1])

    def in_place(t, u):
        t = t.clone()
        t.add_(u).mul_(2.0).clamp_(-1.0, 1.0)
        return t

    def view_write(t):
        t = t.clone()
        t.view(2, 12)[1, 3:7] = 5.0
        t.t()[2].zero_()
        return t

    def index_put(t):
        t = t.clone()
        t[torch.tensor([0, 2]), torch.tensor([1, 4])] = -3.0
        return t

    ops = {
        "add": lambda: a + b,
        "sub_mul_div": lambda: (a - b) * a / (b.abs() + 1),
        "exp_log": lambda: torch.log(torch.exp(a) + 1.0),
        "tanh_sigmoid": lambda: torch.tanh(a) + torch.sigmoid(b),
        "relu_gelu": lambda: F.relu(a) + F.gelu(b),
        "pow_sqrt_rsqrt": lambda: a.abs().pow(1.5) + b.abs().sqrt()
        + (b.abs() + 1).rsqrt(),
        "erf": lambda: torch.erf(a),
        "where_compare": lambda: torch.where(a > b, a, b * 2),
        "matmul": lambda: a @ m,
        "bmm": lambda: torch.bmm(seq, seq.transpose(1, 2)),
        "linear": lambda: F.linear(a, m.t(), ones5),
        "conv2d": lambda: F.conv2d(img, kernel, padding=1),
        "conv2d_stride": lambda: F.conv2d(img, kernel, stride=2),
        "max_pool2d": lambda: F.max_pool2d(img, 2),
        "avg_pool2d": lambda: F.avg_pool2d(img, 2),
        "sum_dim": lambda: a.sum(dim=1),
        "mean_all": lambda: a.mean(),
        "max_dim": lambda: a.max(dim=0).values,
        "argmax": lambda: a.argmax(dim=1),
        "softmax": lambda: F.softmax(a, dim=1),
        "log_softmax": lambda: F.log_softmax(a, dim=0),
        "cumsum": lambda: torch.cumsum(a, dim=1),
        "layer_norm": lambda: F.layer_norm(a, (6,)),
        "index_select": lambda: a.index_select(1, idx),
        "gather": lambda: torch.gather(a, 1, gather_idx),
        "advanced_index": lambda: a[idx],
        "index_put": lambda: index_put(a),
        "scatter_add": lambda: zeros.scatter_add(1, scatter_idx, b),
        "embedding": lambda: F.embedding(idx, m),
        "slice_step": lambda: a[1:3, ::2],
        "in_place": lambda: in_place(a, b),
        "views": lambda: a.t().reshape(3, 8).permute(1, 0).contiguous(),
        "view_write": lambda: view_write(a),
        "cat_stack": lambda: torch.cat([a, torch.stack([b[0], b[1]])], dim=0),
        "sort": lambda: torch.sort(a, dim=1).values,
        "topk": lambda: torch.topk(a, 2, dim=1).values,
        "flip": lambda: torch.flip(a, [0, 1]),
        "pad": lambda: F.pad(a, (1, 2, 0, 1), value=0.5),
        "cross_entropy": lambda: F.cross_entropy(a, labels),
    }
    results = {}
    for name, fn in ops.items():
        expected = fn()
        # The same function on device copies of every input.
        try:
            closure = fn.__code__.co_freevars
            cells = [c.cell_contents for c in fn.__closure__ or ()]
            moved = {}
            for var, value in zip(closure, cells):
                moved[var] = (value.to(device) if isinstance(value, torch.Tensor)
                              else value)
            actual = _rebind(fn, moved)()
            torch_xla.sync()
            got = actual.cpu()
            if got.dtype.is_floating_point:
                diff = float((got - expected).abs().max()) if got.numel() else 0.0
            else:
                diff = float((got != expected).sum())
            results[name] = {"ok": diff <= 1e-4, "diff": diff}
        except Exception as error:  # a failed op is a result, not a crash
            results[name] = {"ok": False, "error": str(error)[:400]}
    return {"ops": results}


def _rebind(fn, values):
    """`fn` with its closure's tensors replaced (for device copies)."""
    import types
    cells = tuple(types.CellType(values[name]) if name in values else cell
                  for name, cell in zip(fn.__code__.co_freevars,
                                        fn.__closure__ or ()))
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                              fn.__defaults__, cells)


def bad():
    """A custom call Kiln does not know: compile fails, Python sees why."""
    import torch_xla
    device = torch_xla.device()
    x = torch.ones(4, device=device)
    try:
        y = torch_xla._XLAC._xla_custom_call(
            [x], "kiln_test_no_such_target", [[4]], [torch.float32], False,
            "", 1, {})
        torch_xla.sync()
        y[0].cpu()
    except Exception as error:
        return {"raised": type(error).__name__, "message": str(error)[:2000]}
    return {"raised": None}


def main():
    job = sys.argv[1]
    if job == "train":
        result = train(sys.argv[2], int(sys.argv[3]))
    elif job == "ops":
        result = single_ops()
    elif job == "bad":
        result = bad()
    else:
        raise SystemExit(f"unknown job {job}")
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
