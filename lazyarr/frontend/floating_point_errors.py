"""NumPy's floating-point error handling names: seterr, geterr, errstate, seterrcall, geterrcall.

lazyarr's model: its computations follow IEEE 754 and never signal. Division by zero,
overflow, underflow and invalid operations give inf, 0 or NaN, with no RuntimeWarning, no
FloatingPointError and no callback, on every backend (compiled kernels do not check each
element, and the interpreter evaluates under np.errstate(all="ignore")); the README's
"Differences from NumPy" table says so.

The settings themselves are NumPy's (`la.geterr() == np.geterr()`, always): they govern the
NumPy computations a program still does (its own np calls, and NumPy functions lazyarr falls
back to on evaluated inputs), as they did before the program was ported. The informational
modes, 'ignore', 'warn', 'print' and 'log', are accepted and set for those; lazyarr's own
results stay silent under every one of them. The modes that change control flow, 'raise' and
'call', are refused with NotImplementedError: accepting them would pretend that a lazy
division by zero raises FloatingPointError (or calls the handler), which it never does. Check
values explicitly instead (`la.isfinite(x).all()`, `la.asarray_chkfinite`), or use np.seterr
for NumPy's computations alone.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["errstate", "geterr", "geterrcall", "seterr", "seterrcall"]

_UNSET = object()  # errstate's `call` not given (None is a valid handler: none)
_CONTROL_FLOW_MODES = ("raise", "call")


def _refuse_control_flow(where: str, modes: dict) -> None:
    for category, mode in modes.items():
        if mode in _CONTROL_FLOW_MODES:
            raise NotImplementedError(
                f"{where}: {category}={mode!r} is not supported: lazyarr computes with IEEE 754 results "
                "(inf, NaN) and never raises FloatingPointError or calls an error handler, so this mode "
                "would be silently ignored; check values explicitly (la.isfinite(x).all(), "
                "la.asarray_chkfinite), or use np.seterr / np.errstate for NumPy's own computations"
            )


def geterr() -> dict:
    """The floating-point error handling: NumPy's settings (lazyarr's own computations are
    silent under any of them).

    >>> import lazyarr as la, numpy as np
    >>> la.geterr() == np.geterr()
    True
    """
    return np.geterr()


def seterr(all=None, divide=None, over=None, under=None, invalid=None) -> dict:  # noqa: A002 (NumPy's name)
    """Set NumPy's floating-point error handling and return the previous settings. Accepts
    'ignore', 'warn', 'print', 'log' (lazyarr's own computations stay silent); 'raise' and
    'call' raise NotImplementedError (lazyarr never raises or calls on these errors).

    >>> import lazyarr as la
    >>> old = la.seterr(divide="ignore"); la.geterr()["divide"]
    'ignore'
    >>> _ = la.seterr(**old)
    """
    modes = {"all": all, "divide": divide, "over": over, "under": under, "invalid": invalid}
    _refuse_control_flow("seterr", modes)
    return np.seterr(**modes)


def seterrcall(func):
    """Set NumPy's floating-point error handler (used by NumPy's own computations in 'call'
    and 'log' modes; lazyarr's never call it) and return the previous one.

    >>> import lazyarr as la
    >>> la.seterrcall(None) is None
    True
    """
    return np.seterrcall(func)


def geterrcall():
    """NumPy's floating-point error handler (see seterrcall).

    >>> import lazyarr as la
    >>> la.geterrcall() is None
    True
    """
    return np.geterrcall()


class errstate:  # noqa: N801 (NumPy's name)
    """A context manager (or decorator) setting NumPy's floating-point error handling inside
    it, as np.errstate: 'ignore', 'warn', 'print', 'log'; 'raise' and 'call' raise
    NotImplementedError when the errstate is made (lazyarr's computations never raise or call
    on floating-point errors, inside or outside; see the module docstring).

    >>> import lazyarr as la
    >>> with la.errstate(divide="ignore"):
    ...     print((la.asarray([1.0]) / 0).tolist())
    [inf]
    """

    def __init__(self, *, call=_UNSET, all=None, divide=None, over=None, under=None, invalid=None):  # noqa: A002
        modes = {"all": all, "divide": divide, "over": over, "under": under, "invalid": invalid}
        _refuse_control_flow("errstate", modes)
        self._options = modes if call is _UNSET else {"call": call, **modes}
        self._entered = None

    def __enter__(self) -> None:
        if self._entered is not None:
            raise TypeError("Cannot enter `errstate` twice.")
        entered = np.errstate(**self._options)
        entered.__enter__()  # (NumPy checks the mode names here)
        self._entered = entered

    def __exit__(self, *exc_info) -> None:
        entered, self._entered = self._entered, None
        entered.__exit__(*exc_info)

    def __call__(self, func):
        """`func` run inside this error handling at each call (a fresh state per call, so
        recursive and concurrent calls are safe, as NumPy's decorator)."""
        options = self._options

        @functools.wraps(func)
        def inner(*args, **kwargs):
            with np.errstate(**options):
                return func(*args, **kwargs)

        return inner
