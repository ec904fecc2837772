"""fusion: a call of a fused computation, the unit a compiler turns into one kernel.

The fusion pass groups instructions into computations of their own and replaces each group
by `fusion` instructions over the group's inputs. A multi-output fusion (siblings sharing a
loop, `la.eval(a, b)` outputs) is several `fusion` instructions with the same computation and
operands and different `output_index`; a backend runs their kernel once.

`kind` says what the kernel's loop looks like, as in XLA: `loop` (elementwise over the
output), `input` (a reduction is the root: the loop runs over the reduced input).
"""

from __future__ import annotations

from ..evaluate import evaluate
from ..op import HloError, OpDef, register

FUSION_KINDS = ("loop", "input")


def _called(operands, attrs):
    computation = attrs["computation"]
    if type(computation).__name__ != "Computation":
        raise HloError(f"fusion: attribute computation must be a Computation, got {computation!r}")
    if attrs["kind"] not in FUSION_KINDS:
        raise HloError(f"fusion: kind {attrs['kind']!r} is not one of {FUSION_KINDS}")
    if len(operands) != len(computation.parameters):
        raise HloError(
            f"fusion: {computation.name} takes {len(computation.parameters)} operands, got {len(operands)}"
        )
    for operand, parameter in zip(operands, computation.parameters):
        if operand.shape != parameter.shape or operand.dtype != parameter.dtype:
            raise HloError(
                f"fusion: operand {parameter.attr('number')} of {computation.name} must be "
                f"{parameter.dtype}{list(parameter.shape)}, got {operand.dtype}{list(operand.shape)}"
            )
    index = attrs["output_index"]
    if not 0 <= index < len(computation.outputs):
        raise HloError(f"fusion: output_index {index} out of range for {computation.name}")
    return computation.outputs[index]


register(OpDef(
    name="fusion",
    arity=None,
    shape_rule=lambda operands, attrs: _called(operands, attrs).shape,
    dtype_rule=lambda operands, attrs: _called(operands, attrs).dtype,
    reference=lambda values, attrs: evaluate(attrs["computation"], values)[attrs["output_index"]],
    attrs=("kind", "computation"),
    optional_attrs={"output_index": 0},
    doc="Output `output_index` of the fused `computation` applied to the operands.",
))
