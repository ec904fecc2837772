"""NumPy's binary files on lazy arrays: save, savez, savez_compressed and load (.npy, .npz).

Saving evaluates (one module for all the arrays of a savez) and hands the values to NumPy's own
writers, so a file is NumPy's byte for byte: its header records the dtype, the shape and the
memory order NumPy would record for the same array (Fortran order for a view NumPy lays out in
Fortran order, such as `a.T` of a 2-d `a`; array_utilities.contiguity).

Loading reads with np.load and copies each array into a lazy array (the same dtype and shape; a
non-native byte order becomes native, the only one lazyarr has). A dtype lazyarr lacks (object,
strings, structured, datetime, longdouble) raises TypeError naming it: np.load keeps those as
NumPy arrays. Other pickled objects (allow_pickle=True) come back as NumPy gives them. An .npz
archive comes as an `NpzFile`: a read-only mapping over NumPy's archive that reads a member
when it is asked for (`.files`, `archive["x"]`, `archive.f.x`, `close()`, `with`).

mmap_mode: a lazy array owns an immutable copy of its value, so it cannot stay mapped. 'r' and
'c' read the file through NumPy's map and copy the values out: later changes to the file do
not show, and writes to the array never reach the file (as 'c' promises anyway). 'r+' and
'w+', whose point is writing the file through the array, raise NotImplementedError before the
file is opened; np.load gives a NumPy memmap for that.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import dtypes
from .array import Array, evaluate_arrays
from .array_utilities import isfortran
from .core import from_numpy
from .interop import to_numpy

__all__ = ["load", "save", "savez", "savez_compressed"]

_WRITING_MAPS = ("r+", "w+", "readwrite", "write")  # np.memmap's names of the writing modes


def host_values(value):
    """`value` as NumPy's writers should see it: a lazy array's values (in Fortran order where
    NumPy's array would be: the order np.save records), lazy arrays inside lists and tuples
    evaluated; anything else unchanged (NumPy converts it as it would)."""
    if isinstance(value, Array):
        values = value.numpy()
        return np.asfortranarray(values) if values.ndim > 1 and isfortran(value) else values
    return to_numpy(value)


def loaded(value, where: str):
    """A value NumPy read, as lazyarr returns it: arrays (also in lists and tuples) become lazy
    arrays with the same dtype and shape (native byte order); other objects stay as they are."""
    if isinstance(value, (list, tuple)):
        return type(value)(loaded(item, where) for item in value)
    if not isinstance(value, np.ndarray):
        return value
    dtype = value.dtype
    if dtype.fields is None and not dtype.isnative:
        value = value.astype(dtype.newbyteorder("="))  # lazyarr's dtypes are native
    if value.dtype not in dtypes.SUPPORTED:
        advice = (f"read it with np.{where} and convert each field: la.asarray(table[name])" if dtype.fields
                  else f"np.{where} returns such data as a NumPy array")
        raise TypeError(
            f"{where}: the data have dtype {dtype}, which lazyarr arrays do not support (they hold "
            + ", ".join(str(supported) for supported in dtypes.ALL) + f"); {advice}"
        )
    return from_numpy(value, where=where)


def save(file, arr, allow_pickle=True) -> None:
    """Write `arr` to a .npy file (NumPy's np.save: a path gets '.npy' appended, or an open
    binary file). Evaluates a lazy array; the file is the one NumPy writes for the same values.

    >>> import io, lazyarr as la
    >>> buffer = io.BytesIO(); la.save(buffer, la.arange(3) * 2); _ = buffer.seek(0)
    >>> la.load(buffer).tolist()
    [0, 2, 4]
    """
    np.save(file, host_values(arr), allow_pickle=allow_pickle)


def _evaluated(values):
    """`values` for NumPy's writers, every lazy array among them evaluated in one module."""
    evaluate_arrays([value for value in values if isinstance(value, Array)])
    return [host_values(value) for value in values]


def savez(file, *args, allow_pickle=True, **kwds) -> None:
    """Write several arrays to an uncompressed .npz archive (NumPy's np.savez: positional ones
    as 'arr_0', 'arr_1', ..., keyword ones under their names). Evaluates all lazy arrays in one
    module; each member is the .npy file NumPy writes for the same values.

    >>> import io, lazyarr as la
    >>> buffer = io.BytesIO(); la.savez(buffer, la.zeros(2), y=la.ones(1)); _ = buffer.seek(0)
    >>> sorted(la.load(buffer).files)
    ['arr_0', 'y']
    """
    values = _evaluated([*args, *kwds.values()])
    np.savez(file, *values[:len(args)], allow_pickle=allow_pickle, **dict(zip(kwds, values[len(args):])))


def savez_compressed(file, *args, allow_pickle=True, **kwds) -> None:
    """savez with each member deflated (NumPy's np.savez_compressed).

    >>> import io, lazyarr as la
    >>> buffer = io.BytesIO(); la.savez_compressed(buffer, x=la.zeros(1000)); _ = buffer.seek(0)
    >>> la.load(buffer)["x"].shape
    (1000,)
    """
    values = _evaluated([*args, *kwds.values()])
    np.savez_compressed(file, *values[:len(args)], allow_pickle=allow_pickle, **dict(zip(kwds, values[len(args):])))


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
         max_header_size=10_000):
    """Read a .npy file as a lazy array, an .npz archive as an `NpzFile` (members read as lazy
    arrays when asked for), or a pickle (allow_pickle=True) as NumPy does. The arguments are
    np.load's; `mmap_mode` 'r' and 'c' copy the mapped values (a lazy array cannot stay mapped),
    'r+' and 'w+' raise NotImplementedError. Unsupported dtypes raise TypeError.

    >>> import io, lazyarr as la
    >>> buffer = io.BytesIO(); la.save(buffer, la.asarray([1.5, 2.5], dtype="float32")); _ = buffer.seek(0)
    >>> la.load(buffer).dtype
    dtype('float32')
    """
    if mmap_mode in _WRITING_MAPS:
        raise NotImplementedError(
            f"load: mmap_mode={mmap_mode!r} maps the file for writing through the array, but a lazy "
            "array holds a copy of its value and cannot stay mapped; use mmap_mode='r' or 'c' (values "
            "copied), np.load for a NumPy memmap, or la.save to write the file"
        )
    result = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle, fix_imports=fix_imports,
                     encoding=encoding, max_header_size=max_header_size)
    if isinstance(result, np.lib.npyio.NpzFile):
        return NpzFile(result)
    return loaded(result, "load")


class _Members:
    """`archive.f.name`: attribute access to an archive's members, as NumPy's NpzFile.f."""

    __slots__ = ("_archive",)

    def __init__(self, archive: NpzFile):
        self._archive = archive

    def __getattr__(self, name: str):
        try:
            return self._archive[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self):
        return list(self._archive.files)


class NpzFile(Mapping):
    """An .npz archive opened by `la.load`: a mapping from member names to lazy arrays.

    It holds NumPy's own archive and reads a member each time it is asked for (as NumPy's
    NpzFile, nothing is cached): `archive["x"]` (also "x.npy") is a new lazy array with the
    member's dtype and shape, a member that is not an .npy file comes as its bytes, as in
    NumPy. `files` lists the names, `f.x` reads `x`; `close()`, or a `with` block, closes the
    file, after which reading members raises as NumPy's does.
    """

    def __init__(self, archive: np.lib.npyio.NpzFile):
        self._archive = archive
        self.f = _Members(self)

    @property
    def files(self) -> list[str]:
        """The member names, without '.npy', in archive order."""
        return self._archive.files

    def __getitem__(self, key):
        if self._archive.zip is None:
            raise ValueError("load: the .npz archive is closed (read its members inside the `with` block)")
        return loaded(self._archive[key], "load")

    def __contains__(self, key) -> bool:
        return key in self._archive

    def __iter__(self):
        return iter(self._archive.files)

    def __len__(self) -> int:
        return len(self._archive.files)

    def close(self) -> None:
        """Close the archive (and its file, where load opened it)."""
        self._archive.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._archive)
