"""Explicit evaluation and inspection entry points: `la.eval`, `la.hlo_text`."""

from __future__ import annotations

from ..compile import build_module, cache_info, clear_cache  # noqa: F401 (re-exported)
from .array import Array, bound_buffer, evaluate_arrays
from .core import as_array


def eval(*arrays: Array):  # noqa: A001 (the documented public name)
    """Evaluate all `arrays` as one module, sharing their common subgraphs.

    Returns the arrays (one array when given one), each now holding its buffer.

    >>> import lazyarr as la
    >>> x = la.arange(4.0)
    >>> a, b = la.eval(x.sum(), (x * x).sum())
    >>> float(a), float(b)
    (6.0, 14.0)
    """
    evaluate_arrays(arrays)
    return arrays[0] if len(arrays) == 1 else arrays


def hlo_text(*arrays) -> str:
    """The HLO module that evaluating `arrays` would run, as parseable text.

    >>> import lazyarr as la
    >>> print(la.hlo_text(-la.asarray([1.0])))  # doctest: +ELLIPSIS
    HloModule main...
    """
    from ..hlo.text import print_module

    nodes = [as_array(array, where="hlo_text")._node for array in arrays]
    module, _ = build_module(nodes, bound_buffer)
    return print_module(module)


def explain(*arrays):
    """What the compiler does with `arrays`: HLO before/after, fusion decisions, buffers, kernels.

    Returns an Explanation (`.hlo_before`, `.hlo_after`, `.num_kernels`, `.llvm_ir`,
    `.fusion_decisions`); print it for a readable report. Compiles if needed; runs nothing.

    >>> import lazyarr as la
    >>> report = la.explain(la.exp(la.arange(4.0)).sum())
    >>> report.hlo_before.startswith("HloModule")
    True
    """
    from ..compile import explain as explain_graph

    nodes = [as_array(array, where="explain")._node for array in arrays]
    return explain_graph(nodes, bound_buffer)


def set_backend(name: str) -> None:
    """Choose the backend for later evaluations ('interpreter' is the NumPy oracle).

    Same as LAZYARR_FLAGS=--backend=NAME; an unknown name raises ValueError listing the known ones.
    """
    from .. import _flags
    from ..backends import get_backend

    get_backend(name)
    _flags.with_overrides(backend=name)


def get_backend_name() -> str:
    """The name of the backend evaluations use now."""
    from .. import _flags

    return _flags.FLAGS.backend
