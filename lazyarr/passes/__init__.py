"""Target-independent HLO passes (simplification, CSE, fusion, buffer assignment)."""
