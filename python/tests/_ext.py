"""Shared by the tests of origami_gemm's compiled extension: import it, or skip (fail
when ORIGAMI_REQUIRE_EXT=1, as .ci/run sets it, so that CI cannot skip them silently);
find origami-select (ORIGAMI_SELECT, else the repository's target/release)."""
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REQUIRED = os.environ.get("ORIGAMI_REQUIRE_EXT") == "1"


def load():
    """The origami_gemm package with its extension."""
    try:
        import origami_gemm
        from origami_gemm import _core  # noqa: F401
    except ImportError as e:
        if REQUIRED:
            raise
        pytest.skip(f"origami_gemm's extension is not built ({e}); "
                    "maturin develop --release (at the repository root)",
                    allow_module_level=True)
    return origami_gemm


def cli():
    """Path of origami-select, or a skip (a failure under ORIGAMI_REQUIRE_EXT=1)."""
    path = os.environ.get("ORIGAMI_SELECT") or os.path.join(ROOT, "target", "release",
                                                            "origami-select")
    if not os.access(path, os.X_OK):
        if REQUIRED:
            pytest.fail(f"origami-select not found at {path} (cargo build --release)")
        pytest.skip(f"origami-select not built at {path}")
    return path
