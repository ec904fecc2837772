"""Target-independent HLO passes (simplification, CSE, fusion, buffer assignment)."""

from .cse import CommonSubexpressionEliminator
from .dce import DeadCodeEliminator
from .default import default_pipeline
from .fold import ConstantFolder
from .pipeline import FixedPoint, Pass, Pipeline
from .simplify import AlgebraicSimplifier

__all__ = [
    "AlgebraicSimplifier", "CommonSubexpressionEliminator", "ConstantFolder", "DeadCodeEliminator",
    "FixedPoint", "Pass", "Pipeline", "default_pipeline",
]
