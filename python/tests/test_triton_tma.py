"""The persistent TMA matmul under Triton's interpreter (CPU): results against an fp32
reference on small shapes, every switch, the input checks and the config space."""
import os

import pytest
import torch

from origami_gemm.kernels import triton_tma
from origami_gemm.kernels.triton_tma import TmaConfig, configs, matmul

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("these tests need TRITON_INTERPRET=1 (CPU tensors, Triton's interpreter)",
                allow_module_level=True)


def _ref(a, b):
    return a.float() @ b.float().T


def _inputs(M, N, K, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(dtype)
    b = torch.randn(N, K, generator=g).to(dtype)
    return a, b


def _close(c, a, b):
    ref = _ref(a, b)
    assert c.dtype == a.dtype and c.shape == ref.shape
    # inputs are exact in fp16/bf16 and summed in fp32: the error is the output's rounding
    rel = 2 ** -8 if a.dtype == torch.float16 else 2 ** -6
    err = (c.float() - ref).abs()
    bound = rel * ref.abs() + 1e-2
    assert bool((err <= bound).all()), f"max error {err.max().item()} (bound {rel} rel)"


SMALL = TmaConfig(32, 32, 16, GROUP_SIZE_M=2, num_warps=4, num_stages=3)
SWITCHED = [
    TmaConfig(32, 32, 16, 2, 4, 3, WARP_SPECIALIZE=ws, FLATTEN=fl, EPILOGUE_SUBTILE=st)
    for ws in (False, True) for fl in (False, True) for st in (False, True)
]


SHAPES = [(64, 64, 64), (96, 80, 48), (1, 8, 8), (40, 24, 200)]


@pytest.mark.parametrize("shape", SHAPES)
def test_matches_reference(shape):
    a, b = _inputs(*shape, torch.float16)
    _close(matmul(a, b, SMALL, num_programs=3), a, b)


# Triton 3.6's interpreter keeps bfloat16 as 16-bit integers and its tl.dot multiplies those
# bit patterns (its debugging guide: no operations on bfloat16 under the interpreter). The
# bf16 path is checked by compiling it for sm_90a (scripts/triton/tma_ptxas_stats.py
# --dtype bf16) and on the device; strict, so that a fixed interpreter turns this red.
@pytest.mark.xfail(strict=True, reason="Triton 3.6's interpreter: tl.dot on bfloat16 bits")
@pytest.mark.parametrize("shape", SHAPES[:2])
def test_bf16_under_the_interpreter(shape):
    a, b = _inputs(*shape, torch.bfloat16)
    _close(matmul(a, b, SMALL, num_programs=3), a, b)


@pytest.mark.parametrize("config", SWITCHED, ids=lambda c: c.key())
def test_every_switch_setting(config):
    # M and N not multiples of the tile: TMA zero-fills the loads and clips the stores
    a, b = _inputs(96, 80, 48, torch.float16, seed=1)
    _close(matmul(a, b, config, num_programs=4), a, b)


@pytest.mark.parametrize("num_programs", [1, 2, 5, 12, 13, None])
@pytest.mark.parametrize("group", [1, 3, 8])
def test_persistent_walk_covers_every_tile_once(num_programs, group):
    # 3 x 4 = 12 tiles: fewer, as many and more programs than tiles; groups that do and do
    # not divide the 3 rows of tiles
    a, b = _inputs(96, 128, 32, torch.float16, seed=2)
    cfg = TmaConfig(32, 32, 32, group, 4, 2)
    _close(matmul(a, b, cfg, num_programs=num_programs), a, b)


def test_larger_tiles_and_subtile():
    a, b = _inputs(160, 192, 96, torch.float16, seed=3)
    cfg = TmaConfig(64, 128, 32, 8, 8, 4, WARP_SPECIALIZE=True, FLATTEN=True,
                    EPILOGUE_SUBTILE=True)
    _close(matmul(a, b, cfg), a, b)


def test_strided_rows_with_16_byte_pitch():
    # a view with a row pitch larger than K (still 16-byte aligned) is read through its stride
    big = torch.randn(64, 64).half()
    a = big[:, :40]
    _, b = _inputs(48, 40, 40, torch.float16, seed=4)
    _close(matmul(a, b, SMALL, num_programs=2), a, b)


def _bad(a, b, match, config=SMALL, **kw):
    with pytest.raises(ValueError, match=match):
        matmul(a, b, config, **kw)


def test_row_stride_not_16_bytes_is_refused():
    a = torch.randn(64, 66).half()[:, :64]       # pitch 66 x 2 = 132 B
    b = torch.randn(32, 64).half()
    _bad(a, b, r"a's row stride must be a multiple of 16 bytes .*132 B")


def test_k_not_multiple_of_8_is_refused():
    a, b = _inputs(32, 32, 20, torch.float16)     # 40 B rows
    _bad(a, b, r"multiple of 16 bytes.*K a multiple of 8")


def test_n_not_multiple_of_8_is_refused():
    a, b = _inputs(32, 12, 32, torch.float16)
    _bad(a, b, r"C's row stride.*N must be a multiple of 8")


def test_k_not_contiguous_is_refused():
    a = torch.randn(64, 32).half().T              # 32 x 64, stride (1, 32)
    b = torch.randn(16, 64).half()
    _bad(a, b, r"a must be contiguous along K")


def test_misaligned_base_is_refused():
    flat = torch.randn(32 * 64 + 1).half()
    a = flat[1:].view(32, 64)                     # base 2 bytes past an aligned one
    b = torch.randn(16, 64).half()
    _bad(a, b, r"a's base address must be 16-byte aligned")


@pytest.mark.parametrize("a,b,match", [
    (torch.randn(8, 8).float(), torch.randn(8, 8).float(), r"a must be float16 or bfloat16"),
    (torch.randn(8, 8).half(), torch.randn(8, 8).bfloat16(), r"a and b must have one dtype"),
    (torch.randn(8, 16).half(), torch.randn(8, 8).half(), r"K differs"),
    (torch.randn(2, 8, 8).half(), torch.randn(8, 8).half(), r"a must be 2-D"),
    (torch.randn(8, 8).half(), "b", r"b must be a torch.Tensor"),
    (torch.randn(0, 8).half(), torch.randn(8, 8).half(), r"empty problem"),
])
def test_bad_inputs_are_refused(a, b, match):
    _bad(a, b, match)


@pytest.mark.parametrize("config,match", [
    (TmaConfig(48, 32, 16, 1, 4, 2), r"BLOCK_SIZE_M must be a power of two"),
    (TmaConfig(32, 512, 16, 1, 4, 2), r"BLOCK_SIZE_N must be a power of two in 16..256"),
    (TmaConfig(32, 32, 16, 0, 4, 2), r"GROUP_SIZE_M must be >= 1"),
    (TmaConfig(32, 32, 16, 1, 3, 2), r"num_warps must be"),
    ({"BLOCK_SIZE_M": 32}, r"config must be a TmaConfig"),
])
def test_bad_configs_are_refused(config, match):
    a, b = _inputs(32, 32, 32, torch.float16)
    _bad(a, b, match, config=config)


@pytest.mark.parametrize("n", [0, -1, 2.0, True])
def test_bad_program_count_is_refused(n):
    a, b = _inputs(32, 32, 32, torch.float16)
    _bad(a, b, r"num_programs must be a positive int", num_programs=n)


def test_config_space():
    space = configs()
    keys = [c.key() for c in space]
    assert len(keys) == len(set(keys))
    full = 27 * 3 * 2 * 4 * 8
    assert len(space) == 4032 < full                # 144 tiles x stages pruned x 8 x 3 groups
    assert all(c.operand_ring_bytes() <= triton_tma.SM90_SHARED_BYTES for c in space)
    # the pruning is exact: what is left out cannot hold its operand ring in shared memory
    assert TmaConfig(256, 256, 128, 8, 8, 2).operand_ring_bytes() > triton_tma.SM90_SHARED_BYTES
    assert TmaConfig(256, 256, 64, 8, 8, 3) in space
    assert {c.GROUP_SIZE_M for c in space} == {1, 8, 16}
    assert {(c.WARP_SPECIALIZE, c.FLATTEN, c.EPILOGUE_SUBTILE) for c in space} == {
        (ws, fl, st) for ws in (False, True) for fl in (False, True) for st in (False, True)}
    assert {c.num_stages for c in space} == {2, 3, 4, 5}
    assert configs(group_sizes=(8,))[0].GROUP_SIZE_M == 8


def test_config_key_and_constexprs():
    c = TmaConfig(128, 256, 64, 8, 8, 3, FLATTEN=True)
    assert c.key() == "128x256x64_g8_w8_s3_ws0_fl1_st0"
    assert c.constexprs() == {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64,
                              "GROUP_SIZE_M": 8, "WARP_SPECIALIZE": False, "FLATTEN": True,
                              "EPILOGUE_SUBTILE": False}


# The compile check (scripts/triton/tma_ptxas_stats.py) as a process, without the
# interpreter: one config compiled for sm_90a agrees with the committed table.
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "triton", "tma_ptxas_stats.py")


def _stats(args, cache, interpret=False):
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    env["TRITON_CACHE_DIR"] = cache  # compile afresh, not from an earlier run's cache
    return subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True,
                          text=True, timeout=300)


def _rows(path):
    import csv
    with open(path) as f:
        f.readline()  # the comment naming the command
        return list(csv.DictReader(f))


def test_compile_check_matches_the_committed_table(tmp_path):
    out = tmp_path / "t.csv"
    key = "128x128x64_g8_w8_s3_ws0_fl1_st1"
    r = _stats([str(out), "--jobs", "1", "--only", key], str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr[-2000:]
    (row,) = _rows(out)
    assert row["status"] == "ok" and row["wgmma"] == "1" and row["tensormap_replace"] == "1"
    assert int(row["tma_copies"]) > 0 and row["spill_store_bytes"] == "0"
    shipped = [t for t in _rows(os.path.join(ROOT, "data", "triton_tma_sm90.csv"))
               if (t["bm"], t["bn"], t["bk"], t["w"], t["s"], t["ws"], t["flatten"],
                   t["subtile"]) == ("128", "128", "64", "8", "3", "0", "1", "1")]
    assert len(shipped) == 1
    for k in ("status", "regs", "shared_bytes", "tma_copies", "ws_split", "ptx_md5"):
        assert row[k] == shipped[0][k], k


def test_compile_check_refuses_the_interpreter_and_an_empty_listing(tmp_path):
    out = tmp_path / "t.csv"
    r = _stats([str(out)], str(tmp_path / "cache"), interpret=True)
    assert r.returncode != 0 and "unset TRITON_INTERPRET" in r.stderr
    r = _stats([str(out), "--only", "no-such-config"], str(tmp_path / "cache"))
    assert r.returncode != 0 and "no config in the listing matches --only" in r.stderr
    assert not out.exists()
