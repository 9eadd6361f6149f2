"""The PyTorch peers of the suite's models, where the program exists there.

PyTorch is optional (`scripts/bench.sh --with-torch` installs it): without
it, or with `--no-torch`, these rows read "n/a". Each model is written here
in plain `torch.nn` to match its JAX twin (ResNet-50 v1.5 features, the MLP
and CNN training steps, BERT's encoder layer), runs eagerly in float32 with
PyTorch's own CPU kernels and threads (`torch.get_num_threads()`, recorded
with the results), inference under `torch.inference_mode()`.
"""

from typing import Callable


def available() -> str | None:
    """PyTorch's version, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__


def threads() -> int:
    import torch
    return torch.get_num_threads()


def _resnet50(torch, nn):
    class Bottleneck(nn.Module):
        def __init__(self, channels, width, stride, shortcut):
            super().__init__()
            out = width * 4
            self.body = nn.Sequential(
                nn.Conv2d(channels, width, 1, bias=False),
                nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, width, 3, stride, 1, bias=False),
                nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out))
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels, out, 1, stride, bias=False),
                nn.BatchNorm2d(out)) if shortcut else nn.Identity()

        def forward(self, x):
            return torch.relu(self.body(x) + self.shortcut(x))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
              nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    channels = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2),
                                  (512, 3, 2)):
        for block in range(blocks):
            layers.append(Bottleneck(channels, width,
                                     stride if block == 0 else 1, block == 0))
            channels = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers)


def _inference(model, x) -> Callable[[], object]:
    import torch
    model.eval()

    def run():
        with torch.inference_mode():
            return model(x)

    return run


def _training_step(model, x, labels) -> Callable[[], object]:
    import torch
    import torch.nn.functional as F
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def run():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    return run


def resnet50(batch: int) -> Callable[[], object]:
    import torch
    from torch import nn
    torch.manual_seed(0)
    return _inference(_resnet50(torch, nn),
                      torch.randn(batch, 3, 224, 224))


def mlp_train(batch: int = 128,
              sizes: tuple[int, ...] = (784, 512, 512, 10)
              ) -> Callable[[], object]:
    import torch
    from torch import nn
    torch.manual_seed(0)
    layers = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(m, n), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    return _training_step(model, torch.randn(batch, sizes[0]),
                          torch.randint(0, sizes[-1], (batch,)))


def cnn_train(batch: int = 64) -> Callable[[], object]:
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
        nn.Conv2d(64, 64, 3, 2, 1), nn.ReLU(),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 10))
    return _training_step(model, torch.randn(batch, 1, 28, 28),
                          torch.randint(0, 10, (batch,)))


def bert_layer(batch: int = 8, sequence: int = 128, hidden: int = 768,
               heads: int = 12, ffn: int = 3072) -> Callable[[], object]:
    import torch
    from torch import nn
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        hidden, heads, ffn, dropout=0.0, activation="gelu",
        layer_norm_eps=1e-12, batch_first=True, norm_first=False)
    return _inference(layer, torch.randn(batch, sequence, hidden))
