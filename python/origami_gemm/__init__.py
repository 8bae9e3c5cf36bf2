"""origami_gemm: origami's GEMM config selection for Python and Triton.

Pick the tile config of a GEMM for an NVIDIA GPU from an analytical model, without
autotuning: the same picks as the `origami-select` command-line tool, from a compiled
extension (`origami_gemm._core`, Rust, built with maturin from crates/origami-py).

    >>> import origami_gemm
    >>> sel = origami_gemm.Selector(family="triton-tma", gpu="h100-sxm")
    >>> pick = sel.select(4096, 4096, 4096, "fp16")
    >>> pick.config, pick.triton_kwargs()

`Selector`, `Pick`, `OrigamiError` come from the extension and are loaded on first use,
so that the pure-Python kernels (`origami_gemm.kernels`) import without it.
`origami_gemm.triton` has the Triton drop-in for `triton.autotune` and ready `matmul`s;
`origami_gemm.inductor` ranks PyTorch Inductor's max-autotune GEMM candidates.
docs/python.md is the guide.
"""

__all__ = ["Selector", "Pick", "OrigamiError", "preset_names", "DEFAULT_CACHE_SIZE"]

_FROM_CORE = {"Selector", "Pick", "OrigamiError", "preset_names", "DEFAULT_CACHE_SIZE",
              "normalize_dtype"}


def __getattr__(name):
    """Load the compiled extension's names on first use (PEP 562)."""
    if name in _FROM_CORE:
        from . import _core

        return getattr(_core, name)
    raise AttributeError(f"module 'origami_gemm' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_FROM_CORE))
