"""Producer -> consumer fusion groups over one computation (XLA's `InstructionFusion`).

Instructions are visited from the outputs toward the inputs (reverse post order). An
instruction some kernel or module output must read from memory ("materialized") and that the
policy finds fusible becomes the root of a new group, which then absorbs its producers while
the policy says yes. Producers are taken in decreasing post-order position, so when one is
considered all its users inside the group have already been decided: the users still outside
the group are final, and a producer with any is duplicated only if it is cheap.

A producer that some kernel did not absorb is materialized in turn and roots a group of its
own when it is visited; after the walk every fusible instruction runs inside some group.
Everything here is iterative: a 10^5-op chain becomes one group in linear time.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..hlo import Instruction
from ..hlo.op import INDEX_REMAP, OpDef
from .fusion_policy import FusionDecision, FusionPolicy
from .fusion_rows import RowIndices

Decision = tuple[str, str, FusionDecision]


@dataclass(eq=False)
class Group:
    """A root and the producers fused into it (by id), with the operands it reads from memory."""

    root: Instruction
    members: dict[int, Instruction] = field(default_factory=dict)
    inputs: dict[int, Instruction] = field(default_factory=dict)


@dataclass(eq=False)
class GraphFacts:
    """The computation's post order, positions, distinct users and module outputs."""

    order: list[Instruction]
    position: dict[int, int]
    users: dict[int, list[Instruction]]
    outputs: set[int]
    # id -> whether some user cannot fuse it (a dot reads it): asked per producer by every
    # group that reads it, so a parameter read by a loop's 200 steps is asked once, not 200 times.
    read_unfused: dict[int, bool] = field(default_factory=dict)
    # id -> whether it has several users, one a broadcast that repeats its elements (_stored_anyway)
    repeated_by_broadcast: dict[int, bool] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)  # id -> `name(node)`

    def has_unfusible_user(self, key: int, policy: FusionPolicy) -> bool:
        known = self.read_unfused.get(key)
        if known is None:
            known = self.read_unfused[key] = any(not policy.is_fusible(user) for user in self.users[key])
        return known

    @staticmethod
    def of(order: list[Instruction], outputs) -> GraphFacts:
        position = {id(node): index for index, node in enumerate(order)}
        users: dict[int, list[Instruction]] = {id(node): [] for node in order}
        for node in order:
            seen = set()
            for operand in node.operands:
                if id(operand) not in seen:
                    seen.add(id(operand))
                    users[id(operand)].append(node)
        return GraphFacts(order, position, users, {id(output) for output in outputs})

    def name(self, node: Instruction) -> str:
        """The node's name in the printed computation: `p<number>` or `<opcode>.<position>`
        (remembered: a loop's refusals and merge decisions name each node ~20 times)."""
        name = self.names.get(id(node))
        if name is None:
            if node.opcode == "parameter":
                name = f"p{node.attr('number')}"
            else:
                name = f"{node.opcode}.{self.position[id(node)]}"
            self.names[id(node)] = name
        return name


def form_groups(facts: GraphFacts, policy: FusionPolicy, decisions: list[Decision]) -> list[Group]:
    """Every fusion group of the computation, in the order their roots were visited.

    Each "no" a policy gives is appended to `decisions` (parameters as producers excepted:
    they are buffers, never fused).
    """
    needed = set(facts.outputs)
    copies: dict[int, int] = {}  # id -> how many groups hold a duplicated copy
    groups: list[Group] = []
    for node in reversed(facts.order):
        if id(node) not in needed:
            continue  # every user absorbed it; no kernel reads it from memory
        if node.opcode == "constant" or not policy.is_fusible(node):
            needed.update(id(operand) for operand in node.operands)
            continue
        group = _grow(node, facts, policy, copies, decisions)
        groups.append(group)
        needed.update(group.inputs)
    return groups


def _grow(root, facts: GraphFacts, policy: FusionPolicy, copies, decisions) -> Group:
    """Absorb producers into the group of `root`, nearest (highest position) first."""
    position, users = facts.position, facts.users
    group = Group(root, {id(root): root})
    reads = {id(root): 1}  # how many times the kernel reads each element of a member
    index_maps = {id(root): 1}  # at how many distinct index maps the kernel computes a member
    inside_users: dict[int, list[Instruction]] = {}  # operand id -> the members reading it
    # Members this kernel computes although other kernels compute them too (duplicated cheap
    # producers): their producers are recomputed with them, so they count as shared as well.
    copied: set[int] = set()
    frontier: list[tuple[int, int]] = []
    rows = RowIndices.of(root) if policy.row_reductions else None
    row_reductions = int(root.opcode == "reduce" and rows is not None and rows.shape is not None)
    _add_member(root, group, inside_users, frontier, position, rows)
    while frontier:
        _, key = heapq.heappop(frontier)
        producer = group.inputs[key]
        inside = inside_users[key]
        is_output = key in facts.outputs
        outside = len(users[key]) - len(inside) + int(is_output)
        if not outside and policy.shared_under_copies and any(id(user) in copied for user in inside):
            outside = 1  # computed in every kernel that holds a copy of its user
        producer_reads = max(reads[id(user)] * _element_reads(user, producer) for user in inside)
        per_row = rows is not None and rows.is_per_row(producer)
        if per_row:
            producer_reads = 1  # computed once per row (a row's reduction), or hoisted out of the row's loop
        producer_maps = _index_maps(inside, index_maps)
        stored_anyway = _stored_anyway(producer, key, facts, is_output, policy)
        decision = FusionDecision.yes()
        row_reduction = (per_row and not outside and rows.reduction_fits(producer)
                         and bool(policy.is_fusible(producer)))
        if row_reduction and row_reductions >= policy.max_row_reductions:
            decision = FusionDecision.no(
                f"the row kernel already computes {row_reductions} reductions per row (limit "
                f"{policy.max_row_reductions}: a loop's steps stay copies of one kernel)"
            )
        elif row_reduction and row_reductions and _reduces_a_next_step(producer, policy):
            decision = FusionDecision.no(
                "a second reduction of the row over a next step's values (expensive work on another "
                "reduction's result): each later phase of the row would compute that work again"
            )
        elif len(group.members) >= policy.max_instructions:
            decision = FusionDecision.no(
                f"the fusion already holds {len(group.members)} instructions (limit {policy.max_instructions}: "
                "larger kernels compile slower than they run faster)"
            )
        for consumer in inside if decision and not row_reduction else ():
            decision = policy.should_fuse(
                producer, consumer, users[key], users_outside_group=outside, is_output=is_output,
                reads_per_element=producer_reads, index_maps=producer_maps,
                stored_anyway=stored_anyway,
                on_shared_chain=_on_shared_chain(producer, users),
            )
            if not decision:
                break
        if decision and outside and copies.get(key, 0) >= policy.max_duplicates and not _broadcast_of_leaves(producer):
            decision = FusionDecision.no(
                f"producer {producer.opcode} has users outside the fusion and is already duplicated "
                f"into {copies.get(key, 0)} fusions (limit {policy.max_duplicates})"
            )
        if decision:
            count = len(group.inputs) - 1 + sum(
                1 for operand in _distinct(producer.operands)
                if id(operand) not in group.members and id(operand) not in group.inputs
            )
            if count > policy.max_operands:
                decision = FusionDecision.no(
                    f"fusion would take {count} operands (limit {policy.max_operands})"
                )
        if not decision:
            if producer.opcode != "parameter":
                decisions.append((facts.name(producer), facts.name(inside[-1]), decision))
            continue
        del group.inputs[key]
        group.members[key] = producer
        row_reductions += row_reduction
        reads[key] = producer_reads
        index_maps[key] = producer_maps
        if outside:
            copies[key] = copies.get(key, 0) + 1
            copied.add(key)
        _add_member(producer, group, inside_users, frontier, position, rows)
    return group


def _reduces_a_next_step(reduction: Instruction, policy: FusionPolicy) -> bool:
    """Whether `reduction` reduces a next step's values: ones computed with expensive work (a
    `tanh`, an `exp`, a division) from another reduction's result. A row kernel computes them in
    that reduction's phase and again in every later phase, so chained steps multiply the work (a
    loop's three steps in one kernel computed `tanh` six times). Softmax's `max(x / T)`,
    layernorm's `sum(x)` reduce what the kernel reads, whatever their work. The walk stops at
    reductions, leaves and unfusible instructions (past 256 nodes: a next step)."""
    stack, seen = list(reduction.operands), set()
    expensive = reads_a_reduction = False
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.opcode == "reduce":
            reads_a_reduction = True
            continue
        if node.opcode in ("parameter", "constant") or not policy.is_fusible(node):
            continue
        if len(seen) > 256:
            return True
        expensive = expensive or not policy.is_cheap(node)
        stack.extend(node.operands)
    return expensive and reads_a_reduction


def _broadcast_of_leaves(producer: Instruction) -> bool:
    """Whether `producer` is a constant, an iota or a broadcast of parameters or constants, as
    `0.2 * u` and `u[1:-1] = ...` in a loop make: a copy is one instruction over a buffer the
    kernel could read directly, so duplicating it into any number of kernels adds no chain of
    work, while storing it would make every kernel read a whole array where it reads one
    element (or a start index the code would otherwise know)."""
    return producer.opcode in ("broadcast", "iota", "constant") and all(
        operand.opcode in ("parameter", "constant") for operand in producer.operands)


def _add_member(node, group: Group, inside_users, frontier, position, rows: RowIndices | None) -> None:
    """Note `node` (already in `group.members`) as a reader of its operands; new operands
    join the group's inputs and the frontier (and learn the row indices it reads them at)."""
    if rows is not None:
        rows.add(node)
    for operand in _distinct(node.operands):
        key = id(operand)
        inside_users.setdefault(key, []).append(node)
        if key not in group.members and key not in group.inputs:
            group.inputs[key] = operand
            heapq.heappush(frontier, (-position[key], key))


def _distinct(operands):
    """Operands without repeats (x * x reads x once)."""
    if len(operands) < 2:
        return operands
    seen, result = set(), []
    for operand in operands:
        if id(operand) not in seen:
            seen.add(id(operand))
            result.append(operand)
    return result


def _index_maps(inside_users, index_maps) -> int:
    """At how many distinct index maps a producer is computed: elementwise users read it at
    their own index (the emitter computes it once per map they have), each remapping user
    (slice, pad, transpose, ...) at maps of its own. Interning makes equal remaps one user."""
    same_index = remapped = 0
    for user in inside_users:
        maps = index_maps[id(user)]
        if remapped_operands(user):
            remapped += maps
        elif maps > same_index:
            same_index = maps
    return same_index + remapped


def remapped_operands(instruction: Instruction) -> tuple[Instruction, ...]:
    """The operands `instruction` reads at other indices than its own: a slice's, transpose's,
    pad's data; a gather's, dynamic-slice's operand and a dynamic-update-slice's update (at
    positions known only at run time). Broadcasts and reshapes count as same-index reads."""
    remapped = _REMAPPED.get(instruction.op)
    if remapped is None:
        remapped = _REMAPPED[instruction.op] = _remapped_slice(instruction.op)
    return instruction.operands[remapped]


def _remapped_slice(op: OpDef) -> slice:
    """Which of an `op` node's operands remapped_operands gives (asked per node, many times
    by every fusion pass: answered per op)."""
    if op.name == "dynamic-update-slice":
        return slice(1, 2)
    if op.name == "pad":
        return slice(0, 1)  # the second operand is the fill value
    if op.name in ("gather", "dynamic-slice"):
        return slice(None)
    if op.has(INDEX_REMAP) and op.name not in ("broadcast", "reshape"):
        return slice(None)
    return slice(0, 0)


_REMAPPED: dict[OpDef, slice] = {}


def _element_reads(consumer: Instruction, producer: Instruction) -> int:
    """How many times `consumer` reads each element of its operand `producer` (at most)."""
    if consumer.opcode == "broadcast" and producer.size:
        return max(1, consumer.size // producer.size)
    return 1


def _stored_anyway(producer: Instruction, key: int, facts: GraphFacts, is_output: bool, policy: FusionPolicy) -> bool:
    """Whether `producer` will be written to memory whatever the kernel deciding now does: a
    module output, read by an op that cannot fuse it (a dot), or, with several users, read
    through a broadcast that repeats its elements (that kernel materializes it rather than
    recompute it per read: FusionPolicy.should_fuse)."""
    if is_output or facts.has_unfusible_user(key, policy):
        return True
    known = facts.repeated_by_broadcast.get(key)
    if known is None:
        users = facts.users[key]
        known = facts.repeated_by_broadcast[key] = len(users) > 1 and any(
            user.opcode == "broadcast" and user.ndim > producer.ndim for user in users)
    return known


def _on_shared_chain(producer: Instruction, users) -> bool:
    """Whether an operand of `producer` is a computed value with other users too: copying the
    producer into a kernel would copy that chain along (a loop's `v = v + dt * a`, each step's
    v read again by the next step and by another value)."""
    return any(
        operand.opcode not in ("parameter", "constant", "broadcast", "iota") and len(users[id(operand)]) > 1
        for operand in producer.operands
    )
