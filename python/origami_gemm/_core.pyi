"""Type stubs of origami_gemm._core, the compiled half of origami_gemm (crates/origami-py)."""
from typing import Any, Iterable, Literal, Optional, Sequence, Tuple, Union, overload

DtypeLike = Union[str, Any]
"""A type name (fp16, bf16, fp8, fp32, ...) or any object whose str() is a torch dtype's
(torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float32)."""

DEFAULT_CACHE_SIZE: int
__version__: str

class OrigamiError(ValueError):
    """A bad input or a failed selection: str(e) is origami-select's one-line message."""

    exit_code: int
    """The exit code origami-select would return (2: bad input, 1: runtime failure)."""

class Pick:
    """One config picked (or ranked) for one GEMM shape, with its launch. Frozen; equal
    when every field is."""

    @property
    def m(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def dtype(self) -> str:
        """Canonical type name: fp16, bf16, fp8, fp32."""
    @property
    def family(self) -> str:
        """The family whose kernel the config is for (triton-auto: the member chosen)."""
    @property
    def kernel(self) -> Optional[str]:
        """The Triton kernel function's name, when the family is a Triton kernel."""
    @property
    def config(self) -> str:
        """The config as origami-select writes it: 128x256x64,g8,w8,s3[,flatten]..."""
    @property
    def block_m(self) -> int: ...
    @property
    def block_n(self) -> int: ...
    @property
    def block_k(self) -> int: ...
    @property
    def group_m(self) -> int: ...
    @property
    def num_warps(self) -> int: ...
    @property
    def num_stages(self) -> int: ...
    @property
    def warp_specialize(self) -> bool: ...
    @property
    def flatten(self) -> bool: ...
    @property
    def epilogue_subtile(self) -> bool: ...
    @property
    def split_k(self) -> int: ...
    @property
    def stream_k(self) -> bool: ...
    @property
    def swap(self) -> bool: ...
    @property
    def predicted_us(self) -> float: ...
    @property
    def predicted_cycles(self) -> float: ...
    @property
    def smem_bytes(self) -> int: ...
    @property
    def registers(self) -> Optional[int]: ...
    @property
    def grid(self) -> int:
        """Programs of the launch: one per tile, or min(SMs, tiles) when persistent."""
    @property
    def num_programs(self) -> Optional[int]:
        """NUM_PROGRAMS of a persistent kernel (the GPU's SMs), else None."""
    @property
    def kwargs(self) -> dict[str, Any]:
        """The launch's keyword arguments by the kernel's names (a new dict)."""
    def triton_kwargs(self) -> dict[str, Any]:
        """kernel[grid](..., **pick.triton_kwargs()): constexprs, num_warps, num_stages."""
    def __eq__(self, other: object) -> bool: ...

class Selector:
    """Picks GEMM configs for one GPU and one kernel family (or set), as origami-select.

    family: triton, triton-tma, triton-auto, origami, hopper, seed, auto. gpu: a preset name
    (preset_names()). hw_file: a hardware file (TRITONBLAS_HW_PARAMS's format). model:
    origami-select's --model. no_fitted: leave out the family's fitted constants (and its
    learned correction). no_correction: leave out the learned correction only
    (origami-select --no-correction, docs/correction.md). device: a dict of DeviceProps fields, or "torch"/"cuda" to read GPU 0 through
    torch.cuda.get_device_properties (origami_gemm._device documents the fields).
    cache_size: picks kept by the LRU cache of select() (0: none). calibration_only: the
    calibration-only tier (origami-select --calibration-only): the throughput model's
    constants from the measurements of the calibration in hw_file, nothing fitted.
    """

    def __init__(
        self,
        family: str = "triton",
        gpu: Optional[str] = None,
        hw_file: Optional[str] = None,
        model: str = "origami",
        no_fitted: bool = False,
        device: Union[None, str, dict[str, Any]] = None,
        cache_size: int = ...,
        calibration_only: bool = False,
        no_correction: bool = False,
    ) -> None: ...
    @property
    def family(self) -> str: ...
    @property
    def members(self) -> list[str]: ...
    @property
    def model(self) -> str: ...
    @property
    def notice(self) -> Optional[str]: ...
    @property
    def device(self) -> Optional[dict[str, Any]]: ...
    @property
    def hardware(self) -> dict[str, Any]:
        """name, source, the GPU description's fields, params, tiers, used_default_preset."""
    def select(self, m: int, n: int, k: int, dtype: DtypeLike = "fp16") -> Pick: ...
    def rank(self, m: int, n: int, k: int, dtype: DtypeLike = "fp16", top: int = 5) -> list[Pick]: ...
    def score(self, m: int, n: int, k: int, config: str, dtype: DtypeLike = "fp16") -> float: ...
    def explain(self, m: int, n: int, k: int, dtype: DtypeLike = "fp16") -> dict[str, Any]: ...
    @overload
    def select_batch(
        self, shapes: Iterable[Sequence[int]], dtype: DtypeLike = "fp16", errors: Literal["raise"] = "raise"
    ) -> list[Pick]: ...
    @overload
    def select_batch(
        self, shapes: Iterable[Sequence[int]], dtype: DtypeLike = "fp16", errors: Literal["none"] = ...
    ) -> list[Optional[Pick]]: ...
    def cache_info(self) -> dict[str, int]:
        """{"hits", "misses", "size", "capacity"} of the pick cache."""
    def cache_clear(self) -> None: ...

def preset_names() -> str:
    """The embedded presets' names, comma separated."""

def preset_matches(device_name: str) -> Optional[str]:
    """The preset origami-select takes for a device of this name, or None."""

def normalize_dtype(text: str) -> str:
    """A type name from a name or a torch dtype's str() (torch.float16 -> float16)."""

