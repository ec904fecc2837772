"""NumPy's elementwise functions that lazyarr builds from its own elementwise ops.

deg2rad/rad2deg (and their aliases radians/degrees), heaviside, logaddexp2, divmod, modf,
fix, sinc, around, isneginf and isposinf. Dtypes come from NumPy's own type resolution of the
ufunc each function names (`elementwise.resolve`/`prepare`, NEP 50 weak Python scalars), so
they match NumPy 2 for every input; the arithmetic repeats NumPy's loop step for step (its
float16 loops compute in float32 and round once, its angle constants are its own), so values
are NumPy's except where NumPy calls a transcendental kernel (exp2, log1p, sin), whose last
bits depend on the implementation. All stay lazy.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from . import elementwise as ew
from .array import Array
from .core import as_array, convert, wrap
from .reduction_support import refuse_out
from .ufunc import make_ufunc

__all__ = [
    "around", "deg2rad", "degrees", "divmod", "fix", "heaviside", "isneginf", "isposinf", "logaddexp2",
    "modf", "rad2deg", "radians", "sinc",
]

# NumPy's log2(e) (npy_math's NPY_LOG2E); as a float32 constant it rounds to NPY_LOG2Ef.
_LOG2E = 1.442695040888963407359924681001892137


def _operand(value, where: str) -> Array:
    return value if isinstance(value, Array) else as_array(value, where=where)


def _computing_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's loop computes in: its float16 loops convert to float32 and back."""
    return dtypes.float32 if dtype == dtypes.float16 else dtype


def _angle_conversion(name: str, ufunc: np.ufunc, x) -> Array:
    """x times NumPy's constant (pi/180 or 180/pi) as its loop for x's dtype holds it."""
    array = _operand(x, name)  # (a lone Python scalar resolves as its default dtype would)
    (loop,), (result,) = ew.resolve(name, ufunc, (array,))
    compute = _computing_dtype(result)
    factor = ufunc(np.ones((), compute))  # 1 * constant: NumPy's constant, rounded as its loop has it
    node = convert(array._node, compute)
    product = ew.multiply(wrap(node), factor)
    return wrap(convert(product._node, result))


def _define_angle(name: str, ufunc: np.ufunc, summary: str, example: str):
    def function(x, /) -> Array:
        return _angle_conversion(name, ufunc, x)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"{summary} (NumPy's {name}): x times NumPy's constant in the loop's precision, so "
        f"values are NumPy's bit for bit; integers and bools become floats as in NumPy.\n\n"
        f"    >>> import lazyarr as la\n    >>> {example}\n\n    A ufunc, as in NumPy."
    )
    return make_ufunc(name, ufunc, function)


deg2rad = _define_angle("deg2rad", np.deg2rad, "Degrees to radians",
                        "la.deg2rad(la.asarray([180.0, 90.0])).tolist()\n    [3.141592653589793, 1.5707963267948966]")
radians = _define_angle("radians", np.radians, "Degrees to radians",
                        "la.radians(la.asarray([180.0])).tolist()\n    [3.141592653589793]")
rad2deg = _define_angle("rad2deg", np.rad2deg, "Radians to degrees",
                        "la.rad2deg(la.asarray([3.141592653589793])).tolist()\n    [180.0]")
degrees = _define_angle("degrees", np.degrees, "Radians to degrees",
                        "la.degrees(la.asarray([3.141592653589793])).tolist()\n    [180.0]")


def heaviside(x1, x2, /) -> Array:
    """The Heaviside step: 0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN for NaN x1.

    >>> import lazyarr as la
    >>> la.heaviside(la.asarray([-1.5, 0.0, 2.0]), 0.5).tolist()
    [0.0, 0.5, 1.0]

    A ufunc, as in NumPy."""
    (x, h0), result = ew.prepare("heaviside", np.heaviside, (x1, x2))
    x, h0 = wrap(x), wrap(h0)
    # In the loop's dtype throughout (the scalars are weak); NaN x gives NumPy's quiet NaN.
    value = ew.where(ew.greater(x, 0), 1, ew.where(ew.equal(x, 0), h0, math.nan))
    return wrap(convert(ew.where(ew.less(x, 0), 0, value)._node, result))


def logaddexp2(x1, x2, /) -> Array:
    """log2(2**x1 + 2**x2) without overflow, by NumPy's formula (npy_logaddexp2).

    >>> import lazyarr as la
    >>> la.logaddexp2(la.asarray([1.0, 3.0]), 1.0).tolist()
    [2.0, 3.321928094887362]

    A ufunc, as in NumPy."""
    nodes, result = ew.prepare("logaddexp2", np.logaddexp2, (x1, x2))
    compute = _computing_dtype(result)
    x, y = (wrap(convert(node, compute)) for node in nodes)
    difference = ew.subtract(x, y)
    # x + log2(1 + 2**-d) for d > 0, y + log2(1 + 2**d) for d <= 0, d itself (NaN) otherwise.
    above = ew.add(x, ew.multiply(_LOG2E, ew.log1p(ew.exp2(ew.negative(difference)))))
    below = ew.add(y, ew.multiply(_LOG2E, ew.log1p(ew.exp2(difference))))
    value = ew.where(ew.greater(difference, 0), above, ew.where(ew.less_equal(difference, 0), below, difference))
    value = ew.where(ew.equal(x, y), ew.add(x, 1), value)  # equal infinities give themselves, not NaN
    return wrap(convert(value._node, result))


heaviside = make_ufunc("heaviside", np.heaviside, heaviside)  # NumPy's ufunc methods: outer, reduce, ...
logaddexp2 = make_ufunc("logaddexp2", np.logaddexp2, logaddexp2)


def divmod(x1, x2, /) -> tuple[Array, Array]:  # noqa: A001 (NumPy's name)
    """(floor_divide(x1, x2), remainder(x1, x2)), NumPy's divmod: the same loop computes both.

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.divmod(la.asarray([7, -7]), 3)]
    [[2, -3], [1, 2]]
    """
    ew.resolve("divmod", np.divmod, (x1, x2))  # NumPy's errors, naming divmod (no complex loop)
    return ew.floor_divide(x1, x2), ew.remainder(x1, x2)


def modf(x, /) -> tuple[Array, Array]:
    """(fractional part, integral part), both with x's sign, as C's modf: -2.5 -> (-0.5, -2.0),
    -0.0 -> (-0.0, -0.0), +-inf -> (+-0.0, +-inf), NaN -> (NaN, NaN).

    >>> import lazyarr as la
    >>> [part.tolist() for part in la.modf(la.asarray([-2.5, 3.0]))]
    [[-0.5, 0.0], [-2.0, 3.0]]
    """
    array = _operand(x, "modf")
    (loop,), _ = ew.resolve("modf", np.modf, (array,))
    array = wrap(convert(array._node, loop))
    integral = ew.trunc(array)
    # x - trunc(x) is exact; copysign gives -2.0 the fraction -0.0 and keeps NaN NaN.
    fraction = ew.where(ew.isinf(array), 0.0, ew.subtract(array, integral))
    return ew.copysign(fraction, array), integral


def fix(x, out=None) -> Array:
    """Round toward zero (NumPy's fix: floor where x >= 0, else ceil); dtype as NumPy's ceil.

    >>> import lazyarr as la
    >>> la.fix(la.asarray([2.7, -2.7, -0.5])).tolist()
    [2.0, -2.0, -0.0]
    """
    refuse_out("fix", out)
    array = _operand(x, "fix")
    ew.resolve("fix", np.ceil, (array,))  # complex: NumPy's TypeError, naming fix
    return ew.where(ew.greater_equal(array, 0), ew.floor(array), ew.ceil(array))


def sinc(x) -> Array:
    """sin(pi x) / (pi x), 1 at 0 (NumPy's sinc, its arithmetic: a zero is replaced by eps).

    >>> import lazyarr as la
    >>> la.sinc(la.asarray([0.0, 0.5])).tolist()
    [1.0, 0.6366197723675814]
    """
    scaled = ew.multiply(math.pi, _operand(x, "sinc"))
    if dtypes.is_floating(scaled.dtype):
        substitute = np.finfo(scaled.dtype).eps  # a NumPy scalar of the dtype
    else:
        substitute = 1e-20  # NumPy's value for complex (a weak Python float)
    safe = ew.where(scaled, scaled, substitute)
    return ew.divide(ew.sin(safe), safe)


def around(a, decimals=0, out=None) -> Array:
    """NumPy's around: `round` (half to even, `decimals` places).

    >>> import lazyarr as la
    >>> la.around(la.asarray([0.5, 1.5, 2.5])).tolist()
    [0.0, 2.0, 2.0]
    >>> la.around(la.asarray([1.2345]), 2).tolist()
    [1.23]
    """
    refuse_out("around", out)
    return ew.round(a, decimals)


def _infinity_of_sign(name: str, x, negative: bool) -> Array:
    array = _operand(x, name)
    if dtypes.is_complex(array.dtype):
        raise TypeError(
            f"{name}: This operation is not supported for {array.dtype} values because it would be ambiguous."
        )
    sign = ew.signbit(array)
    return ew.logical_and(ew.isinf(array), sign if negative else ew.logical_not(sign))


def isneginf(x, out=None) -> Array:
    """Whether each element is negative infinity (bool); complex input is refused as NumPy does.

    >>> import lazyarr as la
    >>> la.isneginf(la.asarray([-float("inf"), 0.0, float("inf")])).tolist()
    [True, False, False]
    """
    refuse_out("isneginf", out)
    return _infinity_of_sign("isneginf", x, negative=True)


def isposinf(x, out=None) -> Array:
    """Whether each element is positive infinity (bool); complex input is refused as NumPy does.

    >>> import lazyarr as la
    >>> la.isposinf(la.asarray([-float("inf"), 0.0, float("inf")])).tolist()
    [False, False, True]
    """
    refuse_out("isposinf", out)
    return _infinity_of_sign("isposinf", x, negative=False)

