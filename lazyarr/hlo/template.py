"""Graph templates: what a frontend function builds, recorded once per operand signature and
made again on new operands at interning speed.

A NumPy function such as `mean` or `matmul` makes several nodes after checks and dtype rules
that depend only on its operands' shapes and dtypes and its static arguments. A loop calling
it on new operands every step would run all of that again. A `Template` is the function's
graph recorded once on fresh parameter leaves: replaying it on new operands makes each node
with the recorded op, attributes, shape and dtype (no rules run, no attributes frozen), through
the intern table, so the nodes are exactly the ones the function itself would make.

Only a graph that is a function of its parameters and constants is a template: a build that
reads another array (a captured leaf) cannot be replayed on other operands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from . import instruction as _instruction
from .instruction import Instruction, fresh_parameter, local_key


class Template:
    """A recorded graph: replay with `template(*operands)` (same shapes and dtypes as recorded)."""

    __slots__ = ("fixed", "steps", "outputs")

    def __init__(self, fixed: tuple[Instruction, ...], steps: tuple[tuple, ...], outputs: tuple[int, ...]):
        # Slots at replay: the operands, then `fixed` (constants), then one per step in order.
        self.fixed, self.steps, self.outputs = fixed, steps, outputs

    def __call__(self, *operands: Instruction) -> Instruction:
        return _instruction.replay(self.steps, [*operands, *self.fixed])[self.outputs[0]]

    def all_outputs(self, operands) -> tuple[Instruction, ...]:
        """Every output of a template captured with several (`capture`), made on `operands`."""
        slots = _instruction.replay(self.steps, [*operands, *self.fixed])
        return tuple([slots[output] for output in self.outputs])


class _Recording(threading.local):
    """How many templates this thread is recording (nested builds record too)."""

    depth = 0


# Read by the frontend's bounded pending work: a graph being recorded stands on parameters
# with no buffer, so nothing may be evaluated until the recording ends.
RECORDING = _Recording()


def record(build: Callable[..., Instruction], operands: tuple[Instruction, ...]) -> Template | None:
    """`build`'s graph on parameters shaped like `operands`, as a Template; None when the
    graph reads anything but its parameters and constants (it cannot be replayed)."""
    parameters = tuple(fresh_parameter(operand.shape, operand.dtype) for operand in operands)
    RECORDING.depth += 1
    try:
        outputs = (build(*parameters),)
    finally:
        RECORDING.depth -= 1
    return capture(outputs, parameters)


def capture(outputs: tuple[Instruction, ...], inputs) -> Template | None:
    """The graph of `outputs` over `inputs` (any nodes, slots 0..n-1 in this order) as a
    Template; None when it reads a node that is neither an input nor a function of constants."""
    slot = {id(node): index for index, node in enumerate(inputs)}
    fixed: list[Instruction] = []
    steps: list[Instruction] = []
    stack = [(output, False) for output in reversed(outputs)]
    opened: set[int] = set()
    while stack:  # iterative post order
        node, expanded = stack.pop()
        if id(node) in slot or (not expanded and id(node) in opened):
            continue
        if not node.operands or node.constant_only:
            if not node.constant_only:
                return None  # a leaf that is not one of the inputs
            fixed.append(node)
            slot[id(node)] = None  # numbered below, once the count of inputs is known
            continue
        if not expanded:
            opened.add(id(node))
            stack.append((node, True))
            stack.extend((operand, False) for operand in reversed(node.operands) if id(operand) not in slot)
            continue
        steps.append(node)
        slot[id(node)] = None
    for index, node in enumerate(fixed):
        slot[id(node)] = len(inputs) + index
    base = len(inputs) + len(fixed)
    for index, node in enumerate(steps):
        slot[id(node)] = base + index
    recorded = tuple(
        (node.op, node._local, local_key(node._local), tuple(slot[id(operand)] for operand in node.operands),
         node.shape, node.dtype, node._attr_map)
        for node in steps
    )
    return Template(tuple(fixed), recorded, tuple(slot[id(output)] for output in outputs))


class Templates:
    """A function's templates by key; the key must fix the operands' shapes and dtypes and
    every argument the build depends on. At most `limit` kept (cleared when full)."""

    __slots__ = ("_templates", "_limit")

    def __init__(self, limit: int = 1024):
        self._templates: dict[Hashable, Template | None] = {}
        self._limit = limit

    @property
    def table(self) -> dict:
        """The templates by key (the C extension's `@` reads linalg's: frontend/fast_paths.py)."""
        return self._templates

    def build(self, key: Hashable, build: Callable[..., Instruction], *operands: Instruction) -> Instruction:
        """`build(*operands)`, replayed from the template under `key` (recorded on a miss)."""
        try:
            template = self._templates.get(key, _MISSING)
        except TypeError:  # an unhashable argument in the key: no template
            return build(*operands)
        if template is _MISSING:
            template = record(build, operands)  # raises what build raises: nothing kept
            if len(self._templates) >= self._limit:
                self._templates.clear()
            self._templates[key] = template
        if template is None:
            return build(*operands)
        return template(*operands)


_MISSING = object()
