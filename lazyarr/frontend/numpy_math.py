"""NumPy's elementwise compositions, polynomials and dtype helpers beyond the array API.

Each function follows NumPy 2's results (values, dtypes, shapes) and stays lazy where its
output shape is known without data. This module only gathers the public names of the small
modules that define them (one purpose each), so that numpy_functions re-exports them:

    elementwise_compositions  deg2rad, rad2deg, degrees, radians, around, fix, sinc, heaviside,
                              logaddexp2, divmod, modf, isneginf, isposinf
    type_checks               nan_to_num, isreal, iscomplex, isrealobj, iscomplexobj, real_if_close
    polynomials               polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, vander, poly,
                              roots
    polynomial_fit            polyfit
    phase_unwrapping          unwrap
    spacing_and_windows       geomspace, fromfunction, hamming, hanning, blackman, bartlett, kaiser, i0
    floating_point            frexp (ldexp, spacing and bitwise_count are elementwise ufuncs)
    lexicographic_sorting     lexsort, sort_complex
    vector_matrix_products    matvec, vecmat
    dtype_queries             isscalar, issubdtype, promote_types, min_scalar_type, common_type,
                              mintypecode
"""

from __future__ import annotations

from . import (
    dtype_queries,
    elementwise_compositions,
    floating_point,
    lexicographic_sorting,
    phase_unwrapping,
    polynomial_fit,
    polynomials,
    spacing_and_windows,
    type_checks,
    vector_matrix_products,
)
from .dtype_queries import *  # noqa: F403
from .elementwise_compositions import *  # noqa: F403
from .floating_point import *  # noqa: F403
from .lexicographic_sorting import *  # noqa: F403
from .phase_unwrapping import *  # noqa: F403
from .polynomial_fit import *  # noqa: F403
from .polynomials import *  # noqa: F403
from .spacing_and_windows import *  # noqa: F403
from .type_checks import *  # noqa: F403
from .vector_matrix_products import *  # noqa: F403

MODULES = (
    dtype_queries, elementwise_compositions, floating_point, lexicographic_sorting, phase_unwrapping,
    polynomial_fit, polynomials, spacing_and_windows, type_checks, vector_matrix_products,
)

__all__: list[str] = [name for module in MODULES for name in module.__all__]
