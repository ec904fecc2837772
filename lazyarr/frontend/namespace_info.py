"""The array API's inspection namespace (`la.__array_namespace_info__()`)."""

from __future__ import annotations

from .. import dtypes
from ..backends import available_devices, transfer_manager
from .array import default_device

_KIND_GROUPS = {
    "bool": (dtypes.bool_,),
    "signed integer": dtypes.SIGNED_INTEGER,
    "unsigned integer": dtypes.UNSIGNED_INTEGER,
    "integral": dtypes.INTEGER,
    "real floating": dtypes.FLOATING,
    "complex floating": dtypes.COMPLEX,
    "numeric": dtypes.NUMERIC,
}


class NamespaceInfo:
    """Capabilities, devices and dtypes of this namespace, as the array API 2025.12 defines."""

    def capabilities(self) -> dict:
        return {
            "boolean indexing": True,       # evaluates the mask, then continues lazily
            "data-dependent shapes": True,  # nonzero/unique evaluate their input
            "max dimensions": 64,
        }

    def default_device(self) -> str:
        """The device of the default backend (`la.set_backend`), where new arrays go."""
        return default_device()

    def devices(self) -> tuple[str, ...]:
        """The devices usable here, a tuple (2025.12; a list before): "cpu", and "gpu" where
        CuPy finds a GPU (asking loads CuPy, once)."""
        return tuple(usable_devices())

    def default_dtypes(self, *, device=None) -> dict:
        _check_device(device)
        return {
            "real floating": dtypes.default_float,
            "complex floating": dtypes.default_complex,
            "integral": dtypes.default_int,
            "indexing": dtypes.int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The array API's dtypes (of `kind`): float16 works in lazyarr but is not one of them."""
        _check_device(device)
        standard = tuple(dtype for dtype in dtypes.ALL if dtype != dtypes.float16)
        if kind is None:
            selected = standard
        else:
            selected = tuple(d for d in standard if dtypes.isdtype(d, kind))
        return {str(dtype): dtype for dtype in selected}


def usable_devices() -> list[str]:
    """The known devices whose transfer manager loads (a device's module raises ImportError or
    RuntimeError when its package or hardware is missing)."""
    usable = []
    for device in available_devices():
        try:
            transfer_manager(device)
        except (ImportError, RuntimeError):
            continue
        usable.append(device)
    return usable


def _check_device(device):
    if device is None:
        return
    usable = usable_devices()
    if device not in usable:
        raise ValueError(f"unknown device {device!r}; available: {', '.join(map(repr, usable))}")


def __array_namespace_info__() -> NamespaceInfo:
    return NamespaceInfo()
