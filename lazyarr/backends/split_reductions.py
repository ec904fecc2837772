"""Full reductions split over threads: partial results, then their combination.

A kernel whose outputs each reduce all of one large operand (`sum(x + y*z)`, `x.max()`) runs as
two kernels on the CPU: PARTIAL_BLOCKS partial results, which threads compute in parallel
(`KernelBuilder.add`'s partial_blocks: block b reduces the b-th equal range of the outermost
reduced axis), then a kernel combining them (`combining_computation`). The partials depend on
the extent only, so results do not depend on the thread count.
"""

from __future__ import annotations

import math

import numpy as np

from ..hlo import Computation, make
from ..shapes import is_symbolic_size
from .llvm.reduction_arithmetic import ACCUMULATOR

PARTIAL_BLOCKS = 64
_PARTIAL_KINDS = frozenset({"sum", "prod", "max", "min"})
# Below this many elements (sizes known when compiled), a full reduction stays one kernel.
_PARTIALS_FROM = 1 << 15


def splits_into_partials(computation: Computation) -> bool:
    """Whether every output of the fused `computation` reduces all of one large operand (of
    the same shape for all) to one real number: then threads can split the reduction."""
    outputs = computation.outputs
    if not outputs or not all(output.opcode == "reduce" and not output.shape for output in outputs):
        return False
    shape = outputs[0].operands[0].shape
    for output in outputs:
        if (output.attr("kind") not in _PARTIAL_KINDS or output.dtype.kind not in "fiu"
                or output.operands[0].shape != shape):
            return False
    return bool(shape) and (any(is_symbolic_size(size) for size in shape) or math.prod(shape) >= _PARTIALS_FROM)


def combining_computation(computation: Computation) -> Computation:
    """The kernel combining the partials of `computation` (`splits_into_partials`): each output
    reduces its PARTIAL_BLOCKS partials, of the accumulator's dtype, then casts back. Float32
    sums and products combine in float64: the 64 partials are added one after the other (a
    float32 running total of W1's 10^7-term sum had 11 times NumPy's error; float64's, 0.2)."""
    parameters, outputs = [], []
    for number, output in enumerate(computation.outputs):
        accumulated = ACCUMULATOR.get(output.dtype, output.dtype)
        partials = make("parameter", number=number, shape=(PARTIAL_BLOCKS,), dtype=accumulated)
        parameters.append(partials)
        kind = output.attr("kind")
        if kind in ("sum", "prod") and accumulated == np.float32:
            partials = make("convert", [partials], dtype=np.dtype(np.float64))
        total = make("reduce", [partials], dimensions=(0,), kind=kind)
        outputs.append(total if total.dtype == output.dtype else make("convert", [total], dtype=output.dtype))
    return Computation(COMBINE_NAME, tuple(parameters), tuple(outputs))


COMBINE_NAME = "combine_partials"
