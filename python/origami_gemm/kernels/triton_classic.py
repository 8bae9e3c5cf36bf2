"""The classic Triton matmul the `triton` family models: the grouped-order tile kernel of
Triton's matrix-multiplication tutorial ("Matrix Multiplication", triton-lang.org
tutorials, 03-matrix-multiplication), in the layout the project sweeps.

C[M, N] = A[M, K] @ B[N, K]^T with A row-major and B stored N x K (K contiguous), fp32
accumulation, C in the input type. One program per output tile, programs walk the tiles
in groups of GROUP_SIZE_M rows of tiles (M fastest inside a group).

scripts/triton_sweep.py times this very kernel (it imports it from here), so the model's
constants and a launch by `origami_gemm.triton.matmul` describe the same code. M and
GROUP_SIZE_M are `do_not_specialize` (docs/triton.md and the sweep's docstring say why).
This module imports Triton but not origami_gemm's compiled extension.
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["M", "GROUP_SIZE_M"])
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                  GROUP_SIZE_M,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr):
    """C[M, N] (row-major, C's type) = A[M, K] (row-major) x B[N, K]^T (B K-contiguous)."""
    # Grouped launch order: GROUP_SIZE_M rows of tiles, M fastest inside a group.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    # A tile [BLOCK_M, BLOCK_K]; B tile [BLOCK_K, BLOCK_N] read from the N x K layout.
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[None, :] * stride_bn + offs_k[:, None]
    m_ok = offs_m[:, None] < M
    n_ok = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < k_left), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K

    # The sweep's fp16 C is this cast to fp16; a bf16 C gets bf16.
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, c, mask=m_ok & n_ok)


def _check(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"a and b must be 2-D (got {a.dim()}-D and {b.dim()}-D)")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a is {tuple(a.shape)} and b is {tuple(b.shape)}: "
                         "b is stored N x K, so both need K columns")
    if a.dtype != b.dtype:
        raise ValueError(f"a is {a.dtype} and b is {b.dtype}: one type for both")
    if a.stride(1) != 1 or b.stride(1) != 1:
        raise ValueError("a and b must be K-contiguous (row-major)")
    if a.device != b.device:
        raise ValueError(f"a is on {a.device} and b on {b.device}")


def matmul(a, b, config):
    """C = a @ b.T with the kernel: `a` is M x K, `b` N x K, both row-major, one type.

    `config` holds BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M, num_warps and
    num_stages (a dict such as `Pick.triton_kwargs()`); other keys are refused. Returns a
    new M x N tensor of the inputs' type.
    """
    import torch

    _check(a, b)
    known = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M",
             "num_warps", "num_stages"}
    unknown = set(config) - known
    if unknown:
        raise ValueError(f"config keys {sorted(unknown)} are not the classic kernel's "
                         f"(it takes {sorted(known)})")
    m, k = a.shape
    n = b.shape[0]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    bm, bn = config["BLOCK_SIZE_M"], config["BLOCK_SIZE_N"]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
                        config["GROUP_SIZE_M"],
                        BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=config["BLOCK_SIZE_K"],
                        num_warps=config["num_warps"], num_stages=config["num_stages"])
    return c
