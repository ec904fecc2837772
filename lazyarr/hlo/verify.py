"""The verifier: re-check every instruction of a Module or Computation against its op's rules.

`make()` runs the rules when an instruction is built, so a graph built through it is valid;
the verifier catches what slips past that: a pass that forges instructions, an op whose rules
changed, parameters numbered wrongly, a module whose computations are filed under the wrong
names. Between passes (`--verify`) it turns a miscompile into an error naming the pass's
output line, e.g. `verify main: negate.1 = f32[5] negate(p0): op rules give shape (3,) and dtype float32`.
"""

from __future__ import annotations

import numpy as np

from .instruction import Instruction
from .module import Computation, Module
from .op import HloError, get
from .text import format_instruction, instruction_names


def verify(target: Module | Computation) -> None:
    """Raise HloError on the first broken rule in `target` (every computation of a Module).

    >>> from lazyarr.hlo import make
    >>> x = make("parameter", number=0, shape=(2,), dtype=np.dtype("float32"))
    >>> verify(Computation("main", (x,), (make("exp", [x]),)))  # returns None: valid
    """
    if isinstance(target, Module):
        if not isinstance(target.entry, Computation):
            raise HloError(f"verify module {target.name}: entry is not a Computation: {target.entry!r}")
        for key, computation in target.computations.items():
            if not isinstance(computation, Computation) or computation.name != key:
                raise HloError(
                    f"verify module {target.name}: computations[{key!r}] must be a Computation "
                    f"named {key!r}, got {getattr(computation, 'name', computation)!r}"
                )
            if key == target.entry.name:
                raise HloError(f"verify module {target.name}: computation {key!r} shares the entry's name")
        for computation in (*target.computations.values(), target.entry):
            _verify_computation(computation)
            _check_called(target, computation)
    elif isinstance(target, Computation):
        _verify_computation(target)
    else:
        raise TypeError(f"verify: expected a Module or Computation, got {type(target).__name__}")


def _verify_computation(computation: Computation) -> None:
    where = f"verify {computation.name}"
    for index, parameter in enumerate(computation.parameters):
        if not isinstance(parameter, Instruction) or parameter.opcode != "parameter":
            raise HloError(f"{where}: parameters[{index}] is not a parameter: {parameter!r}")
        number = parameter.attributes.get("number")
        if number != index:
            raise HloError(f"{where}: parameters[{index}] is parameter({number}), not parameter({index})")
    for index, output in enumerate(computation.outputs):
        if not isinstance(output, Instruction):
            raise HloError(f"{where}: outputs[{index}] is not an Instruction: {output!r}")
    _check_operands(computation, where)
    try:
        order = computation.post_order()
    except HloError as error:
        raise HloError(f"{where}: {error}") from error
    names = instruction_names(order)
    for instruction in order:
        problem = _problem(instruction)
        if problem:
            raise HloError(f"{where}: {names[id(instruction)]} = {_line(instruction, names)}: {problem}")


def _check_called(module: Module, computation: Computation) -> None:
    """Every computation a fusion calls must be the module's computation of that name."""
    order = computation.post_order()
    names = None
    for instruction in order:
        called = instruction.attributes.get("computation")
        if not isinstance(called, Computation):
            continue
        if module.computations.get(called.name) != called:
            names = names or instruction_names(order)
            raise HloError(
                f"verify {computation.name}: {names[id(instruction)]} calls computation "
                f"{called.name!r}, which is not the module's computation of that name "
                f"(module computations: {sorted(module.computations)})"
            )


def _check_operands(computation: Computation, where: str) -> None:
    """Check every reachable operand is an Instruction before the post-order walk relies on it."""
    stack = list(computation.outputs)
    seen = {id(node) for node in stack}
    while stack:
        node = stack.pop()
        for index, operand in enumerate(node.operands):
            if not isinstance(operand, Instruction):
                raise HloError(f"{where}: operand {index} of {node!r} is not an Instruction: {operand!r}")
            if id(operand) not in seen:
                seen.add(id(operand))
                stack.append(operand)


def _problem(instruction: Instruction) -> str | None:
    """What is wrong with one instruction, in words, or None."""
    opdef = instruction.op
    try:
        registered = get(opdef.name)
    except HloError:
        return f"op {opdef.name!r} is not registered"
    if registered is not opdef:
        return f"op {opdef.name!r} is not the registered OpDef of that name"
    if opdef.arity is not None and len(instruction.operands) != opdef.arity:
        return f"expects {opdef.arity} operands, has {len(instruction.operands)}"
    names = [name for name, _ in instruction.attrs]
    if names != sorted(set(names)):
        return f"attributes {names} are not sorted and unique"
    if dict(instruction.attrs) != dict(instruction.attributes):
        return "attribute tuple and attribute map disagree"
    missing = [name for name in opdef.attrs if name not in names]
    if missing:
        return f"missing attribute(s) {missing}"
    unknown = [name for name in names if name not in opdef.attrs and name not in opdef.optional_attrs]
    if unknown:
        return f"unknown attribute(s) {unknown}; accepted: {sorted((*opdef.attrs, *opdef.optional_attrs))}"
    try:
        shape = tuple(opdef.shape_rule(instruction.operands, instruction.attributes))
        dtype = np.dtype(opdef.dtype_rule(instruction.operands, instruction.attributes))
    except Exception as error:  # any rule failure is the instruction's problem
        return f"op rules refuse it: {error}"
    if shape != instruction.shape or dtype != instruction.dtype:
        return f"op rules give shape {shape} and dtype {dtype}"
    return None


def _line(instruction: Instruction, names: dict[int, str]) -> str:
    """The instruction's text line, or its repr when it cannot even be printed."""
    try:
        return format_instruction(instruction, names, summarize=True)
    except Exception:  # a forged instruction may hold values the printer refuses
        return f"{instruction.opcode}(...) of shape {instruction.shape} and dtype {instruction.dtype}"
