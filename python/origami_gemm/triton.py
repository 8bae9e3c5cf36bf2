"""Origami where Triton kernels are launched: a drop-in for `triton.autotune` that
launches origami's pick instead of timing every config, and ready matmuls that pick and
launch the project's two Triton kernels.

How the drop-in works, from Triton 3.6's `triton/runtime/autotuner.py` (`Autotuner.run`):
with more than one config, Triton keys a cache on the `key` arguments' values and the
tensor arguments' dtypes; on a new key it calls `prune_configs_by["early_config_prune"]`
(configs, the named positional arguments, the keyword arguments), then times every config
the prune left (even a single one) with `do_bench`, keeps the fastest and launches it;
later calls with the same key launch the cached config. `autotune` below passes an
early-prune function that keeps origami's pick for the call's M, N, K and dtype, and a
`do_bench` that does not run the kernel when one config is left, so the first call of a
shape compiles and launches the pick once, without benchmarking.

Triton is imported only when a function here is called.
"""
import threading

__all__ = ["autotune", "config_of", "config_text", "matmul", "pick_for", "default_selector"]

_SWITCHES = (("FLATTEN", "flatten"), ("WARP_SPECIALIZE", "warp_specialize"),
             ("EPILOGUE_SUBTILE", "epilogue_subtile"))
_LAUNCH = ("num_warps", "num_stages")

_selectors = {}
_selectors_lock = threading.Lock()


def default_selector(family="triton"):
    """A shared `Selector` for `family`: the GPU torch sees (`device="torch"`) when torch
    has CUDA, else origami's default preset (the interpreter on a CPU)."""
    from . import Selector

    with _selectors_lock:
        sel = _selectors.get(family)
        if sel is None:
            device = None
            try:
                import torch

                if torch.cuda.is_available():
                    device = "torch"
            except ImportError:
                pass
            sel = Selector(family=family, device=device)
            _selectors[family] = sel
        return sel


def config_of(pick, skip=(), names=None):
    """The `triton.Config` of a pick: its constexprs as kwargs, renamed by `names`
    (origami's name -> the kernel's) and less the names in `skip` (arguments the call
    passes itself), with num_warps and num_stages."""
    import triton

    names = names or {}
    kw = pick.triton_kwargs()
    launch = {k: kw.pop(k) for k in _LAUNCH}
    kw = {names.get(k, k): v for k, v in kw.items()}
    kw = {k: v for k, v in kw.items() if k not in set(skip)}
    return triton.Config(kw, num_warps=launch["num_warps"], num_stages=launch["num_stages"])


def config_text(config, names=None):
    """origami's text form (`128x128x64,g8,w4,s3[,flatten]...`) of a `triton.Config`, or
    None when it lacks a block size. `names` maps origami's kwarg names (BLOCK_SIZE_M,
    ..., GROUP_SIZE_M, FLATTEN, ...) to the kernel's own."""
    names = names or {}
    kw = config.kwargs
    try:
        bm, bn, bk = (kw[names.get(n, n)] for n in ("BLOCK_SIZE_M", "BLOCK_SIZE_N",
                                                    "BLOCK_SIZE_K"))
    except KeyError:
        return None
    parts = [f"{bm}x{bn}x{bk}"]
    group = kw.get(names.get("GROUP_SIZE_M", "GROUP_SIZE_M"))
    if group is not None:
        parts.append(f"g{group}")
    parts += [f"w{config.num_warps}", f"s{config.num_stages}"]
    parts += [word for key, word in _SWITCHES if kw.get(names.get(key, key))]
    return ",".join(parts)


def _matches(config, pick, names):
    """Whether a user's config is the pick (every kwarg the config names, and the launch)."""
    if config.num_warps != pick.num_warps or config.num_stages != pick.num_stages:
        return False
    want = pick.triton_kwargs()
    for key in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M",
                "FLATTEN", "WARP_SPECIALIZE", "EPILOGUE_SUBTILE"):
        own = names.get(key, key)
        if own in config.kwargs and key in want and config.kwargs[own] != want[key]:
            return False
        if key.startswith("BLOCK") and own not in config.kwargs:
            return False
    return True


def _dtype_of(named_args, kwargs, dtype_arg):
    if dtype_arg is not None:
        value = named_args.get(dtype_arg, kwargs.get(dtype_arg))
        return getattr(value, "dtype", value)
    for value in list(named_args.values()) + list(kwargs.values()):
        if hasattr(value, "dtype"):
            return value.dtype
    return "fp16"


def autotune(configs=None, key=("M", "N", "K"), family="triton", selector=None, gpu=None,
             dims=None, dtype_arg=None, names=None, **autotune_kwargs):
    """A drop-in for `@triton.autotune` that launches origami's pick, benchmarking nothing.

    configs: None, or your `triton.Config` list. None: the launch config is built from
        each shape's pick (its constexprs, less the arguments the call passes itself, and
        num_warps/num_stages). A list: the config equal to the pick is kept; if the pick is
        not in it, the config origami predicts fastest (`Selector.score`) is kept; if none
        of them can be scored, every config is timed as plain `triton.autotune` would.
    key: Triton's cache key (argument names); the dtypes of tensor arguments are added by
        Triton, so each new (M, N, K, dtype) asks origami once.
    family, gpu: the Selector built on first use when `selector` is None (the GPU torch sees
        when gpu is None and torch has CUDA).
    dims: the names of the M, N, K arguments (default: the first three of `key`).
    dtype_arg: the argument whose `.dtype` is the input type (default: the first
        argument that has one).
    names: origami kwarg name -> your kernel's (e.g. {"BLOCK_SIZE_M": "BM"}).
    autotune_kwargs: passed on to `triton.autotune` (reset_to_zero, pre_hook, ...).

    Raises OrigamiError at launch when origami cannot pick for the shape and configs is None.
    """
    import triton

    names = dict(names or {})
    dims = tuple(dims or tuple(key)[:3])
    if len(dims) != 3:
        raise ValueError(f"dims must name the M, N and K arguments, got {dims!r}")
    state = threading.local()
    user_do_bench = autotune_kwargs.pop("do_bench", None)
    own_configs = configs is None
    holder = {"selector": selector}

    def sel():
        if holder["selector"] is None:
            from . import Selector

            holder["selector"] = (Selector(family=family, gpu=gpu) if gpu is not None
                                  else default_selector(family))
        return holder["selector"]

    def prune(configs, named_args, **kwargs):
        state.single = False
        args = {**named_args, **kwargs}
        try:
            m, n, k = (int(args[d]) for d in dims)
        except KeyError as e:
            raise ValueError(f"origami_gemm.triton.autotune: no argument {e} "
                             f"(dims={dims})") from None
        dtype = _dtype_of(named_args, kwargs, dtype_arg)
        s = sel()
        if own_configs:
            pick = s.select(m, n, k, dtype)
            kept = [config_of(pick, skip=args, names=names)]
        else:
            try:
                pick = s.select(m, n, k, dtype)
                kept = [c for c in configs if _matches(c, pick, names)][:1]
            except ValueError:  # OrigamiError: no pick; score the configs instead
                kept = []
            if not kept:
                scored = []
                for c in configs:
                    text = config_text(c, names)
                    if text is None:
                        continue
                    try:
                        scored.append((s.score(m, n, k, text, dtype), len(scored), c))
                    except ValueError:
                        continue
                kept = [min(scored)[2]] if scored else list(configs)
        state.single = len(kept) == 1
        return kept

    def do_bench(kernel_call, quantiles):
        if getattr(state, "single", False):
            return [0.0 for _ in quantiles]
        if user_do_bench is not None:
            return user_do_bench(kernel_call, quantiles=quantiles)
        from triton.runtime import driver

        return driver.active.get_benchmarker()(kernel_call, quantiles=quantiles)

    if own_configs:
        # Two stand-ins so that Triton takes the keyed, pruned path (with one config it
        # launches that config for every shape); prune() always replaces them.
        configs = [triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)]
    return triton.autotune(configs=list(configs), key=list(key),
                           prune_configs_by={"early_config_prune": prune},
                           do_bench=do_bench, **autotune_kwargs)


def pick_for(a, b, family="triton-auto", selector=None):
    """origami's pick for `a @ b` (a: M x K, b: K x N)."""
    sel = selector if selector is not None else default_selector(family)
    m, k = a.shape
    n = b.shape[1]
    return sel.select(m, n, k, a.dtype)


def matmul(a, b, family="triton-auto", selector=None):
    """C = a @ b (a: M x K, b: K x N, torch semantics) with origami's pick and the
    project's Triton kernel for it: the tutorial kernel (`triton`, and `origami`/`seed`
    tiles) or the persistent tensor-descriptor kernel (`triton-tma`); `triton-auto`
    chooses per shape. `selector` (a Selector) overrides `family`. The kernels read B as
    N x K (K contiguous): `b.t()` is used as is when it is, else copied.

    Returns a new M x N tensor of a's type. Raises OrigamiError when origami cannot pick
    (e.g. a type the family does not run) and ValueError for bad tensors."""
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"a and b must be 2-D (got {a.dim()}-D and {b.dim()}-D)")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"a is {tuple(a.shape)} and b {tuple(b.shape)}: K differs")
    pick = pick_for(a, b, family, selector)
    a = a if a.stride(1) == 1 else a.contiguous()
    bt = b.t()
    if bt.stride(1) != 1:
        bt = bt.contiguous()
    if pick.kernel == "matmul_tma_persistent_kernel":
        from .kernels import triton_tma

        kw = pick.triton_kwargs()
        programs = kw.pop("NUM_PROGRAMS")
        return triton_tma.matmul(a, bt, triton_tma.TmaConfig(**kw), num_programs=programs)
    from .kernels import triton_classic

    return triton_classic.matmul(a, bt, pick.triton_kwargs())
