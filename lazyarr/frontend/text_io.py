"""NumPy's text files and raw buffers on lazy arrays: savetxt, loadtxt, genfromtxt, fromregex,
fromfile, frombuffer, fromstring.

Each is NumPy's own function over the same arguments, so parsing, formats and errors are
NumPy's: savetxt evaluates and writes what np.savetxt writes for the same values; the readers
return lazy arrays of the dtype and shape NumPy's result has (file_io.loaded: a copy, native
byte order; a dtype lazyarr lacks raises TypeError naming it). Consequences of the copy:
frombuffer's result does not follow later changes to the buffer (NumPy's is a view of it),
and a lazy array given as the buffer gives its values' bytes (as `tobytes()`) where NumPy's
array would be C-contiguous, and NumPy's ValueError where not (`x.T`).

Structured results (a structured dtype, genfromtxt's names=True, and fromregex, whose dtype
NumPy requires to be structured) raise TypeError: lazyarr has no structured arrays; read with
NumPy and convert the fields (`la.asarray(table["x"])`). loadtxt's unpack=True with a
structured dtype gives one lazy array per field, as NumPy's list. genfromtxt's usemask=True
raises NotImplementedError: lazyarr has no masked arrays. `like=` is accepted (an array or
None) and does not change the result: it is a lazy array either way.
"""

from __future__ import annotations

import numpy as np

from .array import Array
from .array_utilities import check_like, contiguity
from .file_io import host_values, loaded

__all__ = ["frombuffer", "fromfile", "fromregex", "fromstring", "genfromtxt", "loadtxt", "savetxt"]


def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="", comments="# ",  # noqa: N803
            encoding=None) -> None:
    """Write a 1-d or 2-d array as text (np.savetxt's arguments and output). Evaluates.

    >>> import io, lazyarr as la
    >>> text = io.StringIO(); la.savetxt(text, la.arange(3) / 2, fmt="%.2f"); text.getvalue()
    '0.00\\n0.50\\n1.00\\n'
    """
    np.savetxt(fname, host_values(X), fmt=fmt, delimiter=delimiter, newline=newline, header=header,
               footer=footer, comments=comments, encoding=encoding)


def loadtxt(fname, dtype=float, comments="#", delimiter=None, converters=None, skiprows=0, usecols=None,
            unpack=False, ndmin=0, encoding=None, max_rows=None, *, quotechar=None, like=None) -> Array:
    """Read a text table as a lazy array (np.loadtxt's arguments, parsing and dtype).

    >>> import io, lazyarr as la
    >>> la.loadtxt(io.StringIO("1 2\\n3 4"), dtype="int32").tolist()
    [[1, 2], [3, 4]]
    """
    check_like(like, "loadtxt")
    values = np.loadtxt(fname, dtype=dtype, comments=comments, delimiter=delimiter, converters=converters,
                        skiprows=skiprows, usecols=usecols, unpack=unpack, ndmin=ndmin, encoding=encoding,
                        max_rows=max_rows, quotechar=quotechar)
    return loaded(values, "loadtxt")


def genfromtxt(fname, dtype=float, *args, usemask=False, like=None, **kwargs) -> Array:
    """Read a text table with missing values filled (np.genfromtxt's arguments: comments,
    delimiter, skip_header, filling_values, usecols, ...). usemask=True raises
    NotImplementedError (lazyarr has no masked arrays: fill the gaps with `filling_values`).

    >>> import io, lazyarr as la
    >>> la.genfromtxt(io.StringIO("1,2\\n3,"), delimiter=",", filling_values=-1).tolist()
    [[1.0, 2.0], [3.0, -1.0]]
    """
    check_like(like, "genfromtxt")
    if usemask:
        raise NotImplementedError(
            "genfromtxt: usemask=True returns a masked array, which lazyarr does not have; fill missing "
            "values with filling_values=..., or call np.genfromtxt"
        )
    return loaded(np.genfromtxt(fname, dtype, *args, **kwargs), "genfromtxt")


def fromregex(file, regexp, dtype, encoding=None) -> Array:
    """np.fromregex's result: always of a structured dtype, which lazyarr lacks, so this
    raises TypeError naming it once NumPy has read the file (NumPy's own errors first).

    >>> import io, lazyarr as la
    >>> la.fromregex(io.StringIO("1 2"), r"(\\d) (\\d)", [("a", "i8"), ("b", "i8")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: fromregex: the data have dtype [('a', '<i8'), ('b', '<i8')], ...
    """
    return loaded(np.fromregex(file, regexp, dtype, encoding=encoding), "fromregex")


def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None) -> Array:
    """Read a binary (sep='') or text file of one dtype as a 1-d lazy array (np.fromfile).

    >>> import lazyarr as la, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin"); np.arange(3.0).tofile(path)
    >>> la.fromfile(path).tolist()
    [0.0, 1.0, 2.0]
    """
    check_like(like, "fromfile")
    return loaded(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset), "fromfile")


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None) -> Array:
    """The bytes of `buffer` (bytes, a NumPy array, any buffer, or a lazy array whose layout is
    C-contiguous: its values' bytes, as `tobytes()`; a view NumPy would not lay out so, such
    as `x.T`, raises NumPy's ValueError) read as a 1-d lazy array of `dtype` (np.frombuffer).
    A copy, unlike NumPy's view: later changes to the buffer do not show.

    >>> import lazyarr as la
    >>> la.frombuffer(b"\\x01\\x00\\x02\\x00", dtype="int16").tolist()
    [1, 2]
    """
    check_like(like, "frombuffer")
    source = buffer
    if isinstance(buffer, Array):
        flags = contiguity(buffer)
        if flags is not None and not flags[0]:
            raise ValueError("frombuffer: ndarray is not C-contiguous (NumPy's view has no buffer either); "
                             "pass la.ascontiguousarray(x)")
        source = np.ascontiguousarray(buffer.numpy())
    return loaded(np.frombuffer(source, dtype=dtype, count=count, offset=offset), "frombuffer")


def fromstring(string, dtype=float, count=-1, *, sep="", like=None) -> Array:
    """Numbers in a string separated by `sep`, as a 1-d lazy array (np.fromstring; its binary
    mode, sep='', raises NumPy's ValueError: use frombuffer).

    >>> import lazyarr as la
    >>> la.fromstring("1 2 3", dtype="int64", sep=" ").tolist()
    [1, 2, 3]
    """
    check_like(like, "fromstring")
    return loaded(np.fromstring(string, dtype=dtype, count=count, sep=sep), "fromstring")
