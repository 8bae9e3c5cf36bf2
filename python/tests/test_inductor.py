"""origami_gemm.inductor on a CPU: the ranking of Inductor's GEMM candidates, and the
handler's hook called with stand-ins for Inductor's candidates and inputs (Inductor
builds its Triton GEMM templates only for CUDA; the device run is in results/)."""
import pytest
import torch

from _ext import load

og = load()

from origami_gemm import inductor  # noqa: E402

GPU = "h100-sxm"


def test_config_text_of_inductor_kwargs():
    kw = {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4,
          "num_stages": 3, "EVEN_K": True, "ALLOW_TF32": False}
    assert inductor.config_text_of(kw) == "128x64x32,g8,w4,s3"
    del kw["GROUP_M"]
    assert inductor.config_text_of(kw) == "128x64x32,w4,s3"
    assert inductor.config_text_of({"BLOCK_M": 128, "num_warps": 4}) is None
    assert inductor.config_text_of({}) is None


def _fake_score(family, m, n, k, text, dtype):
    if "w2" in text:
        raise ValueError(f"config '{text}': not a feasible config")
    # larger tiles predicted faster; the family adds a fixed offset
    bm, bn, _ = (int(x) for x in text.split(",")[0].split("x"))
    return 1000.0 / (bm * bn) + (0.5 if family == "triton-tma" else 0.0)


def _kw(bm, bn, bk=32, w=4, s=3):
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w,
            "num_stages": s}


CANDIDATES = [
    ("aten::mm", {}),
    ("triton::mm", _kw(64, 64)),
    ("triton::mm", _kw(128, 128)),
    ("triton::mm", _kw(128, 128, w=2)),  # origami cannot score it
    ("triton::mm_persistent_tma", _kw(128, 128)),
    ("triton::mm", _kw(128, 64)),
    ("decompose_k", {"k_split": 4}),
]


def test_rank_keeps_the_fastest_predicted_and_passes_other_templates():
    kept, others, scored = inductor.rank_candidates(CANDIDATES, 512, 512, 512, "fp16",
                                                    _fake_score, top_k=2)
    assert kept == [2, 5]  # 128x128, then 128x64 (the persistent 128x128 pays +0.5)
    assert others == [0, 6]
    assert [i for _, i, _ in scored] == [2, 5, 1, 4]
    assert scored[0][2] == "128x128x32,g8,w4,s3"
    kept, _, _ = inductor.rank_candidates(CANDIDATES, 512, 512, 512, "fp16", _fake_score,
                                          top_k=100)
    assert kept == [2, 5, 1, 4]  # every scored one, the unscorable w2 config dropped


def test_rank_rejects_a_top_k_below_one():
    with pytest.raises(ValueError, match="top_k must be at least 1"):
        inductor.rank_candidates(CANDIDATES, 1, 1, 1, "fp16", _fake_score, top_k=0)


def test_rank_with_origami_orders_by_its_predictions():
    sel = {f: og.Selector(family=f, gpu=GPU) for f in ("triton", "triton-tma")}

    def score(family, m, n, k, text, dtype):
        return sel[family].score(m, n, k, text, dtype)

    cands = [("triton::mm", _kw(bm, bn, bk, w, s))
             for bm, bn, bk, w, s in [(64, 64, 32, 4, 3), (128, 128, 64, 4, 3),
                                      (128, 256, 64, 8, 3), (64, 128, 32, 4, 4),
                                      (32, 32, 16, 2, 1), (128, 64, 64, 4, 5)]]
    for m, n, k in [(4096, 4096, 4096), (16, 6144, 4096), (8192, 1024, 2048)]:
        kept, others, scored = inductor.rank_candidates(cands, m, n, k, torch.float16,
                                                        score, top_k=2)
        assert others == []
        want = sorted((sel["triton"].score(m, n, k, inductor.config_text_of(kw), "fp16"), i)
                      for i, (_, kw) in enumerate(cands)
                      if kw["num_warps"] != 2 and kw["num_stages"] in (2, 3, 4))
        assert [i for _, i, _ in scored] == [i for _, i in want]
        assert kept == [i for _, i in want[:2]]


class _Params:
    def __init__(self, kw):
        self.kw = kw

    def to_kwargs(self):
        return dict(self.kw)


class _Choice:
    def __init__(self, kw):
        self.params = _Params(kw)


class _Inputs:
    def __init__(self, m, n, k, dtype):
        self.shape = (m, n, k)
        self._dtype = dtype

    def mnk_hinted(self):
        return self.shape

    def dtype(self):
        return self._dtype


def _template_choices():
    groups = {}
    for uid, kw in CANDIDATES:
        groups.setdefault(uid, []).append(_Choice(kw))
    return {uid: iter(v) for uid, v in groups.items()}, groups


def test_handler_keeps_origamis_top_k_and_the_other_templates():
    handler = inductor._choices_class()(top_k=1, gpu=GPU)
    gens, groups = _template_choices()
    out = handler._finalize_template_configs(gens, _Inputs(4096, 4096, 4096, torch.float16),
                                             [], "mm")
    flat = [c for v in groups.values() for c in v]
    tritons = [c for uid, v in groups.items() if uid in inductor.TEMPLATE_FAMILIES for c in v]
    assert groups["aten::mm"][0] in out and groups["decompose_k"][0] in out
    kept_triton = [c for c in out if c in tritons]
    assert len(kept_triton) == 1 and len(out) == 3
    entry = handler.log[-1]
    assert (entry["m"], entry["n"], entry["k"], entry["candidates"]) == (4096, 4096, 4096,
                                                                          len(flat))
    assert entry["kept"][0]["config"] == inductor.config_text_of(kept_triton[0].params.kw)
    assert entry["kept"][0]["predicted_us"] > 0

    only = inductor._choices_class()(top_k=2, keep_others=False, gpu=GPU)
    gens, groups = _template_choices()
    out = only._finalize_template_configs(gens, _Inputs(333, 4096, 1024, torch.bfloat16), [],
                                          "addmm")
    assert len(out) == 2 and all(c in tritons or c in
                                 [x for v in groups.values() for x in v] for c in out)
    assert not any(c in groups["aten::mm"] for c in out)


def test_handler_leaves_other_ops_and_unscorable_gemms_to_inductor():
    handler = inductor._choices_class()(top_k=1, gpu=GPU)
    gens, groups = _template_choices()
    out = handler._finalize_template_configs(gens, _Inputs(64, 64, 64, torch.float16), [],
                                             "bmm")
    assert len(out) == len(CANDIDATES)
    assert handler.log == []
    # a GEMM of a type origami does not rank (fp64): nothing scored, all candidates kept
    gens, groups = _template_choices()
    out = handler._finalize_template_configs(gens, _Inputs(64, 64, 64, torch.float64), [],
                                             "mm")
    assert len(out) == len(CANDIDATES)
    assert handler.log[-1]["kept"] is None


def test_install_and_uninstall_swap_inductors_handler():
    from torch._inductor.virtualized import V

    before = V.choices
    handler = inductor.install(top_k=3, gpu=GPU)
    try:
        assert V.choices is handler and handler.top_k == 3
    finally:
        inductor.uninstall()
    assert V.choices is before
    with pytest.raises(ValueError, match="top_k must be at least 1"):
        inductor.install(top_k=0, gpu=GPU)
