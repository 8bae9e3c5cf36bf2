"""Alignment classes of the sweep's classic matmul (scripts/triton/alignment.py): which
variant Triton compiles for a shape, the sweep's compile keys, the PTX reader of
scripts/triton/unaligned_stats.py, and one compile per class against the committed table
data/triton_sm90_unaligned.csv."""
import csv
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "triton"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import alignment  # noqa: E402
from unaligned_stats import access_bytes, ptx_accesses  # noqa: E402


@pytest.mark.parametrize("n,k,cls", [
    (4096, 4096, "aligned"), (3000, 3000, "nk"), (4097, 4097, "nk"), (7168, 2050, "k"),
    (24, 64, "n"), (16, 1, "k"), (1, 16, "n"), (1, 1, "nk"), (8, 4096, "n"),
])
def test_shape_class(n, k, cls):
    assert alignment.shape_class(n, k) == cls


@pytest.mark.parametrize("bad", [0, -16, 2.0, True, "16", None])
def test_bad_dimensions_are_refused(bad):
    with pytest.raises(ValueError, match="must be a positive integer"):
        alignment.shape_class(bad, 16)
    with pytest.raises(ValueError, match="must be a positive integer"):
        alignment.spec_key(16, bad)


def test_divisible_arguments_per_class():
    ptrs = (0, 1, 2)
    assert alignment.divisible_args("aligned") == ptrs + (4, 5, 6, 7, 8)
    assert alignment.divisible_args("n") == ptrs + (5, 6, 7)        # K and A, B strides
    assert alignment.divisible_args("k") == ptrs + (4, 8)           # N and C's stride
    assert alignment.divisible_args("nk") == ptrs
    assert alignment.divisibility_attrs("nk") == {(i,): [["tt.divisibility", 16]] for i in ptrs}
    with pytest.raises(ValueError, match="unknown alignment class"):
        alignment.divisible_args("m")


def test_spec_key_follows_tritons_launcher():
    # Triton's own specialisation of an integer argument: ('constexpr', 1) for 1, 'D' for
    # multiples of 16, '' otherwise. alignment.spec_key must name the same variants.
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    def triton_spec(v):
        t, attr = native_specialize_impl(BaseBackend, v, False, True, True)
        return "1" if t == "constexpr" else attr

    for n in (1, 2, 16, 17, 40, 64, 3000, 4097, 7168):
        for k in (1, 8, 32, 2050, 4096):
            assert alignment.spec_key(n, k) == f"n{triton_spec(n)}_k{triton_spec(k)}"
            assert alignment.shape_class(n, k) == {
                ("D", "D"): "aligned", ("D", ""): "k", ("", "D"): "n"}.get(
                    (triton_spec(n).replace("1", ""), triton_spec(k).replace("1", "")), "nk")


def test_sweep_compiles_one_variant_per_class_the_shapes_need():
    import triton_sweep as ts

    def shape(n, k, cfgs):
        rows = [{"bm": bm, "bn": 64, "bk": 32, "w": 4, "s": s, "feasible": f}
                for bm, s, f in cfgs]
        return {"M": 333, "N": n, "K": k, "rows": rows}

    shapes = [shape(4096, 4096, [(64, 3, True), (128, 4, False)]),
              shape(8192, 1024, [(64, 3, True)]),           # aligned again: no new key
              shape(4097, 4097, [(64, 3, True), (128, 4, True)]),
              shape(7168, 2050, [(64, 3, True)])]
    keys = ts.compile_keys(shapes)
    assert keys == sorted([(64, 64, 32, 4, 3, "nD_kD"), (64, 64, 32, 4, 3, "n_k"),
                           (128, 64, 32, 4, 4, "n_k"), (64, 64, 32, 4, 3, "nD_k")])
    # the aligned key keeps its earlier form; the others name their variant
    assert ts.compile_key(64, 64, 32, 4, 3, "nD_kD") == "64x64x32_w4_s3"
    assert ts.compile_key(64, 64, 32, 4, 3, "n_k") == "64x64x32_w4_s3_n_k"
    # the small problem that loads a variant has that variant's specialisation
    for n in ("1", "D", ""):
        for k in ("1", "D", ""):
            spec = f"n{n}_k{k}"
            assert alignment.spec_key(*ts.spec_dims(spec)) == spec


def test_ptx_access_widths():
    assert access_bytes("ld.global.v4.b32") == 16
    assert access_bytes("ld.global.L1::evict_last.b16") == 2
    assert access_bytes("st.global.v2.b32") == 8
    ptx = "\n".join([
        "\tcp.async.cg.shared.global [ %r26 + 0 ], [ %rd5 + 0 ], 0x10, %r27;",
        "\t@%p2 ld.global.b16 { %rs1 }, [ %rd7 + 0 ];",
        "\t@%p20 st.global.v4.b32 [ %rd58 + 0 ], { %r1, %r2, %r3, %r4 };",
        "\tst.global.b16 [ %rd9 + 0 ], { %rs2 };",
        "\tld.shared.v2.b16 {%rs1, %rs2}, [%r4];",
    ])
    assert ptx_accesses(ptx) == ([16, 2], [16, 2])


# One config per class compiled for sm_90a (no interpreter) against the committed table.
def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def test_compile_check_matches_the_committed_table(tmp_path):
    out = tmp_path / "t.csv"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    script = os.path.join(ROOT, "scripts", "triton", "unaligned_stats.py")
    r = subprocess.run([sys.executable, script, str(out), "--jobs", "1", "--only",
                        "64x64x32_w4_s3"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    got = {row["class"]: row for row in _rows(out)}
    assert set(got) == {"n", "k", "nk"}
    table = {row["class"]: row for row in _rows(os.path.join(ROOT, "data", "triton_sm90_unaligned.csv"))
             if (row["bm"], row["bn"], row["bk"], row["w"], row["s"]) == ("64", "64", "32", "4", "3")}
    assert got == table
    # K unaligned: 2-byte scalar operand loads; N unaligned: 2-byte scalar C stores
    assert got["k"]["load_bytes"] == "2" and got["k"]["store_bytes"] != "2"
    assert got["n"]["load_bytes"] != "2" and got["n"]["store_bytes"] == "2"


def test_configs_with_too_many_scalar_loads_are_skipped_not_compiled(tmp_path):
    # 256x256x512 with 4 warps: 2048 two-byte loads per thread and K step with K unaligned
    out = tmp_path / "t.csv"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = os.path.join(ROOT, "scripts", "triton", "unaligned_stats.py")
    r = subprocess.run([sys.executable, script, str(out), "--classes", "k,nk", "--only",
                        "256x256x512_w4_s2"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = _rows(out)
    assert [(x["class"], x["status"], x["regs"]) for x in rows] == [
        ("k", "skipped", ""), ("nk", "skipped", "")]
    table = [x for x in _rows(os.path.join(ROOT, "data", "triton_sm90_unaligned.csv"))
             if (x["bm"], x["bn"], x["bk"], x["w"], x["s"]) == ("256", "256", "512", "4", "2")]
    assert sorted(x["status"] for x in table) == ["ok", "skipped", "skipped"]


def test_stats_script_refuses_bad_arguments(tmp_path):
    script = os.path.join(ROOT, "scripts", "triton", "unaligned_stats.py")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for args, msg in ([["--classes", "aligned"], "unknown class"],
                      [["--jobs", "0"], "--jobs and --max-scalar-loads must be positive"],
                      [["--limit-s", "x"], "--limit-s a positive number"],
                      [["--only", "no-such"], "no config of data/triton_sm90.csv matches"],
                      [["--bogus", "1"], "bad options"]):
        r = subprocess.run([sys.executable, script, str(tmp_path / "x.csv"), *args], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and msg in r.stderr, (args, r.stderr)
    r = subprocess.run([sys.executable, script, str(tmp_path / "x.csv")],
                       env={**env, "TRITON_INTERPRET": "1"}, capture_output=True, text=True)
    assert r.returncode != 0 and "unset TRITON_INTERPRET" in r.stderr


@pytest.mark.parametrize("probes, used", [
    ([150.0, 12.0, 30.0], 12.0),   # a slow first probe, then the kernel's time: graphs
    ([150.0, 160.0, 140.0], 140.0),  # really above the threshold: the fastest of three
    ([20.0], 20.0),                 # under the threshold: one probe, graphs
    ([9000.0], 9000.0),             # long kernels: no second probe
])
def test_sweep_timer_reprobes_before_choosing_events(probes, used):
    import triton_sweep as ts

    class FakeTimer(ts.Timer):
        def __init__(self, later):
            self.later = list(later)
            self.given = None

        def probe(self, run):
            return self.later.pop(0)

        def graph(self, run, t1, replays=3):
            self.given = ("graph", t1)
            return t1, [t1] * replays, 4

        def events(self, run, reps):
            self.given = ("events", reps)
            return [probes[-1]] * reps

    t = FakeTimer(probes[1:])
    us, samples, mode = t.measure(None, None, probes[0])
    assert t.later == []
    if used < ts.GRAPH_BELOW_US:
        assert t.given == ("graph", used) and us == used and mode == "graph4"
    else:
        assert t.given[0] == "events" and mode.startswith("events")
