"""Kiln as a PyTorch/XLA device: `PJRT_DEVICE=KILN` after `pip install kiln-pjrt`.

torch_xla imports every entry point of the group `torch_xla.plugins` when it
is imported, registers it under the upper-cased entry name (`KILN`) and, when
`PJRT_DEVICE` names it, loads `library_path()` as its PJRT plugin. This module
is imported only then, so `kiln_pjrt` itself never needs torch.
"""

from torch_xla.experimental import plugins

import kiln_pjrt


class KilnPlugin(plugins.DevicePlugin):
    """Kiln's PJRT plugin: one process, the host's CPU devices."""

    def library_path(self) -> str:
        return kiln_pjrt.library_path()

    def configure_single_process(self):
        # One process is all Kiln's client needs: nothing to configure.
        pass

    def physical_chip_count(self) -> int:
        return 1
