"""Triton's Hopper matmul: persistent programs, device-side tensor descriptors (TMA).

C[M, N] = A[M, K] @ B[N, K]^T with A and B row-major (B stored N x K, K contiguous),
fp16 or bf16 in, the same type out, fp32 accumulation.

- Descriptors are built on the device (`tl.make_tensor_descriptor`); Triton needs scratch
  global memory for them, which `matmul` provides through `triton.set_allocator`.
- Persistent: the grid is `min(num_programs, tiles)` programs and program `p` walks tiles
  `p, p + NUM_PROGRAMS, p + 2 * NUM_PROGRAMS, ...` in grouped order (GROUP_SIZE_M rows of
  tiles, M fastest inside a group), the order of Triton's persistent matmul tutorial.
- Switches (constexpr): WARP_SPECIALIZE and FLATTEN go to the tile loop's `tl.range`;
  EPILOGUE_SUBTILE stores C in two halves along N (half the epilogue's staging buffer).

`configs()` lists the space the project sweeps on Hopper; docs/triton-tma.md says which
of it compiles for sm_90a in Triton 3.6. `TmaConfig.text()` and `parse_text()` write and
read a config in the Rust model's text form (`Config`'s `Display` and `parse_config` in
crates/origami-core/src/model/problem.rs): `128x256x64,g8,w8,s3[,flatten][,warp_specialize][,epilogue_subtile]`.
"""
from dataclasses import asdict, dataclass
import itertools
import re

import triton
import triton.language as tl

# sm_90's shared memory per block (227 KiB): no config whose operand ring alone exceeds it
# can compile, so `configs()` leaves those out.
SM90_SHARED_BYTES = 232448
# The number of SMs of an H100 SXM: the default program count of the compile check.
H100_SMS = 132
DTYPE_BYTES = 2  # fp16 and bf16


@dataclass(frozen=True)
class TmaConfig:
    """One launch of the kernel, less the program count (`matmul`'s `num_programs`)."""
    BLOCK_SIZE_M: int
    BLOCK_SIZE_N: int
    BLOCK_SIZE_K: int
    GROUP_SIZE_M: int
    num_warps: int
    num_stages: int
    WARP_SPECIALIZE: bool = False
    FLATTEN: bool = False
    EPILOGUE_SUBTILE: bool = False

    def constexprs(self):
        """The kernel's constexpr arguments (everything but num_warps and num_stages)."""
        d = asdict(self)
        del d["num_warps"], d["num_stages"]
        return d

    def key(self):
        """A short, unique name, e.g. 128x256x64_g8_w8_s3_ws0_fl1_st0."""
        return (f"{self.BLOCK_SIZE_M}x{self.BLOCK_SIZE_N}x{self.BLOCK_SIZE_K}"
                f"_g{self.GROUP_SIZE_M}_w{self.num_warps}_s{self.num_stages}"
                f"_ws{int(self.WARP_SPECIALIZE)}_fl{int(self.FLATTEN)}"
                f"_st{int(self.EPILOGUE_SUBTILE)}")

    def text(self):
        """The Rust model's text form, e.g. 128x256x64,g8,w8,s3,flatten: the tile, group,
        warps and stages, then the switches that are on as whole words in the order of
        `SWITCH_WORDS`."""
        words = "".join(f",{w}" for w, field in SWITCH_WORDS.items() if getattr(self, field))
        return (f"{self.BLOCK_SIZE_M}x{self.BLOCK_SIZE_N}x{self.BLOCK_SIZE_K}"
                f",g{self.GROUP_SIZE_M},w{self.num_warps},s{self.num_stages}{words}")

    def operand_ring_bytes(self):
        """Shared memory of the A and B stages alone: a lower bound of the kernel's."""
        return (self.num_stages * (self.BLOCK_SIZE_M + self.BLOCK_SIZE_N)
                * self.BLOCK_SIZE_K * DTYPE_BYTES)


# The switches' words in the text form, in the order the Rust model prints them
# (`Switches::WORDS`), and the constexpr each one sets.
SWITCH_WORDS = {"flatten": "FLATTEN", "warp_specialize": "WARP_SPECIALIZE",
                "epilogue_subtile": "EPILOGUE_SUBTILE"}
_LETTERS = {"g": "GROUP_SIZE_M", "w": "num_warps", "s": "num_stages"}
_WHOLE = re.compile(r"[0-9]+")


def parse_text(text):
    """A TmaConfig from the Rust model's text form `BMxBNxBK,gG,wW,sS[,switch...]`: the
    `g`, `w`, `s` parts are optional (defaults g1, w4, s3, as `parse_config` in
    crates/origami-core/src/model/problem.rs) and the switches are the words of `SWITCH_WORDS`, in any order.
    Raises ValueError (one line) for anything else, or a config the kernel cannot take."""
    if not isinstance(text, str):
        raise ValueError(f"config must be text, got {type(text).__name__}")
    parts = text.strip().split(",")
    dims = re.split("[xX]", parts[0])
    if len(dims) != 3:
        raise ValueError(f"config '{text}': expected BMxBNxBK[,gG][,wW][,sS][,"
                         + "][,".join(SWITCH_WORDS) + "]")

    def num(s, what):
        s = s.strip()
        if not _WHOLE.fullmatch(s) or int(s) == 0:
            raise ValueError(f"config '{text}': {what} '{s}' is not a positive whole number")
        return int(s)
    fields = {"BLOCK_SIZE_M": num(dims[0], "BLOCK_M"), "BLOCK_SIZE_N": num(dims[1], "BLOCK_N"),
              "BLOCK_SIZE_K": num(dims[2], "BLOCK_K"), "GROUP_SIZE_M": 1, "num_warps": 4,
              "num_stages": 3}
    for p in parts[1:]:
        p = p.strip()
        if p in SWITCH_WORDS:
            fields[SWITCH_WORDS[p]] = True
        elif p[:1] in _LETTERS:
            fields[_LETTERS[p[0]]] = num(p[1:], _LETTERS[p[0]])
        else:
            raise ValueError(f"config '{text}': unknown part '{p}' (use gG, wW, sS, "
                             + ", ".join(SWITCH_WORDS) + ")")
    c = TmaConfig(**fields)
    try:
        _check_config(c)
    except ValueError as e:
        raise ValueError(f"config '{text}': {e}") from None
    return c


# The space the project sweeps on Hopper, one list per parameter:
BLOCK_M = (64, 128, 256)      # 64 = one wgmma warpgroup's rows; 256 = TMA's largest box side
BLOCK_N = (64, 128, 256)
BLOCK_K = (32, 64, 128)       # 32 fp16 = 64 B rows .. 128 fp16 = 256 B (two 128 B swizzles)
GROUP_M = (1, 8, 16)          # none, Triton's usual 8, a tall group (the model's phase 2
                              # picks among 1..16 and reads the group's L2 reuse)
NUM_WARPS = (4, 8)            # one or two warpgroups
NUM_STAGES = (2, 3, 4, 5)
SWITCHES = (False, True)      # each of WARP_SPECIALIZE, FLATTEN, EPILOGUE_SUBTILE


def configs(group_sizes=GROUP_M, shared_bytes=SM90_SHARED_BYTES):
    """Every config of the sweep: the product of the lists above (3 x 3 x 3 tiles x groups
    x warps x stages x the 8 switch settings), less those whose operand ring
    (stages x (BM + BN) x BK x 2 bytes) exceeds `shared_bytes`, which cannot compile.
    Nothing else is pruned: registers, spills and what the switches do are Triton's to
    say (scripts/triton/tma_ptxas_stats.py records them for sm_90a)."""
    out = []
    for bm, bn, bk, g, w, s, ws, fl, st in itertools.product(
            BLOCK_M, BLOCK_N, BLOCK_K, group_sizes, NUM_WARPS, NUM_STAGES,
            SWITCHES, SWITCHES, SWITCHES):
        c = TmaConfig(bm, bn, bk, g, w, s, ws, fl, st)
        if c.operand_ring_bytes() <= shared_bytes:
            out.append(c)
    return out


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr):
    """Grouped order: GROUP_SIZE_M rows of tiles at a time, M fastest inside a group."""
    tiles_per_group = GROUP_SIZE_M * num_pid_n
    first_m = (tile_id // tiles_per_group) * GROUP_SIZE_M
    rows = min(num_pid_m - first_m, GROUP_SIZE_M)
    in_group = tile_id % tiles_per_group
    return first_m + in_group % rows, in_group // rows


@triton.jit
def matmul_tma_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                 stride_am, stride_bn, stride_cm,
                                 BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                                 BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                                 NUM_PROGRAMS: tl.constexpr,
                                 WARP_SPECIALIZE: tl.constexpr, FLATTEN: tl.constexpr,
                                 EPILOGUE_SUBTILE: tl.constexpr):
    """C[M, N] = A[M, K] @ B[N, K]^T; every matrix K- or N-contiguous (last stride 1)."""
    out_ty = c_ptr.dtype.element_ty
    C_BLOCK_N: tl.constexpr = BLOCK_SIZE_N // 2 if EPILOGUE_SUBTILE else BLOCK_SIZE_N
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                       block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_SIZE_M, C_BLOCK_N])

    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_tiles = num_pid_m * num_pid_n
    k_steps = tl.cdiv(K, BLOCK_SIZE_K)

    # The epilogue recomputes its tile from a counter of its own rather than reusing the
    # loads' coordinates: a value shared by the prologue and the epilogue of a flattened,
    # pipelined loop is what Triton's persistent tutorial avoids as well.
    store_tile = pid - NUM_PROGRAMS
    for tile in tl.range(pid, num_tiles, NUM_PROGRAMS, flatten=FLATTEN,
                         warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _tile_coords(tile, num_pid_m, num_pid_n, GROUP_SIZE_M)
        row = pid_m * BLOCK_SIZE_M
        col = pid_n * BLOCK_SIZE_N
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for kk in range(k_steps):
            k0 = kk * BLOCK_SIZE_K
            a = a_desc.load([row, k0])   # out-of-bounds rows/columns read as zero
            b = b_desc.load([col, k0])
            acc = tl.dot(a, b.T, acc)

        store_tile += NUM_PROGRAMS
        pid_m, pid_n = _tile_coords(store_tile, num_pid_m, num_pid_n, GROUP_SIZE_M)
        row = pid_m * BLOCK_SIZE_M
        col = pid_n * BLOCK_SIZE_N
        if EPILOGUE_SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_SIZE_M, 2, C_BLOCK_N)), (0, 2, 1))
            left, right = tl.split(halves)
            c_desc.store([row, col], left.to(out_ty))           # TMA clips at M and N
            c_desc.store([row, col + C_BLOCK_N], right.to(out_ty))
        else:
            c_desc.store([row, col], acc.to(out_ty))


def _check(a, b):
    """One ValueError naming what TMA or the kernel cannot take."""
    import torch
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name} must be 2-D, got {t.dim()}-D of shape {tuple(t.shape)}")
        if t.dtype not in (torch.float16, torch.bfloat16):
            raise ValueError(f"{name} must be float16 or bfloat16, got {t.dtype}")
    if a.dtype != b.dtype:
        raise ValueError(f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise ValueError(f"a and b must be on one device, got {a.device} and {b.device}")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"K differs: a is {tuple(a.shape)} (M x K), b is {tuple(b.shape)} "
                         "(N x K)")
    if min(a.shape[0], b.shape[0], a.shape[1]) == 0:
        raise ValueError(f"empty problem: a {tuple(a.shape)}, b {tuple(b.shape)}")
    size = a.element_size()
    for name, t in (("a", a), ("b", b)):
        if t.stride(1) != 1:
            raise ValueError(f"{name} must be contiguous along K (stride(1) == 1 for TMA), "
                             f"got strides {tuple(t.stride())}")
        if (t.stride(0) * size) % 16:
            raise ValueError(f"{name}'s row stride must be a multiple of 16 bytes for TMA, "
                             f"got {t.stride(0)} elements x {size} B = {t.stride(0) * size} B "
                             f"(K a multiple of {16 // size} for a contiguous matrix)")
        if t.data_ptr() % 16:
            raise ValueError(f"{name}'s base address must be 16-byte aligned for TMA, "
                             f"got {t.data_ptr():#x}")
    if (b.shape[0] * size) % 16:
        raise ValueError(f"C's row stride must be a multiple of 16 bytes for TMA: N = "
                         f"{b.shape[0]} x {size} B; N must be a multiple of {16 // size}")


def _check_config(config):
    if not isinstance(config, TmaConfig):
        raise ValueError(f"config must be a TmaConfig, got {type(config).__name__}")
    for name in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"):
        v = getattr(config, name)
        if v < 16 or v > 256 or v & (v - 1):
            raise ValueError(f"{name} must be a power of two in 16..256 (a TMA box side), "
                             f"got {v}")
    if config.GROUP_SIZE_M < 1:
        raise ValueError(f"GROUP_SIZE_M must be >= 1, got {config.GROUP_SIZE_M}")
    if config.num_warps not in (1, 2, 4, 8, 16):
        raise ValueError(f"num_warps must be 1, 2, 4, 8 or 16, got {config.num_warps}")
    if config.num_stages < 1:
        raise ValueError(f"num_stages must be >= 1, got {config.num_stages}")


def _alloc(device):
    import torch

    def alloc(size, alignment, stream):  # scratch for device-side descriptors
        return torch.empty(size, device=device, dtype=torch.int8)
    return alloc


def default_programs(device):
    """The device's SM count (CUDA), else the H100's 132 (the interpreter on a CPU)."""
    import torch
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return H100_SMS


def matmul(a, b, config, num_programs=None):
    """C = A @ B^T for A (M x K) and B (N x K), fp16 or bf16, with one config.

    num_programs: the persistent programs' count (default: the device's SMs); the grid
    is min(num_programs, tiles). Raises ValueError for inputs TMA cannot take."""
    import torch
    _check(a, b)
    _check_config(config)
    if num_programs is None:
        num_programs = default_programs(a.device)
    if not isinstance(num_programs, int) or isinstance(num_programs, bool) or num_programs < 1:
        raise ValueError(f"num_programs must be a positive int, got {num_programs!r}")
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    triton.set_allocator(_alloc(a.device))
    tiles = triton.cdiv(M, config.BLOCK_SIZE_M) * triton.cdiv(N, config.BLOCK_SIZE_N)
    grid = (min(num_programs, tiles),)
    matmul_tma_persistent_kernel[grid](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
        NUM_PROGRAMS=num_programs, num_warps=config.num_warps,
        num_stages=config.num_stages, **config.constexprs())
    return c
