"""LLVM code generation shared by the CPU (and later GPU) backends, through llvmlite.

target.py holds target machines, the optimization pipeline and the process-wide JIT engine;
math.py holds vectorizable exp/log/tanh/sin/... emitters and the table of math functions by
HLO op name; elemental.py, loops.py and kernel.py turn fused computations into LLVM functions.
"""
