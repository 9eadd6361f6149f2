"""XLA FFI handlers on Kiln: `jax.ffi.register_ffi_target(..., platform="kiln")`.

JAX keeps FFI registrations per platform in `jaxlib.xla_client` and hands
them to the custom-call handler registered for that platform (the ones made
earlier, and every later one). For `kiln` that handler is `_register_target`
below: it takes the handler's address out of the PyCapsule and passes it to
the plugin through PJRT's FFI extension (`PJRT_FFI_Register_Handler`),
found on the plugin's `PJRT_Api` table with ctypes. Types registered with
`jax.ffi.register_ffi_type(..., platform="kiln")` go through
`PJRT_FFI_TypeID_Register` the same way.

A program calling the target (`jax.ffi.ffi_call`) then runs the handler
inside Kiln's executable (src/compile/lower_ffi.cc).
"""

import ctypes
import functools
from typing import Any

_PLATFORM = "kiln"
_EXTENSION_TYPE_FFI = 5  # PJRT_Extension_Type_FFI


class _ExtensionBase(ctypes.Structure):
    pass


_ExtensionBase._fields_ = [
    ("struct_size", ctypes.c_size_t),
    ("type", ctypes.c_int),
    ("next", ctypes.POINTER(_ExtensionBase)),
]


class _ErrorDestroyArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p)]


class _ErrorMessageArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p),
                ("message", ctypes.c_void_p),
                ("message_size", ctypes.c_size_t)]


class _RegisterHandlerArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t),
                ("api_version", ctypes.c_int),
                ("handler", ctypes.c_void_p),
                ("platform_name", ctypes.c_char_p),
                ("platform_name_size", ctypes.c_size_t),
                ("traits", ctypes.c_int)]


class _TypeIdRegisterArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("extension_start", ctypes.c_void_p),
                ("type_name", ctypes.c_char_p),
                ("type_name_size", ctypes.c_size_t),
                ("type_id", ctypes.c_int64)]


class _FfiExtension(ctypes.Structure):
    _fields_ = [("base", _ExtensionBase),
                ("type_id_register", ctypes.c_void_p),
                ("user_data_add", ctypes.c_void_p),
                ("register_handler", ctypes.c_void_p)]


_ENTRY = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_VOID_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# Offsets in PJRT_Api: struct_size, extension_start, pjrt_api_version (24
# bytes), then the slots PJRT_Error_Destroy and PJRT_Error_Message.
_EXTENSION_START_OFFSET = 8
_ERROR_DESTROY_OFFSET = 40
_ERROR_MESSAGE_OFFSET = 48


def _capsule_pointer(capsule: Any) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = get_pointer(capsule, get_name(capsule))
    if not pointer:
        raise ValueError(f"{capsule!r} holds no pointer")
    return pointer


class _PluginApi:
    """The plugin's PJRT_Api and its FFI extension, read with ctypes."""

    def __init__(self, c_api: Any):
        self._api = _capsule_pointer(c_api)
        start = ctypes.c_void_p.from_address(
            self._api + _EXTENSION_START_OFFSET).value
        self.extension = None
        node = ctypes.cast(start, ctypes.POINTER(_ExtensionBase)) if start else None
        while node:
            if node.contents.type == _EXTENSION_TYPE_FFI:
                self.extension = ctypes.cast(
                    node, ctypes.POINTER(_FfiExtension)).contents
                break
            node = node.contents.next
        if self.extension is None:
            raise RuntimeError("Kiln's plugin has no FFI extension")

    def _slot(self, offset: int, kind):
        return kind(ctypes.c_void_p.from_address(self._api + offset).value)

    def check(self, error: int, what: str) -> None:
        """Raises the PJRT error `error` (destroying it); nothing if null."""
        if not error:
            return
        message_args = _ErrorMessageArgs(ctypes.sizeof(_ErrorMessageArgs),
                                         None, error, None, 0)
        self._slot(_ERROR_MESSAGE_OFFSET, _VOID_ENTRY)(
            ctypes.addressof(message_args))
        message = ctypes.string_at(message_args.message,
                                   message_args.message_size).decode(
                                       "utf-8", "replace")
        destroy_args = _ErrorDestroyArgs(ctypes.sizeof(_ErrorDestroyArgs),
                                         None, error)
        self._slot(_ERROR_DESTROY_OFFSET, _VOID_ENTRY)(
            ctypes.addressof(destroy_args))
        raise RuntimeError(f"{what}: {message}")

    def register_handler(self, name: str, handler: int, platform: str,
                         api_version: int, traits: int) -> None:
        encoded_name = name.encode()
        encoded_platform = platform.encode()
        args = _RegisterHandlerArgs(
            ctypes.sizeof(_RegisterHandlerArgs), encoded_name,
            len(encoded_name), api_version, handler, encoded_platform,
            len(encoded_platform), traits)
        entry = _ENTRY(self.extension.register_handler)
        self.check(entry(ctypes.addressof(args)),
                   f"registering FFI target {name!r} with Kiln")

    def register_type(self, name: str, type_id: int) -> int:
        encoded = name.encode()
        args = _TypeIdRegisterArgs(ctypes.sizeof(_TypeIdRegisterArgs), None,
                                   encoded, len(encoded), type_id)
        entry = _ENTRY(self.extension.type_id_register)
        self.check(entry(ctypes.addressof(args)),
                   f"registering FFI type {name!r} with Kiln")
        return args.type_id


def _register_target(api: _PluginApi, name: str, fn: Any, platform: str,
                     api_version: int = 1, traits: Any = 0) -> None:
    if isinstance(fn, dict):
        stages = set(fn) - {"execute"}
        if stages:
            # PJRT_FFI_Register_Handler takes one (execute) handler.
            raise NotImplementedError(
                f"FFI target {name!r}: Kiln registers the execute stage only "
                f"through PJRT; got stages {sorted(fn)}")
        fn = fn["execute"]
    api.register_handler(name, _capsule_pointer(fn), platform, api_version,
                         int(traits))


def _register_type(api: _PluginApi, type_name: str, registration: Any) -> None:
    capsule = registration["type_id"] if isinstance(registration, dict) \
        else registration
    pointer = _capsule_pointer(capsule)
    type_id = ctypes.c_int64.from_address(pointer)
    type_id.value = api.register_type(type_name, type_id.value)


def register(c_api: Any) -> None:
    """Routes JAX's FFI registrations for `kiln` to the plugin `c_api`."""
    if c_api is None:
        return
    from jax._src.lib import xla_client

    api = _PluginApi(c_api)
    xla_client.register_custom_call_handler(
        _PLATFORM, functools.partial(_register_target, api))
    xla_client.register_custom_type_handler(
        _PLATFORM, functools.partial(_register_type, api))
