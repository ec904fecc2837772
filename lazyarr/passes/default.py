"""default_pipeline: the explicit, ordered list of passes every compilation runs.

Read it top to bottom; there is no ordering by priorities. Simplification and constant
folding feed each other (folding makes splats the simplifier recognizes, simplifying exposes
constant subgraphs), so they run together to a fixed point; CSE then merges what the
simplified graph spells twice, which can enable more simplification.
"""

from __future__ import annotations

from collections.abc import Iterable

from .cse import CommonSubexpressionEliminator
from .dce import DeadCodeEliminator
from .fold import ConstantFolder
from .pipeline import DumpHook, FixedPoint, Pipeline
from .simplify import AlgebraicSimplifier
from .transpose_folding import TransposeFolding


def _simplification() -> FixedPoint:
    return FixedPoint([AlgebraicSimplifier(), ConstantFolder()], name="simplification")


def default_pipeline(
    fusion_policy=None,
    *,
    disabled: Iterable[str] | None = None,
    verify: bool | None = None,
    dump: DumpHook | None = None,
) -> Pipeline:
    """The target-independent passes, then (given a backend's fusion policy) fusion and
    buffer assignment. `disabled`, `verify` and `dump` go to the Pipeline (defaults from
    LAZYARR_FLAGS).

    >>> default_pipeline().pass_names()
    ['simplification', 'simplify', 'fold', 'cse', 'simplification', 'simplify', 'fold', 'transpose-folding', 'dce']
    """
    passes = [
        _simplification(),
        CommonSubexpressionEliminator(),
        _simplification(),
        TransposeFolding(),
        DeadCodeEliminator(),
    ]
    if fusion_policy is not None:
        # Fusion and buffer assignment only make sense for a backend that generates code (the
        # interpreter passes no policy). Imported here, not at the top, so the target-
        # independent pipeline does not depend on them; an ImportError here is a real error.
        from .buffers import BufferAssigner
        from .fusion import InstructionFusion

        passes += [
            InstructionFusion(fusion_policy),
            DeadCodeEliminator(),  # fused computations that fusion made and then replaced
            BufferAssigner(),
        ]
    return Pipeline(passes, disabled=disabled, verify=verify, dump=dump)
