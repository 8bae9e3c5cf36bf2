"""Origami's ranking inside PyTorch Inductor's GEMM autotuning (max-autotune).

With `mode="max-autotune"` Inductor lowers a matmul to several candidate kernels (cuBLAS
through ATen, its Triton mm template at a list of configs, the persistent TMA template on
Hopper, ...), compiles every candidate and times them on the GPU. The configs come from
Inductor's own lists: about twenty by default, over a thousand with
`max_autotune_gemm_search_space="EXHAUSTIVE"`. `install()` puts an `InductorChoices`
handler in place (`torch._inductor.virtualized.V.set_choices_handler`) whose
`_finalize_template_configs` hook, which Inductor calls with the candidates before any of
them is compiled, scores every Triton candidate with origami's model and keeps the
`top_k` it predicts fastest: Inductor then compiles and times those (and ATen's cuBLAS
call, unless `keep_others=False`) instead of all. Which origami family prices which of
Inductor's templates is `TEMPLATE_FAMILIES`; a config the family does not hold (say
num_stages 5, or 2 warps, for the classic kernel) cannot be scored and is dropped.

    >>> from origami_gemm import inductor
    >>> handler = inductor.install(top_k=1)       # the GPU torch sees
    >>> f = torch.compile(lambda a, b: a @ b, mode="max-autotune-no-cudagraphs")
    >>> handler.log[-1]                           # what was kept, per GEMM

`uninstall()` puts Inductor's default handler back. The ranking itself,
`rank_candidates`, needs neither torch nor a GPU. Tested with PyTorch 2.10 and 2.11.
"""
import threading

__all__ = ["install", "uninstall", "rank_candidates", "config_text_of", "TEMPLATE_FAMILIES",
           "GEMM_OPS"]

# Inductor's template uid -> the origami family that models its kernel: the classic
# tutorial matmul (Inductor's mm template is that kernel, masked loads, GROUP_M ordering)
# and the persistent kernel with tensor descriptors.
TEMPLATE_FAMILIES = {
    "triton::mm": "triton",
    "triton::mm_persistent_tma": "triton-tma",
}
# Inductor op names whose candidates are ranked (others pass through untouched).
GEMM_OPS = ("mm", "addmm")


def config_text_of(kwargs):
    """origami's config text (`128x64x32,g8,w4,s3`) of an Inductor template's kwargs
    (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages), or None when one of the
    block sizes or the launch is missing."""
    try:
        bm, bn, bk = (int(kwargs[n]) for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        warps, stages = int(kwargs["num_warps"]), int(kwargs["num_stages"])
    except (KeyError, TypeError, ValueError):
        return None
    group = kwargs.get("GROUP_M")
    parts = [f"{bm}x{bn}x{bk}"]
    if group is not None:
        parts.append(f"g{int(group)}")
    parts += [f"w{warps}", f"s{stages}"]
    return ",".join(parts)


def rank_candidates(candidates, m, n, k, dtype, score, top_k):
    """Split Inductor's candidates into (kept, others, scored).

    candidates: (template uid, kwargs) pairs in Inductor's order; score(family, m, n, k,
    config text, dtype) -> predicted µs or an exception (origami cannot score it).
    kept: the indices of the `top_k` candidates origami predicts fastest, fastest first
    (ties in Inductor's order); others: the indices of the candidates of templates origami
    does not model; scored: (predicted µs, index, config text) of every scored candidate,
    fastest first. A candidate of a modelled template that cannot be scored is in none of
    kept and others (it is dropped)."""
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1 (got {top_k})")
    scored, others = [], []
    for i, (uid, kwargs) in enumerate(candidates):
        family = TEMPLATE_FAMILIES.get(uid)
        if family is None:
            others.append(i)
            continue
        text = config_text_of(kwargs)
        if text is None:
            continue
        try:
            us = float(score(family, m, n, k, text, dtype))
        except Exception:  # noqa: BLE001 - not in the family, infeasible: not scored
            continue
        if us == us and us > 0:  # a finite positive time (NaN fails the first test)
            scored.append((us, i, text))
    scored.sort()
    return [i for _, i, _ in scored[:top_k]], others, scored


class _Scorer:
    """One origami `Selector` per family, built on first use, shared by every GEMM."""

    def __init__(self, device, gpu, hw_file):
        self._args = {"device": device, "gpu": gpu, "hw_file": hw_file}
        self._selectors = {}
        self._lock = threading.Lock()

    def selector(self, family):
        from . import Selector

        with self._lock:
            sel = self._selectors.get(family)
            if sel is None:
                args = {key: v for key, v in self._args.items() if v is not None}
                sel = Selector(family=family, **args)
                self._selectors[family] = sel
            return sel

    def __call__(self, family, m, n, k, text, dtype):
        return self.selector(family).score(m, n, k, text, dtype)


def _choices_class():
    from torch._inductor.choices import InductorChoices

    class OrigamiChoices(InductorChoices):
        """Inductor's choices with origami ranking the GEMM templates' configs."""

        def __init__(self, top_k=1, keep_others=True, device="torch", gpu=None,
                     hw_file=None):
            super().__init__()
            if top_k < 1:
                raise ValueError(f"top_k must be at least 1 (got {top_k})")
            self.top_k = top_k
            self.keep_others = keep_others
            self.score = _Scorer(None if gpu or hw_file else device, gpu, hw_file)
            # one entry per GEMM ranked: shape, dtype, candidates, kept configs
            self.log = []

        def _finalize_template_configs(self, template_choices, kernel_inputs, templates,
                                       op_name, kwarg_overrides=None):
            if op_name not in GEMM_OPS or not hasattr(kernel_inputs, "mnk_hinted"):
                return super()._finalize_template_configs(
                    template_choices, kernel_inputs, templates, op_name, kwarg_overrides)
            choices = [(uid, c) for uid, gen in template_choices.items() for c in gen]
            m, n, k = (int(x) for x in kernel_inputs.mnk_hinted())
            dtype = kernel_inputs.dtype()
            candidates = [(uid, _params(c)) for uid, c in choices]
            kept, others, scored = rank_candidates(candidates, m, n, k, dtype, self.score,
                                                   self.top_k)
            if not kept:  # origami scored none: Inductor's own candidates, all of them
                self.log.append({"op": op_name, "m": m, "n": n, "k": k,
                                 "dtype": str(dtype), "candidates": len(choices),
                                 "scored": 0, "kept": None})
                return [c for _, c in choices]
            text = {i: t for _, i, t in scored}
            us = {i: u for u, i, _ in scored}
            self.log.append({
                "op": op_name, "m": m, "n": n, "k": k, "dtype": str(dtype),
                "candidates": len(choices), "scored": len(scored),
                "kept": [{"template": choices[i][0], "config": text[i],
                          "predicted_us": us[i]} for i in kept],
                "others_kept": [choices[i][0] for i in others] if self.keep_others else [],
            })
            keep = kept + (others if self.keep_others else [])
            return [choices[i][1] for i in sorted(keep)]

    return OrigamiChoices


def _params(choice):
    try:
        return dict(choice.params.to_kwargs())
    except Exception:  # noqa: BLE001 - a template whose params do not convert: unscored
        return {}


_previous = []


def install(top_k=1, keep_others=True, device="torch", gpu=None, hw_file=None):
    """Put an origami-ranking handler in Inductor's place and return it.

    top_k: the Triton candidates kept per GEMM (the best predicted first); keep_others:
    also keep the candidates of templates origami does not model (ATen's cuBLAS call,
    decompose-k, ...), so that Inductor still compares the pick against cuBLAS; device /
    gpu / hw_file: the hardware, as for `origami_gemm.Selector` (default: the GPU torch
    sees). Needs torch; scoring happens when Inductor lowers a GEMM."""
    from torch._inductor.virtualized import V

    handler = _choices_class()(top_k=top_k, keep_others=keep_others, device=device,
                               gpu=gpu, hw_file=hw_file)
    _previous.append(V.choices)
    V.set_choices_handler(handler)
    return handler


def uninstall():
    """Put back the handler that was in place before the last `install()` (Inductor's
    default if there was none)."""
    from torch._inductor.choices import InductorChoices
    from torch._inductor.virtualized import V

    V.set_choices_handler(_previous.pop() if _previous else InductorChoices())
