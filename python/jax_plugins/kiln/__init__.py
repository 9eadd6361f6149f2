"""Registers Kiln with JAX as the platform `kiln`.

JAX imports every `jax_plugins.*` module (and every `jax_plugins` entry point)
when it first looks for backends, and calls `initialize()`. Select Kiln with
`JAX_PLATFORMS=kiln` (or `kiln,cpu` to keep JAX's CPU backend beside it).

Client create options, merged in this order (later wins):
  1. JAX's `jax_num_cpu_devices` (the number of CPU devices, as for `cpu`);
  2. `KILN_CPU_DEVICE_COUNT` in the environment;
  3. `set_options(...)`, called before JAX creates its backends;
  4. JAX's own `jax_pjrt_client_create_options` / `JAX_PJRT_CLIENT_CREATE_OPTIONS`
     ("cpu_device_count:8"; the plugin accepts integers written as strings).
"""

import os
from typing import Any

import kiln_pjrt

_options: dict[str, Any] = {}


def set_options(**options: Any) -> None:
    """Sets client create options, e.g. `set_options(cpu_device_count=8)`.

    Takes effect when JAX creates the Kiln client, so call it before the
    first `jax.devices()` or computation.
    """
    _options.update(options)


def _client_options() -> dict[str, Any]:
    from . import callbacks

    # Where Kiln calls back for jax.pure_callback, io_callback, debug.print.
    options: dict[str, Any] = {
        "kiln_host_callback_trampoline": callbacks.trampoline_address()}
    # Kiln's devices are CPU devices: JAX's own knob for their number
    # (jax_num_cpu_devices, what jax.config and JAX's tests set) counts too.
    from jax._src import xla_bridge

    if xla_bridge.num_cpu_devices.value > 0:
        options["cpu_device_count"] = xla_bridge.num_cpu_devices.value
    count = os.environ.get("KILN_CPU_DEVICE_COUNT")
    if count:
        options["cpu_device_count"] = int(count)
    options.update(_options)
    return options


def initialize() -> None:
    from jax._src import xla_bridge

    library = kiln_pjrt.library_path()
    if not os.path.isfile(library):
        # JAX logs this and goes on without the platform.
        raise FileNotFoundError(
            f"Kiln's plugin library is not at {library} (a source checkout of "
            "kiln_pjrt has none: pip install . from the checkout, or set "
            "KILN_PLUGIN_LIBRARY)")
    c_api = xla_bridge.register_plugin(
        kiln_pjrt.PLATFORM_NAME,
        library_path=library,
        options=_client_options,
    )
    from . import callbacks, ffi, lowerings

    # jax.ffi.register_ffi_target(..., platform="kiln") reaches the plugin.
    ffi.register(c_api)
    lowerings.register()
    if xla_bridge.is_known_platform(kiln_pjrt.PLATFORM_NAME):
        callbacks.register()
