"""Kiln's PJRT plugin, packaged for Python frameworks.

The wheel carries `libpjrt_kiln.so`, which needs only the system's C runtime.
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
