"""The Backend and TransferManager protocols, and the registries of both by name.

A backend sees a Module and buffers, never a lazy array. Backends are imported on first
use, so optional dependencies (CuPy for the GPU) load only when asked for.

A device is where buffers live ("cpu": NumPy arrays; "gpu": CuPy arrays). Each device has a
TransferManager (XLA's TransferManager): it recognises its buffers and moves them to and from
the host. A backend names the device its executables take buffers on, so a third device
plugs in with a transfer manager and a backend, and nothing above this layer changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..hlo import Module


class Executable(Protocol):
    def run(self, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run on one buffer per entry parameter; return one buffer per output."""


class Backend(Protocol):
    name: str
    device: str  # where the buffers its executables read and write live

    def compile(self, module: Module, pipeline_dump=None) -> Executable:
        """Turn an HLO module into something runnable; `pipeline_dump(pass_name, module)` is
        called after each pass when --dump_passes asks for it."""


class TransferManager(Protocol):
    """Moves buffers between the host and one device."""

    device: str

    def owns(self, buffer) -> bool:
        """Whether `buffer` is one of this device's buffers."""

    def to_host(self, buffer) -> np.ndarray:
        """A NumPy copy of a device buffer (waits for pending work on it)."""

    def from_host(self, array: np.ndarray):
        """A device buffer holding a copy of `array`."""

    def copy(self, buffer):
        """A device buffer holding a copy of `buffer` (device to device)."""

    # Optional: `contiguous_view(buffer, key)`, the device buffer `buffer[key]` (a basic key)
    # sharing `buffer`'s memory when it is C-contiguous, else None (see `contiguous_view` below).


class HostTransferManager:
    """The host itself: buffers are C-contiguous NumPy arrays."""

    device = "cpu"

    def owns(self, buffer) -> bool:
        return isinstance(buffer, np.ndarray)

    def to_host(self, buffer) -> np.ndarray:
        return buffer

    def from_host(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True, order="C")

    def copy(self, buffer) -> np.ndarray:
        return np.array(buffer, copy=True, order="C")


# name -> module path defining `BACKEND`
_BACKEND_MODULES = {
    "interpreter": "lazyarr.backends.interpreter",
    "cpu": "lazyarr.backends.cpu",
    "gpu": "lazyarr.backends.gpu",
}
# device -> (module path defining `TRANSFER_MANAGER`, top-level package of its buffer type)
_DEVICE_MODULES = {
    "gpu": ("lazyarr.backends.gpu", "cupy"),
}
_TRANSFERS: dict[str, TransferManager] = {"cpu": HostTransferManager()}
_LOADED: dict[str, Backend] = {}


def available_backends() -> tuple[str, ...]:
    return tuple(_BACKEND_MODULES)


def get_backend(name: str) -> Backend:
    """The backend called `name`, importing its module on first use."""
    if name not in _LOADED:
        if name not in _BACKEND_MODULES:
            raise ValueError(
                f"unknown backend {name!r}; available: {', '.join(available_backends())}"
            )
        _LOADED[name] = importlib.import_module(_BACKEND_MODULES[name]).BACKEND
    return _LOADED[name]


def loaded_backends() -> tuple[Backend, ...]:
    """The backends imported so far (no import happens here)."""
    return tuple(_LOADED.values())


def available_devices() -> tuple[str, ...]:
    """Devices lazyarr knows: built in, and registered with `register_device`."""
    return tuple(dict.fromkeys(("cpu", *_DEVICE_MODULES, *_TRANSFERS)))


def host_only() -> bool:
    """Whether every buffer in the process is a host array: no other device's transfer manager
    has been loaded or registered (nothing could have made a device buffer)."""
    return len(_TRANSFERS) == 1


def transfer_manager(device: str) -> TransferManager:
    """The transfer manager of `device`, importing its module on first use (which raises a
    clear error when the device's optional dependency or hardware is missing)."""
    if device not in _TRANSFERS:
        if device not in _DEVICE_MODULES:
            raise ValueError(f"unknown device {device!r}; available: {', '.join(available_devices())}")
        _TRANSFERS[device] = importlib.import_module(_DEVICE_MODULES[device][0]).TRANSFER_MANAGER
    return _TRANSFERS[device]


def register_device(device: str, manager: TransferManager) -> None:
    """Add a device whose transfer manager is already built (a plug-in, or a test's device)."""
    _TRANSFERS[device] = manager


def register_backend(name: str, backend: Backend) -> None:
    """Add a backend that is already built (a plug-in, or a test's backend)."""
    _BACKEND_MODULES.setdefault(name, "")
    _LOADED[name] = backend


def device_of(buffer) -> str:
    """The device holding `buffer`. A buffer type from a package whose device module is not
    loaded yet (a CuPy array before any GPU work) loads that module first."""
    if isinstance(buffer, np.ndarray):
        return "cpu"
    for device, manager in _TRANSFERS.items():
        if manager.owns(buffer):
            return device
    package = type(buffer).__module__.partition(".")[0]
    for device, (_, buffer_package) in _DEVICE_MODULES.items():
        if package == buffer_package and transfer_manager(device).owns(buffer):
            return device
    raise TypeError(f"no lazyarr device holds buffers of type {type(buffer).__module__}.{type(buffer).__name__}")


def contiguous_view(buffer, key):
    """`buffer[key]` of a device buffer as a device buffer sharing its memory, where the device
    makes such views and this one is C-contiguous (`rows[i * b:(i + 1) * b]`), else None. Its
    offset is then data, as a host view's is, not a slice compiled into a kernel per offset."""
    view = getattr(transfer_manager(device_of(buffer)), "contiguous_view", None)
    return None if view is None else view(buffer, key)


def to_device(buffer, device: str):
    """`buffer` on `device`: itself when already there, else a copy through the host (or a
    device-to-device copy within one device)."""
    source = device_of(buffer)
    if source == device:
        return buffer
    host = transfer_manager(source).to_host(buffer)
    return transfer_manager(device).from_host(host)
