"""The HLO op set, one module per family. Importing this package registers every op."""

from . import (  # noqa: F401
    custom,
    elementwise,
    fusion,
    indexing,
    layout,
    leaves,
    linalg,
    reduce,
    targets,  # noqa: F401
)
