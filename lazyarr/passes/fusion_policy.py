"""Fusion policy: which instructions may share a kernel, and why not when they may not.

A backend supplies a `FusionPolicy` (CPU and GPU differ in what is cheap to recompute and how
many operands a kernel may take); the fusion pass asks it about every producer -> consumer
edge and records each answer. Every "no" is a `FusionDecision` carrying a reason a user can
read in `explain()`, e.g. "consumer is a dot (runs through BLAS)" or "producer exp has 3 users
and is expensive: fusing would compute it 3 times".

The CPU defaults follow XLA's `InstructionFusion`:

* fusible: elementwise ops, index remaps (broadcast, reshape, transpose, slice, reverse, pad,
  concatenate), iota, small constants, gather and dynamic-slice (remaps with data-dependent
  indices); reduce, argmax, argmin and cumulative only as a kernel's root;
* not fusible: dot (BLAS), custom-call (host), scatter, dynamic-update-slice, parameters,
  fusions, and constants of more than `max_constant_elements` elements (read from memory);
* cheap (may be duplicated into several kernels): index remaps, converts, constants, iota and
  the arithmetic a core does in a cycle; everything else (exp, divide, gather...) is expensive.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..hlo import Instruction
from ..hlo.op import ELEMENTWISE, INDEX_REMAP, REDUCTION
from ..shapes import elements_bound, is_symbolic_size


@dataclass(frozen=True)
class FusionDecision:
    """"yes", or "no" with a reason a user can read; truthy when the answer is yes.

    >>> bool(FusionDecision.no("consumer is a dot (runs through BLAS)"))
    False
    """

    fuse: bool
    reason: str = ""

    @staticmethod
    def yes() -> FusionDecision:
        return _YES

    @staticmethod
    def no(reason: str) -> FusionDecision:
        return FusionDecision(False, reason)

    def __bool__(self) -> bool:
        return self.fuse

    def __str__(self) -> str:
        return "yes" if self.fuse else f"no: {self.reason}"


_YES = FusionDecision(True, "")

# Ops that are never fused, with what a user should read about them (completing "... is ").
NOT_FUSIBLE = {
    "dot": "a dot (runs through BLAS)",
    "custom-call": "a custom-call (runs on the host)",
    "scatter": "a scatter (writes at data-dependent positions of a whole buffer)",
    "dynamic-update-slice": "a dynamic-update-slice (updates a whole buffer in place)",
    "parameter": "a parameter (a buffer given to the module)",
    "fusion": "a fusion already",
}

# Fusible ops without the ELEMENTWISE or INDEX_REMAP trait: remaps with data-dependent indices.
DATA_DEPENDENT_REMAPS = frozenset({"gather", "dynamic-slice"})

# Kernel roots only: fused into a consumer they would be recomputed for every output element.
ROOT_ONLY = frozenset({"reduce", "argmax", "argmin", "cumulative"})

# Elementwise ops a core does in about a cycle: duplicating them into several kernels costs less
# than a round trip through memory.
CHEAP_ELEMENTWISE = frozenset({
    "negate", "add", "subtract", "multiply", "compare", "select", "and", "or", "xor", "not",
    "convert", "abs", "maximum", "minimum", "clamp", "real", "imag", "conj", "complex", "sign",
    "floor", "ceil", "trunc", "is-nan", "is-inf", "is-finite", "signbit", "copysign",
    "shift-left", "shift-right", "iota", "constant",
})


@dataclass
class FusionPolicy:
    """What may be fused and duplicated; a backend supplies one (these are CPU defaults).

    `max_operands`: operands (buffers) one kernel may read; `max_instructions`: its size.
    `max_constant_elements`: larger constants stay in memory as operands. `max_duplicates`:
    how many kernels may each hold a copy of one cheap producer (bounds the work of
    duplication on long shared chains). `max_index_maps`: see below.
    `cheap` names the elementwise ops worth recomputing rather than storing.
    """

    max_operands: int = 32
    max_constant_elements: int = 8
    max_duplicates: int = 8
    # A kernel of more instructions compiles slower than it runs faster: LLVM's time grows
    # faster than linearly in straight-line code (a 5,000-op chain took 2 s, 20,000 took 30 s).
    # Long chains (a Python loop's unrolled steps) become several kernels of this size, which
    # the backend's kernel cache compiles once when the steps repeat.
    max_instructions: int = 256
    # Row reductions one row kernel may compute per row (softmax, layernorm and log-softmax take
    # two, one after the other). A loop whose step reduces rows (`u - u.mean(1, keepdims=True)`)
    # would otherwise fuse step after step into one kernel, a stage per step, of a size no other
    # kernel shares: 12 unrolled steps made one kernel that took 1.1 s to compile. Cut every two
    # reductions, the steps become copies of one kernel, which the kernel cache compiles once.
    max_row_reductions: int = 2
    # Distinct index maps at which one kernel may compute a cheap producer (each slice or
    # other remap reading it is one): a stencil reads its input at 5 offsets, so fusing step
    # after step would compute the first step 5**steps times per element.
    max_index_maps: int = 8
    # Cheap producers of at most this many elements are not duplicated into several kernels:
    # a copy saves no memory traffic worth having, and a chain of them (a loop's running
    # scalar, `b = b - lr * g`) would put the whole chain into every step's kernel.
    max_tiny_elements: int = 4096
    # Whether a producer read by a duplicated (copied) member counts as shared: then an
    # expensive one (`exp` under a copied `subtract`) is computed once, not once per copy.
    shared_under_copies: bool = True
    # Whether a reduction over trailing dimensions may be computed inside the kernel of a
    # consumer that reads it through a broadcast back over those dimensions (softmax's
    # `x - x.max(-1, keepdims=True)`): the kernel then walks rows, computing each row's
    # reductions before the row's elements (fusion_rows.RowIndices). The backend's
    # kernel emitter must support it (the CPU's does).
    row_reductions: bool = False
    cheap: frozenset[str] = field(default_factory=lambda: CHEAP_ELEMENTWISE)

    def is_fusible(self, instruction: Instruction) -> FusionDecision:
        """Whether `instruction` may run inside a fused kernel (as its root at least).

        A "no" reason completes "<role> is ...", e.g. "a dot (runs through BLAS)".
        """
        opcode = instruction.opcode
        if opcode in NOT_FUSIBLE:
            return FusionDecision.no(NOT_FUSIBLE[opcode])
        if opcode == "constant":
            if instruction.size > self.max_constant_elements:
                return FusionDecision.no(
                    f"a constant of {instruction.size} elements (stays in memory; limit "
                    f"{self.max_constant_elements} to inline)"
                )
            return FusionDecision.yes()
        opdef = instruction.op
        if (
            opdef.has(ELEMENTWISE) or opdef.has(INDEX_REMAP) or opcode in DATA_DEPENDENT_REMAPS
            or opcode in ROOT_ONLY
        ):
            return FusionDecision.yes()
        return FusionDecision.no(f"a {opcode} (no fusion rule for it)")

    def for_one_graph(self) -> FusionPolicy:
        """A copy whose `is_fusible` remembers its answer per node: one fusion pass asks it of
        a node from every group near it, several times per group (a loop's 50 unrolled steps:
        3,000 questions about 1,000 nodes). The answers hold the nodes, so use it for one pass."""
        policy = copy.copy(self)
        answers: dict[Instruction, FusionDecision] = {}
        ask = policy.is_fusible

        def is_fusible(instruction: Instruction) -> FusionDecision:
            answer = answers.get(instruction)
            if answer is None:
                answer = answers[instruction] = ask(instruction)
            return answer

        policy.is_fusible = is_fusible
        return policy

    def is_root_only(self, instruction: Instruction) -> bool:
        """Reductions and scans: fusible as a kernel's root, never into a consumer."""
        return instruction.opcode in ROOT_ONLY or (
            instruction.op.has(REDUCTION) and instruction.opcode not in NOT_FUSIBLE
        )

    def is_cheap(self, instruction: Instruction) -> bool:
        """Whether recomputing `instruction` in several kernels costs less than storing it."""
        opcode = instruction.opcode
        if opcode in DATA_DEPENDENT_REMAPS:
            return False  # a gather reads memory at random: recomputing it re-reads
        return instruction.op.has(INDEX_REMAP) or opcode in self.cheap

    def should_fuse(
        self,
        producer: Instruction,
        consumer: Instruction,
        users_of_producer: Sequence[Instruction],
        *,
        users_outside_group: int | None = None,
        is_output: bool = False,
        reads_per_element: int = 1,
        index_maps: int = 1,
        stored_anyway: bool = False,
        on_shared_chain: bool = False,
    ) -> FusionDecision:
        """Whether to compute `producer` inside the kernel of `consumer` (its user).

        `users_of_producer` are the producer's distinct users; `is_output` says it is also a
        module output (one more reader). `users_outside_group` counts the readers outside the
        consumer's kernel (default: all but the consumer): with any, fusing duplicates the
        producer, allowed only when it is cheap. `reads_per_element` is how many times the
        kernel reads each producer element (a broadcast reads one element many times):
        above 1 an expensive producer would be recomputed for each read. `index_maps` is how
        many distinct index maps the kernel computes the producer at (slices at several
        offsets): each is a recomputation, allowed up to `max_index_maps` for cheap producers.
        `stored_anyway`: the producer is written to memory whatever this kernel does (a module
        output, or read by an op that cannot fuse it, such as a dot). `on_shared_chain`: an
        operand of the producer is a computed value with other users (copying the producer
        would copy that chain too).
        """
        consumer_fusible = self.is_fusible(consumer)
        if not consumer_fusible:
            return FusionDecision.no(f"consumer is {consumer_fusible.reason}")
        producer_fusible = self.is_fusible(producer)
        if not producer_fusible:
            return FusionDecision.no(f"producer is {producer_fusible.reason}")
        if self.is_root_only(producer):
            return FusionDecision.no(
                f"producer is a {producer.opcode}: fusing it would recompute the reduction for "
                "every output element"
            )
        readers = len(users_of_producer) + int(is_output)
        if users_outside_group is None:
            users_outside_group = readers - 1
        if self.is_cheap(producer):
            elements = elements_bound(producer.shape)  # placeholder sizes: their size class's bound
            if (users_outside_group > 0 and elements is not None and elements <= self.max_tiny_elements
                    and producer.op.has(ELEMENTWISE) and producer.opcode != "constant"):
                return FusionDecision.no(
                    f"producer {producer.opcode} has {readers} users and at most {elements} elements: "
                    "materialized once rather than copied into each user's kernel"
                )
            if reads_per_element > 1 and producer.opcode == "concatenate":
                # Each read picks its operand (a compare and a select per operand, no vector
                # loads). k-means' `stack` of 5 centres under its 2000x5x4 distances: that kernel
                # took ~1.4x as long fused, the program 3.1-3.5 -> 2.9 ms materialized.
                return FusionDecision.no(
                    f"producer concatenate picks among {len(producer.operands)} operands for every element "
                    f"and this kernel reads each of its elements {_count(reads_per_element)} times (through a "
                    "broadcast): materialized once rather than picked per read"
                )
            if users_outside_group > 0 and reads_per_element > 1 and _reads_arrays(producer):
                # Through a broadcast the kernel computes each element many times; a chain
                # under it (a loop's running `x = x + dt * v`, read as x[None, :] - x[:, None])
                # would be recomputed per element read.
                return FusionDecision.no(
                    f"producer {producer.opcode} has users outside the fusion and this kernel reads "
                    f"each of its elements {_count(reads_per_element)} times (through a broadcast): "
                    "materialized once rather than recomputed per read"
                )
            if users_outside_group > 0 and stored_anyway and _reads_arrays(producer):
                # Reading the stored value costs no more than reading its operands, and a copy
                # would chain: `w = w - lr * g` feeding a dot every step of a loop would put all
                # earlier steps' updates into each step's kernel.
                return FusionDecision.no(
                    f"producer {producer.opcode} is stored anyway (a module output or read by an op "
                    "that cannot fuse it): its other users read it rather than compute it again"
                )
            if users_outside_group > 0 and on_shared_chain and _reads_arrays(producer):
                return FusionDecision.no(
                    f"producer {producer.opcode} has users outside the fusion and reads a value other "
                    "kernels read too: copying it would copy that chain (a loop's running value) into "
                    "every kernel"
                )
            if index_maps > self.max_index_maps and producer.opcode != "constant":
                return FusionDecision.no(
                    f"producer {producer.opcode} would be computed at {index_maps} index maps per element "
                    f"(read at several offsets, as in a stencil; limit {self.max_index_maps}): materialized"
                )
            return FusionDecision.yes()
        if index_maps > 1:
            return FusionDecision.no(
                f"producer {producer.opcode} is expensive and read at {index_maps} index maps (several "
                "offsets): fusing would compute it once per map"
            )
        if users_outside_group > 0:
            counted = " (one is a module output)" if is_output else ""
            return FusionDecision.no(
                f"producer {producer.opcode} has {readers} users{counted} and is expensive: "
                f"fusing would compute it {readers} times"
            )
        if reads_per_element > 1:
            return FusionDecision.no(
                f"producer {producer.opcode} is expensive and the kernel reads each of its "
                f"elements {_count(reads_per_element)} times (through {consumer.opcode}): fusing would "
                f"compute it {_count(reads_per_element)} times per element"
            )
        return FusionDecision.yes()


def _reads_arrays(producer: Instruction) -> bool:
    """Whether computing `producer` reads some array operand element by element (an
    elementwise op over a non-scalar value that is not a broadcast of a smaller one)."""
    return producer.op.has(ELEMENTWISE) and any(
        operand.ndim and operand.opcode not in ("broadcast", "constant", "iota") for operand in producer.operands
    )


def _count(reads: int) -> str:
    """A read count for a reason: placeholder sizes make it 'many' (symbolic_sizes.py)."""
    return "many" if is_symbolic_size(reads) else str(reads)
