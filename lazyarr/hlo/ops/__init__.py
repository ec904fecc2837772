"""The HLO op set, one module per family. Importing this package registers every op."""

from . import custom, elementwise, indexing, layout, leaves, linalg, reduce  # noqa: F401
from . import targets  # noqa: F401
