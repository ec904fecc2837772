"""Backends compile a Module into an Executable; found by name and imported lazily.
Devices hold buffers; their transfer managers move them to and from the host."""

from .base import (
    Backend,
    Executable,
    TransferManager,
    available_backends,
    available_devices,
    contiguous_view,
    device_of,
    get_backend,
    host_only,
    loaded_backends,
    register_backend,
    register_device,
    to_device,
    transfer_manager,
)

__all__ = [
    "Backend", "Executable", "TransferManager", "available_backends", "available_devices", "contiguous_view",
    "device_of",
    "get_backend", "host_only", "loaded_backends", "register_backend", "register_device", "to_device",
    "transfer_manager",
]
