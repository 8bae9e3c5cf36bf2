"""origami_gemm.triton under Triton's interpreter (CPU): the ready matmuls against
torch.matmul, and the autotune drop-in launching origami's pick without benchmarking."""
import os

import pytest
import torch

from _ext import load

og = load()

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("these tests need TRITON_INTERPRET=1 (CPU tensors, Triton's interpreter)",
                allow_module_level=True)

import triton  # noqa: E402

from origami_gemm import triton as ogt  # noqa: E402
from origami_gemm.kernels.triton_classic import matmul_kernel  # noqa: E402

SHAPES = [(64, 64, 64), (100, 72, 48), (1, 128, 64), (33, 256, 40)]


def _inputs(m, n, k, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(m, k, generator=g).to(dtype), torch.randn(k, n, generator=g).to(dtype))


def _close(c, a, b):
    ref = torch.matmul(a.float(), b.float())
    assert c.dtype == a.dtype and c.shape == ref.shape
    rel = 2 ** -8 if a.dtype == torch.float16 else 2 ** -6
    err = (c.float() - ref).abs()
    assert bool((err <= rel * ref.abs() + 1e-2).all()), f"max error {err.max().item()}"


def _matmul(family, shape, dtype):
    m, n, k = shape
    a, b = _inputs(m, n, k, dtype)
    sel = og.Selector(family=family, gpu="h100-sxm")
    pick = ogt.pick_for(a, b, selector=sel)
    assert pick == sel.select(m, n, k, dtype)
    if family != "triton-auto":
        assert pick.family == family
    _close(ogt.matmul(a, b, selector=sel), a, b)


@pytest.mark.parametrize("family", ["triton", "triton-tma", "triton-auto"])
@pytest.mark.parametrize("shape", SHAPES)
def test_matmul_matches_torch(family, shape):
    _matmul(family, shape, torch.float16)


# As in test_triton_tma.py: Triton 3.6's interpreter keeps bfloat16 as 16-bit integers and
# its tl.dot multiplies those bit patterns, so bf16 results are checked on a GPU only; the
# strict xfail notices the day the interpreter gets them right.
@pytest.mark.xfail(strict=True, reason="Triton 3.6's interpreter: tl.dot on bfloat16 bits")
@pytest.mark.parametrize("family", ["triton", "triton-tma"])
def test_matmul_bf16_under_the_interpreter(family):
    _matmul(family, (64, 64, 64), torch.bfloat16)


def test_matmul_takes_a_transposed_b_and_the_default_selector():
    a, b = _inputs(64, 48, 32, torch.float16)
    bt_storage = b.t().contiguous()  # N x K storage, b = its transpose view
    _close(ogt.matmul(a, bt_storage.t()), a, b)
    _close(ogt.matmul(a, b, family="triton"), a, b)


def test_matmul_refuses_what_origami_cannot_pick():
    a, b = _inputs(64, 64, 60, torch.float16)  # K not a multiple of 8: no TMA
    with pytest.raises(og.OrigamiError, match="--family triton-tma"):
        ogt.matmul(a, b, family="triton-tma")
    with pytest.raises(ValueError, match="K differs"):
        ogt.matmul(a, b.t())


def _classic_grid(meta, m, n):
    return (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)


class Spy:
    """A do_bench that counts its calls and times nothing."""

    def __init__(self):
        self.calls = 0

    def __call__(self, kernel_call, quantiles):
        self.calls += 1
        kernel_call()
        return [1.0 + self.calls for _ in quantiles]


def _launch(tuned, a, b):
    m, k = a.shape
    n = b.shape[1]
    bt = b.t().contiguous()
    c = torch.empty(m, n, dtype=a.dtype)
    tuned[lambda meta: _classic_grid(meta, m, n)](a, bt, c, m, n, k, a.stride(0),
                                                  bt.stride(0), c.stride(0))
    return c


def test_autotune_launches_the_pick_without_benchmarking():
    sel = og.Selector(family="triton", gpu="h100-sxm")
    spy = Spy()
    tuned = ogt.autotune(key=["M", "N", "K"], selector=sel, do_bench=spy)(matmul_kernel)
    for m, n, k in [(64, 64, 64), (100, 72, 48), (64, 64, 64)]:
        a, b = _inputs(m, n, k, torch.float16)
        _close(_launch(tuned, a, b), a, b)
        pick = sel.select(m, n, k, "fp16")
        best = tuned.best_config
        assert best.kwargs == {"BLOCK_SIZE_M": pick.block_m, "BLOCK_SIZE_N": pick.block_n,
                               "BLOCK_SIZE_K": pick.block_k, "GROUP_SIZE_M": pick.group_m}
        assert (best.num_warps, best.num_stages) == (pick.num_warps, pick.num_stages)
    assert spy.calls == 0
    # Triton's cache answered the repeated shape: origami was asked for two shapes, each
    # once by the prune (the cache saw no hit from the autotuner).
    assert len(tuned.cache) == 2


def _config(bm, bn, bk, g, w, s):
    return triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                          "GROUP_SIZE_M": g}, num_warps=w, num_stages=s)


def test_autotune_keeps_the_pick_or_the_best_scored_of_the_given_configs():
    sel = og.Selector(family="triton", gpu="h100-sxm")
    m, n, k = 100, 72, 48
    pick = sel.select(m, n, k, "fp16")
    others = [_config(32, 32, 32, 8, 4, 3), _config(64, 64, 32, 8, 4, 2)]
    mine = _config(pick.block_m, pick.block_n, pick.block_k, pick.group_m, pick.num_warps,
                   pick.num_stages)
    spy = Spy()
    tuned = ogt.autotune(configs=others + [mine], selector=sel, do_bench=spy)(matmul_kernel)
    a, b = _inputs(m, n, k, torch.float16)
    _close(_launch(tuned, a, b), a, b)
    assert tuned.best_config is mine and spy.calls == 0

    tuned = ogt.autotune(configs=others, selector=sel, do_bench=spy)(matmul_kernel)
    _close(_launch(tuned, a, b), a, b)
    scores = [sel.score(m, n, k, ogt.config_text(c), "fp16") for c in others]
    assert tuned.best_config is others[scores.index(min(scores))] and spy.calls == 0


def test_autotune_times_configs_origami_cannot_score():
    sel = og.Selector(family="triton", gpu="h100-sxm")
    strangers = [_config(16, 16, 16, 1, 1, 9), _config(16, 16, 16, 1, 1, 8)]
    spy = Spy()
    tuned = ogt.autotune(configs=strangers, selector=sel, do_bench=spy)(matmul_kernel)
    a, b = _inputs(32, 32, 32, torch.float16)
    _close(_launch(tuned, a, b), a, b)
    assert spy.calls == 2


def test_config_text_round_trips_through_score():
    sel = og.Selector(family="triton-tma", gpu="h100-sxm")
    pick = sel.select(4096, 4096, 4096, "fp16")
    cfg = ogt.config_of(pick, skip=["NUM_PROGRAMS"])
    assert ogt.config_text(cfg) == pick.config
    assert "NUM_PROGRAMS" not in cfg.kwargs
    assert sel.score(4096, 4096, 4096, ogt.config_text(cfg)) > 0
