"""custom-call: ops that compilers do not generate code for, run on the host with NumPy.

sort, linear-algebra decompositions and FFTs are custom-calls, as XLA's auto-clustering
leaves unsupported ops to TensorFlow: compiled backends run them between compiled clusters.
Each target registers its output rule and its NumPy implementation in one place
(`CustomCallTarget`). A target may have several outputs (qr gives q and r); an instruction
names one with `output_index`, and `options` carries the target's static arguments as a
tuple of (name, value) pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..op import HOST, HloError, OpDef, register


@dataclass(frozen=True)
class CustomCallTarget:
    """`infer(operands, options) -> [(shape, dtype), ...]`; `implementation(values, options)`
    returns a tuple of NumPy arrays, one per output, matching `infer`."""

    name: str
    infer: Callable[[Sequence, dict], list[tuple[tuple[int, ...], np.dtype]]]
    implementation: Callable[[Sequence[np.ndarray], dict], tuple[np.ndarray, ...]]
    doc: str = ""


_TARGETS: dict[str, CustomCallTarget] = {}


def register_target(target: CustomCallTarget) -> CustomCallTarget:
    if target.name in _TARGETS:
        raise ValueError(f"custom-call target {target.name!r} is defined twice")
    _TARGETS[target.name] = target
    return target


def get_target(name: str) -> CustomCallTarget:
    try:
        return _TARGETS[name]
    except KeyError:
        raise HloError(f"custom-call: unknown target {name!r}") from None


def all_targets() -> dict[str, CustomCallTarget]:
    return dict(_TARGETS)


def _output(operands, attrs):
    target = get_target(attrs["target"])
    outputs = target.infer(operands, dict(attrs["options"]))
    index = attrs["output_index"]
    if not 0 <= index < len(outputs):
        raise HloError(
            f"custom-call {target.name}: output_index {index} out of range ({len(outputs)} outputs)"
        )
    return outputs[index]


def _reference(values, attrs):
    target = get_target(attrs["target"])
    with np.errstate(all="ignore"):
        outputs = target.implementation(values, dict(attrs["options"]))
    return np.asarray(outputs[attrs["output_index"]])


register(OpDef(
    name="custom-call",
    arity=None,
    shape_rule=lambda operands, attrs: _output(operands, attrs)[0],
    dtype_rule=lambda operands, attrs: _output(operands, attrs)[1],
    reference=_reference,
    attrs=("target",),
    optional_attrs={"output_index": 0, "options": ()},
    traits=frozenset({HOST}),
    doc="A host-side NumPy implementation named by `target`.",
))


def custom_call_outputs(target: str, operands, **options):
    """Build every output of a custom-call target; returns a tuple of instructions."""
    from ..instruction import make

    frozen_options = tuple(sorted(options.items()))
    count = len(get_target(target).infer(operands, dict(frozen_options)))
    return tuple(
        make("custom-call", operands, target=target, output_index=index, options=frozen_options)
        for index in range(count)
    )
