"""Multi-output fusion: merge fusion groups that can share one kernel launch.

After producer -> consumer fusion, two clusters of groups merge when

* they are related: they read a common operand (siblings such as `sum(x)` and `sum(x * x)`,
  or the outputs of `la.eval(a, b)` reading the same inputs), or one reads an elementwise
  root of the other (a producer kept out of its consumer because it is expensive and has
  other users: it becomes an extra output of the consumer's kernel, as in softmax's
  `exp` feeding `sum`);
* their loops agree: loop roots of one shape, or reductions over the same operand shape and
  dimensions (a loop root whose shape is that operand shape fits the reduction's loop too);
* neither reads a reduction root of the other (it is complete only when the kernel ends);
* a reduction of every dimension (to a scalar) merges with reductions only: beside a loop it
  would run serially in the loop's kernel, where alone its kernel splits it over threads
  (split_reductions.py), and the loop's value would be computed in both loop nests;
* merging makes no cycle: no path leaves the pair and comes back into it;
* the merged kernel takes at most `max_operands` operands and holds at most
  `max_instructions` instructions (twice that when one reads several values the other
  computes: refusing would store each of them).

Each candidate pair's decision is recorded, yes or no. The candidates of a group are the
nearest earlier readers of its operands (a loop's unrolled steps all read one parameter: the
step before is the likely partner, and the walk to it is short). The dependency check walks the
graph of kernels and unfused instructions with an explicit stack, never below a floor position
no path to the pair can come from (`_Walk.floor`), within a total step budget so that huge
graphs stay linear (past it, pairs are left unmerged and the reason says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo import Instruction
from ..hlo.op import REDUCTION
from .fusion_groups import Decision, GraphFacts, Group, remapped_operands
from .fusion_policy import FusionDecision, FusionPolicy

CANDIDATES_PER_OPERAND = 8  # nearest earlier readers of one operand considered as siblings of each group
STEP_BUDGET = 200_000  # dependency-walk steps over the whole merge phase


@dataclass(eq=False)
class Cluster:
    """Groups sharing one kernel: their roots (the kernel's possible outputs), members and
    the operands they read from memory; `space` is the loop (shape, reduced dims or None)."""

    groups: list[Group]
    roots: list[Instruction]
    members: dict[int, Instruction]
    inputs: dict[int, Instruction]
    space: tuple
    # id -> (a value some member reads through a remap, that member), made when first asked
    # (`_read_through_remap`: each cluster is asked once per candidate pair, 7 pairs per kernel)
    remapped_reads: dict[int, tuple[Instruction, Instruction]] | None = None
    description: str | None = None  # `_describe`'s text, made when first asked (a cluster meets ~7 pairs)


def iteration_space(root: Instruction) -> tuple:
    """(shape the kernel loops over, reduced dimensions or None for a loop root)."""
    if root.op.has(REDUCTION):
        (operand,) = root.operands
        if root.opcode == "reduce":
            return operand.shape, ("reduce", tuple(root.attr("dimensions")))
        return operand.shape, (root.opcode, root.attr("dimension"))
    return root.shape, None


def group_space(group: Group) -> tuple:
    """A group's iteration space; a row kernel's (a loop root over rows whose reductions it
    computes first, fusion_rows.RowIndices.reduction_fits) is its reductions': so only loops of its
    shape and reductions of the same rows merge with it."""
    space = iteration_space(group.root)
    if space[1] is None:
        for member in group.members.values():
            if member.opcode == "reduce":
                return space[0], ("reduce", tuple(member.attr("dimensions")))
    return space


def merge_siblings(
    groups: list[Group], facts: GraphFacts, policy: FusionPolicy, decisions: list[Decision]
) -> list[Cluster]:
    """Clusters of `groups` (one each unless merged), ordered by their first root's position."""
    clusters = [
        Cluster([group], [group.root], dict(group.members), dict(group.inputs), group_space(group))
        for group in groups
    ]
    owner = {id(group.root): index for index, group in enumerate(groups)}  # root id -> cluster
    parent = list(range(len(clusters)))

    def find(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    readers: dict[int, list[int]] = {}
    budget = [STEP_BUDGET]
    spans: dict[int, tuple[int, int]] = {}  # merged cluster -> (lowest, highest) root position
    walk = _Walk(clusters, owner, find, facts.position, spans, budget,  # views of the state above, kept current
                 _group_ancestors(facts, groups, owner))
    ordered = sorted(range(len(groups)), key=lambda index: facts.position[id(groups[index].root)])
    for index in ordered:
        if budget[0] < 0:
            reason = f"stopped: dependency checks used their budget of {STEP_BUDGET} steps"
            decisions.append(("multi-output fusion", "the remaining fusions", FusionDecision.no(reason)))
            break
        candidates = []
        for key in groups[index].inputs:
            if key in owner:
                candidates.append(owner[key])  # producer -> consumer (multi-output)
            earlier = readers.setdefault(key, [])
            candidates.extend(reversed(earlier[-CANDIDATES_PER_OPERAND:]))  # the nearest: short walks
            earlier.append(index)
        tried = set()
        for candidate in candidates:
            first, second = find(candidate), find(index)
            if first == second or (first, second) in tried:
                continue
            tried.add((first, second))
            decision = _can_merge(clusters[first], clusters[second], walk, policy)
            if budget[0] < 0:
                break
            pair = (_describe(clusters[first], facts), _describe(clusters[second], facts))
            decisions.append((*pair, decision))
            if decision:
                parent[first] = second
                clusters[second] = _merged(clusters[first], clusters[second])
                positions = [facts.position[id(root)] for root in clusters[second].roots]
                spans.pop(first, None)
                spans[second] = (min(positions), max(positions))
    result = [clusters[index] for index in range(len(clusters)) if find(index) == index]
    for cluster in result:
        cluster.roots.sort(key=lambda root: facts.position[id(root)])
    result.sort(key=lambda cluster: facts.position[id(cluster.roots[0])])
    return result


def _merged(first: Cluster, second: Cluster) -> Cluster:
    members = {**first.members, **second.members}
    inputs = {
        key: node for key, node in (*first.inputs.items(), *second.inputs.items()) if key not in members
    }
    space = first.space if first.space[1] is not None else second.space
    return Cluster(first.groups + second.groups, first.roots + second.roots, members, inputs, space)


@dataclass(eq=False)
class _Walk:
    """What the dependency check walks: the clusters so far (`owner`: root id -> cluster,
    `find`: its current representative), node positions, and the merged clusters' spans."""

    clusters: list[Cluster]
    owner: dict[int, int]
    find: object
    position: dict[int, int]
    spans: dict[int, tuple[int, int]]
    budget: list[int]
    ancestors: dict[int, int] | None  # _group_ancestors: a quick test before walking

    def floor(self, lowest_target: int) -> int:
        """A position below which no value can depend on a target: the lowest target's, lowered
        past every merged cluster straddling it. A step to an operand goes down in position and
        a jump into a cluster reaches its inputs, below its highest root; so from below a floor
        no cluster straddles, every path stays below it."""
        floor, lowered = lowest_target, True
        while lowered:
            lowered = False
            for low, high in self.spans.values():
                if low < floor <= high:
                    floor, lowered = low, True
        return floor


def _can_merge(first, second, walk: _Walk, policy: FusionPolicy) -> FusionDecision:
    (first_shape, first_dims), (second_shape, second_dims) = first.space, second.space
    if first_shape != second_shape or None not in (first_dims, second_dims) and first_dims != second_dims:
        return FusionDecision.no(
            f"their loops differ ({_space_text(first.space)} vs {_space_text(second.space)})"
        )
    for whole, other in ((first, second), (second, first)):
        if _reduces_everything(whole.space) and other.space[1] is None:
            return FusionDecision.no(
                "a reduction of every dimension stays apart from loops (alone, its kernel splits "
                "into partials over threads; merged, it would run serially beside the loop)"
            )
    for reader, writer in ((first, second), (second, first)):
        for group in reader.groups:
            for key in group.inputs:
                node = writer.members.get(key)
                if node is not None and node.op.has(REDUCTION):
                    return FusionDecision.no(
                        f"one reads the {node.opcode} the other computes (complete only when its kernel ends)"
                    )
        remapped = _read_through_remap(reader, writer)
        if remapped is not None:
            value, remap = remapped
            return FusionDecision.no(
                f"one reads the other's {value.opcode} through a {remap.opcode} (at other indices: one "
                "kernel would compute it again per index map)"
            )
    merged = _merged(first, second)
    # Refusing a merge where one kernel reads several values the other computes stores each
    # of them (a loop's running value and a counter fed by it: one array per step), so such
    # a merge may make a kernel up to twice the size a group grows to on its own. (A long
    # chain cut into groups passes one value from each to the next: no reason to double.)
    read_across = {key for reader, writer in ((first, second), (second, first))
                   for group in reader.groups for key in group.inputs if key in writer.members}
    limit = policy.max_instructions * (2 if len(read_across) > 1 else 1)
    if len(merged.members) > limit:
        return FusionDecision.no(f"fusion would hold {len(merged.members)} instructions (limit {limit})")
    if len(merged.inputs) > policy.max_operands:
        return FusionDecision.no(
            f"fusion would take {len(merged.inputs)} operands (limit {policy.max_operands})"
        )
    roots = {id(root) for root in merged.roots}
    starts = list(merged.inputs.values())
    # The bit sets answer most pairs (a dependency found there is one the walk finds); the walk the rest.
    cycle = (walk.ancestors is not None and _depends_between_groups(starts, roots, walk)) or _reaches(
        starts, roots, walk, walk.floor(min(walk.position[key] for key in roots)))
    if cycle is None:
        return FusionDecision.no("the dependency check ran out of its step budget")
    if cycle:
        return FusionDecision.no("one depends on the other through a third kernel or instruction")
    return FusionDecision.yes()


def _reduces_everything(space: tuple) -> bool:
    """Whether an iteration space is a `reduce` over every dimension of its loop (a scalar)."""
    shape, dims = space
    return dims is not None and dims[0] == "reduce" and len(dims[1]) == len(shape) > 0


def _read_through_remap(reader: Cluster, writer: Cluster) -> tuple[Instruction, Instruction] | None:
    """(a value `writer` computes, the slice, pad, transpose or other remap of `reader` that
    reads it), if any: in one kernel the value would be computed again at the remapped
    indices (a stencil's producer, left out of its consumer for that reason, must not come
    back into it as an extra output)."""
    reads = reader.remapped_reads
    if reads is None:
        reads = reader.remapped_reads = {}
        for member in reader.members.values():
            for operand in remapped_operands(member):
                if id(operand) not in reader.members and operand.opcode != "constant":
                    reads.setdefault(id(operand), (operand, member))
    for key, found in reads.items():
        if key in writer.members:
            return found
    return None


MOST_NODES_FOR_ANCESTORS = 16_384  # bit sets of up to 16,384 bits each: at most ~16 MiB held


def _group_ancestors(facts: GraphFacts, groups: list[Group], owner: dict[int, int]) -> dict[int, int] | None:
    """id -> the positions (bits) of every value the node depends on in the graph of the fusion
    groups before any merge (a group root on its group's inputs, any other node on its operands,
    as `_reaches` steps), itself included; None for graphs too large to hold them. Merging only
    adds paths (a cluster's roots depend on all its groups' inputs), so a dependency found here
    is one `_reaches` would find: a loop's unrolled steps asked ~2,300 walks that each found one."""
    if len(facts.order) > MOST_NODES_FOR_ANCESTORS:
        return None
    position = facts.position
    ancestors: dict[int, int] = {}
    for node in facts.order:
        key = id(node)
        index = owner.get(key)
        producers = groups[index].inputs.values() if index is not None else node.operands
        bits = 1 << position[key]
        for producer in producers:
            bits |= ancestors[id(producer)]
        ancestors[key] = bits
    return ancestors


def _depends_between_groups(starts, targets: set[int], walk: _Walk) -> bool:
    """Whether a value in `starts` depends on one in `targets` in `_group_ancestors`' graph."""
    ancestors, position = walk.ancestors, walk.position
    reached = 0
    for node in starts:
        reached |= ancestors[id(node)]
    return any(reached >> position[key] & 1 for key in targets)


def _reaches(starts, targets: set[int], walk: _Walk, floor: int) -> bool | None:
    """Whether a value in `starts` depends on (or is) a value in `targets`; None if out of budget.
    Values below `floor` (`_Walk.floor`) are not walked: none of them can."""
    clusters, owner, find, budget, position = walk.clusters, walk.owner, walk.find, walk.budget, walk.position
    stack = [node for node in starts if position[id(node)] >= floor]
    seen_values = {id(node) for node in starts}
    seen_clusters = set()
    while stack:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        node = stack.pop()
        if id(node) in targets:
            return True
        if id(node) in owner:
            cluster_index = find(owner[id(node)])
            if cluster_index in seen_clusters:
                continue
            seen_clusters.add(cluster_index)
            producers = clusters[cluster_index].inputs.values()
        else:
            producers = node.operands
        for producer in producers:
            if id(producer) not in seen_values:
                seen_values.add(id(producer))
                if position[id(producer)] >= floor:
                    stack.append(producer)
    return False


def _describe(cluster: Cluster, facts: GraphFacts) -> str:
    if cluster.description is None:
        cluster.description = "fusion(" + ", ".join(facts.name(root) for root in cluster.roots) + ")"
    return cluster.description


def _space_text(space) -> str:
    shape, dims = space
    text = f"[{','.join(str(extent) for extent in shape)}]"
    if dims is None:
        return f"elementwise over {text}"
    return f"{dims[0]} of {text} over dimensions {dims[1]}"
