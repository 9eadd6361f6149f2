"""Kiln's PJRT plugin, packaged for Python frameworks.

The wheel carries `libpjrt_kiln.so` and, beside it, the shared libraries it
loads (oneDNN, Gloo and theirs; found through its RUNPATH $ORIGIN): it needs
only the system's C, C++ and OpenMP runtimes (libc, libstdc++, libgcc_s,
libgomp).
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
