"""Kernels the project models and sweeps."""
