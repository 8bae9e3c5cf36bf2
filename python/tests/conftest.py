"""The Python tests run on a CPU under Triton's interpreter: TRITON_INTERPRET=1 must be set
before triton is imported, and `python/` must be on sys.path (`import origami_gemm`)."""
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
