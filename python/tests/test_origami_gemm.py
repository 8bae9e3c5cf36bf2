"""origami_gemm's Selector against origami-select: the same pick for every shape of
data/seed_shapes.csv and data/llm_shapes.csv, every family, fp16 and bf16, single and
batched; the same one-line messages for bad inputs; the pick cache; dtype objects."""
import csv
import io
import os
import subprocess

import pytest

from _ext import ROOT, cli, load

og = load()

FAMILIES = ["triton", "triton-tma", "triton-auto", "origami", "hopper", "seed", "auto"]
SHAPE_FILES = ["data/seed_shapes.csv", "data/llm_shapes.csv"]
GPU = "h100-sxm"
CONFIG_COLUMNS = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M",
                  "num_warps", "num_stages"]
SWITCHES = {"WARP_SPECIALIZE": "warp_specialize", "FLATTEN": "flatten",
            "EPILOGUE_SUBTILE": "epilogue_subtile"}


def run_cli(*args):
    return subprocess.run([cli(), *args], capture_output=True, text=True, cwd=ROOT)


def cli_rows(path, family, dtype, top=None):
    """origami-select's CSV rows for a shape file, or its error line."""
    extra = ["--top", str(top)] if top else []
    r = run_cli("--shapes", path, "--family", family, "--gpu", GPU, "--dtype", dtype,
                "--format", "csv", *extra)
    if r.returncode != 0:
        return None, r
    return list(csv.DictReader(io.StringIO(r.stdout))), r


def shapes_of(path):
    with open(f"{ROOT}/{path}") as f:
        lines = [line for line in f if not line.startswith("#")]
    return [(int(r["M"]), int(r["N"]), int(r["K"])) for r in csv.DictReader(lines)]


def same_pick(row, pick):
    for col in CONFIG_COLUMNS:
        attr = {"BLOCK_SIZE_M": "block_m", "BLOCK_SIZE_N": "block_n",
                "BLOCK_SIZE_K": "block_k", "GROUP_SIZE_M": "group_m"}.get(col, col)
        assert int(row[col]) == getattr(pick, attr), (col, row, pick)
    for col, attr in SWITCHES.items():
        if col in row:
            assert (row[col].lower() in ("1", "true")) == getattr(pick, attr), (col, row)
    if "SPLIT_K" in row:
        assert int(row["SPLIT_K"]) == pick.split_k, (row, pick)
        assert (row["STREAM_K"].lower() == "true") == pick.stream_k, (row, pick)
        assert (row["SWAP"].lower() == "true") == pick.swap, (row, pick)
    else:
        assert (pick.split_k, pick.stream_k, pick.swap) == (1, False, False)
    if "family" in row:
        assert row["family"] == pick.family
    assert row["predicted_us"] == f"{pick.predicted_us:.3f}", (row, pick)
    assert row["predicted_cycles"] == f"{pick.predicted_cycles:.1f}", (row, pick)
    assert row["dtype"] == pick.dtype


def error_line(r):
    line = r.stderr.strip().splitlines()[-1]
    prefix = "origami-select: error: "
    assert line.startswith(prefix), line
    return line[len(prefix):]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("path", SHAPE_FILES)
def test_picks_equal_the_cli(family, dtype, path):
    sel = og.Selector(family=family, gpu=GPU)
    shapes = shapes_of(path)
    rows, r = cli_rows(path, family, dtype)
    if rows is None:
        # The CLI refuses the whole batch: the Python batch refuses it with the same line.
        with pytest.raises(og.OrigamiError) as e:
            sel.select_batch(shapes, dtype)
        assert error_line(r) in str(e.value)
        assert e.value.exit_code == r.returncode
        return
    assert [(int(x["M"]), int(x["N"]), int(x["K"])) for x in rows] == shapes
    batch = sel.select_batch(shapes, dtype)
    for row, (m, n, k), b in zip(rows, shapes, batch):
        single = sel.select(m, n, k, dtype)
        same_pick(row, single)
        assert b == single


@pytest.mark.parametrize("family", ["triton", "triton-tma", "origami"])
def test_rank_equals_the_cli_top(family):
    sel = og.Selector(family=family, gpu=GPU)
    rows, r = cli_rows("data/seed_shapes.csv", family, "fp16", top=3)
    assert rows is not None, r.stderr
    for row in rows:
        ranked = sel.rank(int(row["M"]), int(row["N"]), int(row["K"]), "fp16", top=3)
        same_pick(row, ranked[int(row["rank"]) - 1])


def same_document(a, b, path="$"):
    """Two JSON documents equal, their floats to 1e-12 relative: the extension and the CLI
    are compiled apart, and the last bit of a float can differ between the two builds of the
    same arithmetic (seen: a triton-auto entrant's compared time, 30.887072913168097 against
    30.887072913168094)."""
    import math

    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), path
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0), f"{path}: {a} != {b}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            same_document(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same_document(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def test_same_document_tolerates_only_a_floats_last_bits():
    same_document({"a": [1, 30.887072913168097]}, {"a": [1, 30.887072913168094]})
    for other in ({"a": [1, 30.8871]}, {"a": [2, 30.887072913168097]},
                  {"b": [1, 30.887072913168097]}, {"a": [1]}):
        with pytest.raises(AssertionError):
            same_document({"a": [1, 30.887072913168097]}, other)


def test_a_single_pick_is_the_cli_json_and_explain_its_document():
    import json

    sel = og.Selector(family="triton-auto", gpu=GPU)
    r = run_cli("1", "6144", "4096", "--family", "triton-auto", "--gpu", GPU, "--explain",
                "--format", "json")
    assert r.returncode == 0, r.stderr
    same_document(sel.explain(1, 6144, 4096), json.loads(r.stdout))
    r = run_cli("4096", "4096", "4096", "--family", "triton-tma", "--gpu", GPU,
                "--format", "triton")
    launch = json.loads(r.stdout)
    pick = og.Selector(family="triton-tma", gpu=GPU).select(4096, 4096, 4096)
    assert launch["kwargs"] == pick.kwargs == pick.triton_kwargs()
    assert launch["kernel"] == pick.kernel and launch["grid"] == [pick.grid]


BAD = [
    # (Selector kwargs, select args, CLI args)
    ({"family": "nope"}, None, ["64", "64", "64", "--family", "nope"]),
    ({"gpu": "x999"}, None, ["64", "64", "64", "--gpu", "x999"]),
    ({"model": "bogus"}, None, ["64", "64", "64", "--model", "bogus"]),
    ({"family": "triton-tma"}, (4096, 4096, 4100, "fp16"),
     ["4096", "4096", "4100", "--family", "triton-tma"]),
    ({}, (0, 64, 64, "fp16"), ["0", "64", "64"]),
    ({}, (64, 64, 64, "int3"), ["64", "64", "64", "--dtype", "int3"]),
    ({}, (64, 64, 64, "int8"), ["64", "64", "64", "--dtype", "int8"]),
    ({}, (64, 64, 3_000_000_000, "fp16"), ["64", "64", "3000000000"]),
]


@pytest.mark.parametrize("kwargs,args,cli_args", BAD)
def test_bad_inputs_raise_the_cli_message(kwargs, args, cli_args):
    kwargs = dict(kwargs)
    kwargs.setdefault("gpu", GPU)
    if "--gpu" not in cli_args:
        cli_args = cli_args + ["--gpu", GPU]
    r = run_cli(*cli_args)
    assert r.returncode != 0
    with pytest.raises(og.OrigamiError) as e:
        sel = og.Selector(**kwargs)
        sel.select(*args)
    assert str(e.value) == error_line(r)
    assert e.value.exit_code == r.returncode
    assert isinstance(e.value, ValueError)


def test_other_bad_inputs_raise_one_line():
    sel = og.Selector(gpu=GPU)
    for call in (lambda: sel.select(-1, 64, 64), lambda: sel.rank(64, 64, 64, top=0),
                 lambda: sel.score(64, 64, 64, "7x7"),
                 lambda: sel.select_batch([(64, 64, 64)], errors="ignore"),
                 lambda: sel.select_batch([(64, 64)]),
                 lambda: og.Selector(device={"name": "Mystery GPU", "sm_count": 10}),
                 lambda: og.Selector(device={"name": "NVIDIA H100", "bogus": 1}),
                 lambda: og.Selector(device="tpu")):
        with pytest.raises(og.OrigamiError) as e:
            call()
        assert "\n" not in str(e.value) and e.value.exit_code == 2


def test_the_cache_counts_hits_and_clears():
    sel = og.Selector(family="triton", gpu=GPU, cache_size=2)
    assert sel.cache_info() == {"hits": 0, "misses": 0, "size": 0, "capacity": 2}
    a = sel.select(1000, 2000, 3000)
    assert sel.select(1000, 2000, 3000) == a
    assert sel.cache_info() == {"hits": 1, "misses": 1, "size": 1, "capacity": 2}
    sel.select(64, 64, 64)
    sel.select(128, 128, 128)
    assert sel.cache_info()["size"] == 2
    sel.cache_clear()
    assert sel.cache_info()["size"] == 0
    # batches do not go through the cache
    sel.select_batch([(64, 64, 64)] * 3)
    assert sel.cache_info()["size"] == 0


def test_batches_keep_bad_rows_apart_when_asked():
    sel = og.Selector(family="triton-tma", gpu=GPU)
    shapes = [(4096, 4096, 4096), (4096, 4096, 4100), (-1, 2, 3), (1, 6144, 4096)]
    out = sel.select_batch(shapes, errors="none")
    assert out[1] is None and out[2] is None
    assert out[0] == sel.select(4096, 4096, 4096) and out[3] == sel.select(1, 6144, 4096)
    with pytest.raises(og.OrigamiError, match=r"^shape 1 \(4096x4096x4100\): --family"):
        sel.select_batch(shapes)
    # a long batch is split over threads: same picks, same order
    many = [(m, n, 4096) for m in range(1, 400, 7) for n in (4096, 6144, 14336)]
    assert sel.select_batch(many) == [sel.select(*s) for s in many]


class FakeDtype:
    """Stands for a torch dtype: only its str() is read."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def test_dtype_objects_are_read_by_their_str():
    sel = og.Selector(family="triton", gpu=GPU)
    for text, name in [("torch.float16", "fp16"), ("torch.bfloat16", "bf16"),
                       ("torch.float8_e4m3fn", "fp8"), ("torch.float32", "fp32")]:
        assert sel.select(4096, 4096, 4096, FakeDtype(text)) == sel.select(4096, 4096, 4096,
                                                                            name)
        assert sel.select(4096, 4096, 4096, FakeDtype(text)).dtype == name
    with pytest.raises(og.OrigamiError, match="^--dtype: "):
        sel.select(64, 64, 64, FakeDtype("torch.int64"))
    torch = pytest.importorskip("torch")
    assert sel.select(64, 64, 64, torch.bfloat16).dtype == "bf16"
    assert sel.select(64, 64, 64, torch.float8_e4m3fn).dtype == "fp8"


def test_selector_attributes_and_device_dicts():
    sel = og.Selector(family="triton-auto", gpu=GPU)
    assert sel.family == "triton-auto" and sel.members == ["triton", "triton-tma"]
    hw = sel.hardware
    assert hw["name"] and hw["sm_count"] == 132 and hw["source"] == f"preset {GPU}"
    assert set(hw["tiers"]) == set(hw["params"])
    assert og.Selector().hardware["used_default_preset"]
    assert og.Selector().notice  # origami-select's note on the default preset
    # A device dict: the missing clocks come from the preset its name matches.
    dev = og.Selector(device={"name": "NVIDIA H100 80GB HBM3", "compute_capability": (9, 0),
                              "sm_count": 114})
    assert dev.hardware["sm_count"] == 114
    assert dev.hardware["sm_clock_mhz"] == sel.hardware["sm_clock_mhz"]
    assert dev.device["sm_count"] == 114 and dev.hardware["source"].startswith("device")
    assert dev.select(4096, 4096, 4096).num_programs is None
    tma = og.Selector(family="triton-tma", device=dev.device)
    assert tma.select(4096, 4096, 4096).num_programs == 114
    full = dict(dev.device, name="Some Future GPU")
    assert og.Selector(device=full).hardware["tiers"]["mma_latency"].startswith("derived")


def test_torch_device_fields():
    from origami_gemm import _device

    class Props:
        name = "NVIDIA H100 80GB HBM3"
        major, minor = 9, 0
        multi_processor_count = 132
        L2_cache_size = 52428800
        shared_memory_per_block_optin = 232448
        regs_per_multiprocessor = 65536
        clock_rate = 1980000
        memory_clock_rate = 0  # not reported: left to the preset
        memory_bus_width = 5120

    d = _device.props_from_torch(Props())
    assert d["sm_clock_mhz"] == 1980.0 and "mem_clock_mhz" not in d
    assert _device.missing_fields(d) == ["mem_clock_mhz"]
    sel = og.Selector(device=d)
    assert sel.hardware["mem_clock_mhz"] == 2619.0  # the h100-sxm preset's


class _TorchProps:
    name = "Mystery GPU"
    major, minor = 9, 0
    multi_processor_count = 100
    L2_cache_size = 50 << 20
    shared_memory_per_block_optin = 232448
    regs_per_multiprocessor = 65536
    memory_bus_width = 5120
    # no clock_rate / memory_clock_rate, as on builds that do not report them


def test_device_torch_reads_gpu0_or_falls_back_with_a_warning(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.warns(RuntimeWarning, match="no CUDA GPU"):
        sel = og.Selector(device="torch")
    assert sel.device is None and sel.hardware["used_default_preset"]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: _TorchProps())
    # Clocks missing and no preset matches the name: no numbers invented.
    with pytest.warns(RuntimeWarning, match="sm_clock_mhz, mem_clock_mhz"):
        sel = og.Selector(device="cuda")
    assert sel.device is None and sel.hardware["used_default_preset"]
    # A name a preset matches: the clocks come from it, the rest from torch.
    monkeypatch.setattr(_TorchProps, "name", "NVIDIA H200")
    sel = og.Selector(device="torch", family="triton-tma")
    h200 = og.Selector(gpu="h200").hardware
    assert sel.device["sm_count"] == 100 and sel.hardware["sm_count"] == 100
    assert sel.device["sm_clock_mhz"] == sel.hardware["sm_clock_mhz"] == h200["sm_clock_mhz"]
    assert sel.device["mem_clock_mhz"] == h200["mem_clock_mhz"]
    assert sel.select(4096, 4096, 4096).num_programs == 100


def test_the_calibration_only_tier_equals_the_cli():
    hw = f"{ROOT}/calibrations/h200.json"
    sel = og.Selector(family="triton", gpu=GPU, hw_file=hw, calibration_only=True)
    pick = sel.select(4096, 4096, 4096, "fp16")
    r = subprocess.run([cli(), "4096", "4096", "4096", "--family", "triton", "--gpu", GPU,
                        "--calibration-only", "--format", "csv", "--top", "1"],
                       capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "TRITONBLAS_HW_PARAMS": hw})
    assert r.returncode == 0, r.stderr
    row = next(csv.DictReader(io.StringIO(r.stdout)))
    assert int(row["BLOCK_SIZE_M"]) == pick.block_m and int(row["BLOCK_SIZE_N"]) == pick.block_n
    assert int(row["num_warps"]) == pick.num_warps and int(row["num_stages"]) == pick.num_stages
    assert row["predicted_us"] == f"{pick.predicted_us:.3f}"
    # not the fitted tier's pick time: nothing fitted
    fitted = og.Selector(family="triton", gpu=GPU, hw_file=hw).select(4096, 4096, 4096, "fp16")
    assert fitted.predicted_us != pick.predicted_us
    with pytest.raises(og.OrigamiError) as e:
        og.Selector(family="triton", gpu=GPU, calibration_only=True)
    assert "needs TRITONBLAS_HW_PARAMS" in str(e.value)


def test_the_learned_correction_is_on_by_default_and_can_be_left_out():
    # 128x4096x14336 on an H100: the hopper model picks 128x128x64 split 4 ways, its learned
    # correction 64x128x64 split 2 ways (docs/correction.md); each equals the CLI's
    corrected = og.Selector(family="hopper", gpu=GPU).select(128, 4096, 14336, "fp16")
    model = og.Selector(family="hopper", gpu=GPU, no_correction=True).select(128, 4096, 14336,
                                                                             "fp16")
    assert (corrected.block_m, corrected.split_k) == (64, 2)
    assert (model.block_m, model.split_k) == (128, 4)
    for pick, extra in ((corrected, []), (model, ["--no-correction"])):
        r = run_cli("128", "4096", "14336", "--family", "hopper", "--gpu", GPU, "--format", "csv",
                    "--top", "1", *extra)
        assert r.returncode == 0, r.stderr
        row = next(csv.DictReader(io.StringIO(r.stdout)))
        assert int(row["BLOCK_SIZE_M"]) == pick.block_m and int(row["SPLIT_K"]) == pick.split_k
        assert row["predicted_us"] == f"{pick.predicted_us:.3f}"
