"""DeadCodeEliminator: drop the called computations that nothing calls any more.

This pass is small because immutable graphs do most of dead-code elimination by themselves:
a computation is its outputs and what they reach, so an instruction no output uses is not
part of it (and, held weakly by the intern table, is freed once nothing references it).
What can go stale is `module.computations`: after fusion (or a pass that rewrites fusions
away) a fused computation may no longer be called by any `fusion` instruction. This pass
walks what the entry reaches, follows every attribute holding a Computation (fusion's
`computation`) transitively, and removes the computations it never met.
"""

from __future__ import annotations

from ..hlo.module import Computation, Module


class DeadCodeEliminator:
    """Remove the entries of `module.computations` that nothing reachable calls.

    >>> from lazyarr.hlo import make
    >>> import numpy as np
    >>> x = make("parameter", number=0, shape=(2,), dtype=np.dtype("float32"))
    >>> module = Module("m", Computation("main", (x,), (x,)),
    ...                 {"unused": Computation("unused", (x,), (make("negate", [x]),))})
    >>> DeadCodeEliminator().run(module), list(module.computations)
    (True, [])
    """

    name = "dce"

    def run(self, module: Module) -> bool:
        called = called_computations(module.entry)
        dead = [name for name in module.computations if name not in called]
        for name in dead:
            del module.computations[name]
        return bool(dead)


def called_computations(entry: Computation) -> dict[str, Computation]:
    """name -> Computation for every computation `entry` calls, directly or through others
    (by name: `module.computations` files each computation under its name)."""
    called: dict[str, Computation] = {}
    visited: set[int] = set()
    pending = [entry]
    while pending:
        computation = pending.pop()
        if id(computation) in visited:
            continue
        visited.add(id(computation))
        for instruction in computation.post_order():
            for _, value in instruction.attrs:
                if isinstance(value, Computation):
                    called[value.name] = value
                    pending.append(value)
    return called
