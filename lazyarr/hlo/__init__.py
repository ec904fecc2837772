"""The HLO IR: ops, interned instructions, computations, text form, verifier and evaluator."""

from . import ops  # noqa: F401  (registers every op)
from .evaluate import evaluate
from .instruction import (
    Instruction,
    Literal,
    Maker,
    bind,
    bound_buffer,
    chain_templates,
    constant,
    fresh_parameter,
    make,
    make_like,
    make_plain,
    make_through,
    node_template,
    remake,
    set_holder,
    set_lifted,
)
from .module import Computation, Module, post_order, replace_all, users_of
from .op import HloError, OpDef, all_ops, get

__all__ = [
    "Computation", "HloError", "Instruction", "Literal", "Maker", "Module", "OpDef", "all_ops",
    "bind", "bound_buffer", "chain_templates", "constant", "evaluate", "fresh_parameter", "get", "make", "make_like",
    "make_plain", "make_through", "node_template", "post_order", "remake", "replace_all", "set_holder",
    "set_lifted", "users_of",
]
