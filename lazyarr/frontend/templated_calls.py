"""Frontend calls replayed from graph templates (hlo/template.py), keyed by their arguments.

A NumPy function called in a loop (`where(mask, x, 0.0)`, `clip(x, 0, 1)`, `arange(n)`,
`diff(x)`) runs its checks, promotion and broadcasting rules on every call although they
depend only on the arguments' shapes and dtypes, the values of its Python scalars and its
static arguments. `replayed` records the function's graph once per such key and makes its
nodes again on new operands at interning speed: the same interned nodes the function itself
makes (the tests pin that), 3-10x cheaper to record.

Only functions whose result owns its value may be replayed: a view (`reshape`, a slice) must
stay a view of its base, so writes through it reach the base (views.py).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Hashable

from ..hlo.template import Templates
from .array import Array

_PYTHON_SCALARS = frozenset({bool, int, float, complex})
CALLS = Templates(limit=4096)  # (fast_paths.py hands its table to the C extension)


def scalar_key(value) -> tuple:
    """A Python scalar argument's part of a key: its type and value.

    Floats 0.0 and -0.0 are equal but compute differently (x + 0.0 simplifies; 1 / -0.0), and
    NaN never equals itself (nor does `float.hex` tell NaN's sign): those are keyed by their
    bits, as complex numbers always are.
    """
    kind = type(value)
    if kind is float and (value == 0.0 or value != value):
        return (kind, _DOUBLE.pack(value))
    if kind is complex:
        return (kind, _DOUBLE.pack(value.real), _DOUBLE.pack(value.imag))
    return (kind, value)


_DOUBLE = struct.Struct("<d")


def scalar_from_key(part):
    """A value part of `scalar_key` as the number it stands for (bytes back to the float)."""
    return _DOUBLE.unpack(part)[0] if type(part) is bytes else part


def replayed(name: str, function: Callable[..., Array], arguments: tuple, statics: Hashable = ()) -> Array | None:
    """`function(*arguments)`, its graph replayed from the template for `name`, `statics` (the
    other arguments, hashable; values equal as keys must build the same graph or raise the
    same error: the caller admits exact types only, `(2.0, 3) == (2, 3)`) and the arguments: each a
    lazyarr Array (keyed by shape and dtype), a Python scalar (by `scalar_key`) or None. None, with
    nothing done, when an argument is anything else (a NumPy array, a list, an element read
    from an evaluated array): the caller then runs `function` itself. Errors are the
    function's own (a failed recording keeps nothing)."""
    key = [name, statics]
    nodes = []
    positions = []
    for position, argument in enumerate(arguments):
        kind = type(argument)
        if kind is Array:
            node = argument._node
            nodes.append(node)
            positions.append(position)
            key.append((node.shape, node.dtype))
        elif kind in _PYTHON_SCALARS:
            key.append(scalar_key(argument))
        elif argument is None:  # an omitted optional argument (`clip(x, None, 1)`)
            key.append(None)
        else:
            return None

    def build(*parameters):
        call = list(arguments)
        for position, parameter in zip(positions, parameters):
            call[position] = Array(parameter)
        return function(*call)._node

    return Array(CALLS.build(tuple(key), build, *nodes))
