"""origami: GEMM kernels and their configs (Python side)."""
