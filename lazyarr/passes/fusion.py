"""InstructionFusion: group the entry computation into kernels (`fusion` instructions).

    before                                   after
    p0 = f32[8] parameter(0)                 fused_computation.1 {
    p1 = f32[8] parameter(1)                   p0, p1 = parameters; add; exp
    add.2 = f32[8] add(p0, p1)                 ROOT reduce(exp), kind=sum
    exp.3 = f32[8] exp(add.2)                }
    reduce.4 = f32[] reduce(exp.3), ...      ENTRY: fusion(p0, p1), kind=input,
                                                    computation=fused_computation.1

Three steps, each in its own module:

1. producer -> consumer groups (`fusion_groups`): XLA's InstructionFusion over the entry,
   asking the backend's `FusionPolicy` about every edge;
2. multi-output merges (`fusion_siblings`): groups that read a common operand, or an
   expensive producer kept apart from its consumer, share one kernel launch;
3. here: each cluster becomes a fused Computation (`fused_computation.N`, parameters in the
   order the kernel first reads them) and one `fusion` instruction per output
   (`output_index`), and the entry is rebuilt over them. Parameters, constants too large to
   inline and unfusible instructions (dot, custom-call, scatter, dynamic-update-slice) stay
   in the entry; every fusible instruction runs inside some fusion.

Every decision is kept in `module.notes["fusion"]` (a `FusionReport`) for `explain()`. Every
walk is iterative: a 10^5-op elementwise chain becomes one fusion in about a second.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo import Computation, Instruction, Module, make, post_order, remake
from ..hlo.op import REDUCTION
from .cse import generic_sizes, structural_key, swappable, swapped
from .fusion_groups import Decision, GraphFacts, form_groups
from .fusion_policy import FusionDecision, FusionPolicy
from .fusion_siblings import Cluster, merge_siblings

__all__ = ["FusionDecision", "FusionPolicy", "FusionReport", "InstructionFusion"]

SHOWN_MEMBERS = 12  # members listed per fusion in the report before "... (n more)"


@dataclass
class FusionReport:
    """What fusion did: `groups` as (computation name, kind, [fused instruction names]) and
    `decisions` as (producer, consumer, FusionDecision). Producer -> consumer edges appear
    only when not fused; multi-output merges (between `fusion(...)` of their roots) appear
    either way. Names are those of the entry as printed before fusion (`exp.3`)."""

    groups: list[tuple[str, str, list[str]]] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"fusion: {len(self.groups)} fusion(s)"]
        for name, kind, members in self.groups:
            shown = ", ".join(members[:SHOWN_MEMBERS])
            more = f", ... ({len(members) - SHOWN_MEMBERS} more)" if len(members) > SHOWN_MEMBERS else ""
            lines.append(f"  {name} (kind={kind}): {shown}{more}")
        if self.decisions:
            lines.append("decisions:")
        for producer, consumer, decision in self.decisions:
            joined = " + " if producer.startswith("fusion(") else " -> "  # a multi-output merge
            lines.append(f"  {producer}{joined}{consumer}: {decision}")
        return "\n".join(lines)


class InstructionFusion:
    """The fusion pass; `policy` comes from the backend (CPU and GPU differ).

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''HloModule m
    ... ENTRY main {
    ...   p0 = f32[4] parameter(0)
    ...   exp.1 = f32[4] exp(p0)
    ...   ROOT reduce.2 = f32[] reduce(exp.1), dimensions={0}, kind=sum
    ... }''')
    >>> InstructionFusion(FusionPolicy()).run(module)
    True
    >>> [node.opcode for node in module.entry.post_order()]
    ['parameter', 'fusion']
    """

    name = "fusion"

    def __init__(self, policy: FusionPolicy | None = None):
        self.policy = policy if policy is not None else FusionPolicy()

    def run(self, module: Module) -> bool:
        """Fuse `module.entry`; True if any fusion was formed."""
        entry = module.entry
        facts = GraphFacts.of(entry.post_order(), entry.outputs)
        report = FusionReport()
        policy = self.policy.for_one_graph()
        groups = form_groups(facts, policy, report.decisions)
        if not groups:  # nothing fusible left (a second run): keep the report of the first
            module.notes.setdefault("fusion", report)
            return False
        module.notes["fusion"] = report
        clusters = merge_siblings(groups, facts, policy, report.decisions)
        taken = set(module.computations) | {entry.name}
        while True:  # drops outputs no one reads after a merge made them internal; rarely twice
            built = _build(entry, clusters, taken)
            used = _used_outputs(built.outputs)
            kept = [
                cluster for cluster, computation in zip(clusters, built.computations)
                if computation.name in used
            ]
            if len(kept) == len(clusters) and all(
                len(used[computation.name][1]) == len(computation.outputs)
                for computation in built.computations
            ):
                break
            for cluster, computation in zip(clusters, built.computations):
                indices = used.get(computation.name, (None, set()))[1]
                cluster.roots = [root for index, root in enumerate(cluster.roots) if index in indices]
            clusters = kept
        module.entry = Computation(entry.name, entry.parameters, built.outputs)
        for name, (called, _) in used.items():  # what the interned fusions call: equal to
            module.computations[name] = called  # this build's, identical unless built before
        report.groups = [
            (computation.name, _kind(cluster.roots), [facts.name(node) for node in fused])
            for cluster, computation, fused in zip(clusters, built.computations, built.fused)
        ]
        return True


@dataclass
class _Built:
    computations: list[Computation]
    fused: list[list[Instruction]]  # per computation, the entry instructions it computes
    outputs: tuple[Instruction, ...]


def _build(entry: Computation, clusters: list[Cluster], taken: set[str]) -> _Built:
    """Fused computations for `clusters` and the entry's outputs rebuilt over them."""
    computations, fused, inputs_of, fusion_of = [], [], [], {}
    counter = 0
    for index, cluster in enumerate(clusters):
        counter += 1
        while f"fused_computation.{counter}" in taken:
            counter += 1
        computation, order, inputs = _fused_computation(f"fused_computation.{counter}", cluster)
        computations.append(computation)
        fused.append(order)
        inputs_of.append(inputs)
        for output_index, root in enumerate(cluster.roots):
            fusion_of[id(root)] = (index, output_index)
    kinds = [_kind(cluster.roots) for cluster in clusters]
    mapping: dict[int, Instruction] = {}
    made: dict[int, list[Instruction]] = {}

    def dependencies(node):
        found = fusion_of.get(id(node))
        return inputs_of[found[0]] if found else node.operands

    stack = [(root, False) for root in reversed(entry.outputs)]
    while stack:  # iterative post order over kernels and unfused instructions
        node, ready = stack.pop()
        if id(node) in mapping:
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((operand, False) for operand in dependencies(node) if id(operand) not in mapping)
            continue
        found = fusion_of.get(id(node))
        if found is None:
            operands = tuple(mapping[id(operand)] for operand in node.operands)
            unchanged = operands == node.operands
            mapping[id(node)] = node if unchanged else remake(node, operands)
            continue
        index, output_index = found
        if index not in made:
            operands = [mapping[id(operand)] for operand in inputs_of[index]]
            called, kind = computations[index], kinds[index]
            made[index] = [
                make("fusion", operands, kind=kind, computation=called, output_index=number)
                for number in range(len(clusters[index].roots))
            ]
        mapping[id(node)] = made[index][output_index]
    return _Built(computations, fused, tuple(mapping[id(output)] for output in entry.outputs))


def _fused_computation(name: str, cluster: Cluster):
    """The cluster's members rebuilt over fresh parameters (one per operand read from memory,
    numbered in the order the kernel first reads them); returns (computation, the members it
    computes in post order, the operands)."""
    members = cluster.members
    order, _ = _members_and_inputs(cluster.roots, members, {})
    swaps = _local_swaps(order, members)
    order, inputs = _members_and_inputs(cluster.roots, members, swaps)
    mapping = {
        id(operand): make("parameter", number=number, shape=operand.shape, dtype=operand.dtype)
        for number, operand in enumerate(inputs)
    }
    for node in order:
        operands = tuple(mapping[id(operand)] for operand in node.operands)
        mapping[id(node)] = swapped(node, operands) if id(node) in swaps else remake(node, operands)
    parameters = tuple(mapping[id(operand)] for operand in inputs)
    outputs = tuple(mapping[id(root)] for root in cluster.roots)
    return Computation(name, parameters, outputs), order, inputs


def _members_and_inputs(roots, members, swaps) -> tuple[list[Instruction], list[Instruction]]:
    """Post order of the members under `roots`, and the operands read from memory in the
    order the kernel first reads them; the operands of nodes in `swaps` are read in the
    other order."""
    order: list[Instruction] = []
    inputs: list[Instruction] = []
    visited: set[Instruction] = set()  # the nodes themselves (identity hashing)

    def operands_of(node):
        return node.operands[::-1] if swaps and id(node) in swaps else node.operands

    for root in roots:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, operands_of(root), 0)]
        while stack:
            node, operands, next_operand = stack[-1]
            if next_operand < len(operands):
                stack[-1] = (node, operands, next_operand + 1)
                operand = operands[next_operand]
                if operand not in visited:
                    visited.add(operand)
                    if id(operand) in members:
                        stack.append((operand, operands_of(operand), 0))
                    else:
                        inputs.append(operand)
            else:
                stack.pop()
                order.append(node)
    return order, inputs


def _local_swaps(order, members) -> set[int]:
    """The members whose commutative operands to swap so that the kernel has one canonical
    form whatever the entry looks like around it: CSE orders operands by keys of their whole
    upstream graph, so two steps of a loop could spell one kernel in two ways (and miss the
    backend's kernel cache). Here the keys see only the kernel: its inputs by type, and
    placeholder sizes without the module's numbers for them."""
    keys: dict[int, bytes] = {}
    swaps: set[int] = set()
    for node in order:
        operand_keys = [
            keys[id(operand)] if id(operand) in members
            else f"input {operand.dtype.str} {generic_sizes(operand.shape)}".encode()
            for operand in node.operands
        ]
        canonical = node
        if swappable(node) and operand_keys[1] < operand_keys[0]:
            swaps.add(id(node))
            canonical, operand_keys = swapped(node, node.operands), operand_keys[::-1]
        keys[id(node)] = structural_key(canonical, operand_keys, any_sizes=True)
    return swaps


def _used_outputs(outputs) -> dict[str, tuple[Computation, set[int]]]:
    """Name of each computation fusions in the entry call -> (it, the output indices read).

    Keyed by name, not identity: `make` interns, so a fusion equal to one built before (an
    identical graph fused earlier) calls that build's equal Computation object."""
    used: dict[str, tuple[Computation, set[int]]] = {}
    for node in post_order(outputs):
        if node.opcode == "fusion":
            called = node.attr("computation")
            used.setdefault(called.name, (called, set()))[1].add(node.attr("output_index"))
    return used


def _kind(roots) -> str:
    """`input` when a root reduces (the loop runs over the reduced operand), else `loop`."""
    return "input" if any(root.op.has(REDUCTION) for root in roots) else "loop"

