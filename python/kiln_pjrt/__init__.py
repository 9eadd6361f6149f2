"""Kiln's PJRT plugin, packaged for Python frameworks.

The wheel carries `libpjrt_kiln.so`, OpenBLAS beside it, and in
`kiln_pjrt.libs/` the other shared libraries it loads (oneDNN, Gloo, the
OpenMP runtime and theirs, grafted by auditwheel): it needs only what a
manylinux_2_35 system has (glibc, libstdc++, libgcc_s).
`library_path()` says where it is; `jax_plugins.kiln` registers it with JAX.
"""

import os

__all__ = ["library_path", "PLATFORM_NAME"]

PLATFORM_NAME = "kiln"


def library_path() -> str:
    """Absolute path of the plugin library (KILN_PLUGIN_LIBRARY overrides it)."""
    override = os.environ.get("KILN_PLUGIN_LIBRARY")
    if override:
        return os.path.abspath(override)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "libpjrt_kiln.so")
