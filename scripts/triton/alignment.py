"""Which variant Triton 3.6 compiles of the sweep's `matmul_kernel` for a shape: its
alignment class.

Triton specialises every integer argument that is not `do_not_specialize`: a value equal
to 1 becomes the constant 1, a multiple of 16 gets the attribute `tt.divisibility = 16`,
anything else neither (`get_int_specialization` in triton/backends/compiler.py and the
launcher's `specialize_impl`, Triton 3.6). Pointers from PyTorch's allocator are 256-byte
aligned and always carry the attribute. The kernel takes (a_ptr, b_ptr, c_ptr, M, N, K,
stride_am, stride_bn, stride_cm, GROUP_SIZE_M); M and GROUP_SIZE_M are not specialised,
and with contiguous operands stride_am = stride_bn = K and stride_cm = N. So a shape's
variant depends on N and K only:

  class    N % 16   K % 16   arguments without the attribute
  aligned  0        0        (none)
  n        != 0     0        N, stride_cm        (C's rows)
  k        0        != 0     K, stride_am, stride_bn   (A's and B's rows)
  nk       != 0     != 0     all five

N = 1 or K = 1 make those arguments the constant 1: a variant of their own (`spec_key`
tells it apart; the model treats it as the unaligned class of that dimension).
"""

# Positions of the kernel's arguments (matmul_kernel,
# python/origami_gemm/kernels/triton_classic.py).
A_PTR, B_PTR, C_PTR, ARG_M, ARG_N, ARG_K, STRIDE_AM, STRIDE_BN, STRIDE_CM = range(9)
POINTERS = (A_PTR, B_PTR, C_PTR)
N_ARGS = (ARG_N, STRIDE_CM)                # equal to N for a contiguous C
K_ARGS = (ARG_K, STRIDE_AM, STRIDE_BN)     # equal to K for contiguous A and B

CLASSES = ("aligned", "n", "k", "nk")
UNALIGNED = ("n", "k", "nk")


def _check(name, v):
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


def shape_class(n, k):
    """The alignment class of a problem with N columns and inner dimension K."""
    _check("N", n)
    _check("K", k)
    return {(True, True): "aligned", (False, True): "n", (True, False): "k",
            (False, False): "nk"}[(n % 16 == 0, k % 16 == 0)]


def divisible_args(cls):
    """Argument positions that carry tt.divisibility = 16 in the class's variant."""
    if cls not in CLASSES:
        raise ValueError(f"unknown alignment class {cls!r} (one of {', '.join(CLASSES)})")
    args = list(POINTERS)
    if cls in ("aligned", "k"):
        args += N_ARGS
    if cls in ("aligned", "n"):
        args += K_ARGS
    return tuple(sorted(args))


def divisibility_attrs(cls):
    """The `attrs` of triton.compiler.ASTSource for the class's variant."""
    return {(i,): [["tt.divisibility", 16]] for i in divisible_args(cls)}


def _spec(v):
    return "1" if v == 1 else ("D" if v % 16 == 0 else "")


def spec_key(n, k):
    """What Triton's launcher keys a compiled variant on, for N and K (contiguous
    operands): per dimension '1' (the constant), 'D' (multiple of 16) or '' (neither)."""
    _check("N", n)
    _check("K", k)
    return f"n{_spec(n)}_k{_spec(k)}"
