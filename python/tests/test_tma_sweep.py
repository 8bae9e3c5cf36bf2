"""The CPU parts of the triton-tma brute-force sweep (scripts/triton/tma_sweep.py): the
configs' text form (the Rust model's `Config` text), the default space, the configs file,
the shape plan and the origami-bench layout written from measurements rows."""
import csv
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "triton"))

import tma_layout  # noqa: E402
import tma_sweep  # noqa: E402
from bench_layout import CONFIG_COLUMNS, SHAPE_COLUMNS  # noqa: E402
from origami_gemm.kernels.triton_tma import TmaConfig, configs, parse_text  # noqa: E402


def test_text_form_round_trips_over_the_whole_space():
    space = configs()
    assert len(space) == 4032
    texts = set()
    for c in space:
        t = c.text()
        assert parse_text(t) == c
        assert parse_text(t).text() == t
        texts.add(t)
    assert len(texts) == len(space)  # the text names a config uniquely


def test_text_form_matches_the_rust_model():
    c = TmaConfig(128, 256, 64, 8, 8, 3)
    assert c.text() == "128x256x64,g8,w8,s3"
    on = TmaConfig(128, 256, 64, 8, 8, 3, WARP_SPECIALIZE=True, FLATTEN=True,
                   EPILOGUE_SUBTILE=True)
    assert on.text() == "128x256x64,g8,w8,s3,flatten,warp_specialize,epilogue_subtile"
    # switch words in any order, printed in the model's order (crates/origami-core/src/model/problem.rs test)
    t = parse_text("128x256x64,g8,w8,s3,epilogue_subtile,flatten")
    assert t.FLATTEN and t.EPILOGUE_SUBTILE and not t.WARP_SPECIALIZE
    assert t.text() == "128x256x64,g8,w8,s3,flatten,epilogue_subtile"
    # g, w, s optional with the model's defaults g1 w4 s3; spaces and X tolerated
    assert parse_text(" 128X64x32 ") == TmaConfig(128, 64, 32, 1, 4, 3)
    assert parse_text("64x64x32, s5 ,w8") == TmaConfig(64, 64, 32, 1, 8, 5)


@pytest.mark.parametrize("text", [
    "", "128x64", "128x64x32x16", "128x64x0", "128xax32", "128x64x32,q3",
    "128x64x32,flat", "128x64x32,g", "128x64x32,g-1", "128x64x32,", "96x64x32",
    "128x64x512", "128x64x32,w3", "128x64x32,FLATTEN",
])
def test_bad_text_is_one_line_error(text):
    with pytest.raises(ValueError) as e:
        parse_text(text)
    assert "\n" not in str(e.value) and str(e.value)


def test_default_space():
    space = tma_sweep.default_configs()
    # The stages s in {3, 4, 5} with s x (BM + BN) x BK x 2 <= 228352 bytes, per tile:
    # BK 64: BM + BN = 128 (1 tile), 192 (2), 256 (1), 320 (2) take all 3 (18), 384 (2)
    # takes s3, s4 (4), 512 (1) s3 (1): 23. BK 128: 128 (1) all 3, 192 (2) s3, s4 (4),
    # 256 (1) s3 (1), 320 and up none: 8. 31 tile-stage pairs.
    ring = {(bm, bn, bk, s) for bm in (64, 128, 256) for bn in (64, 128, 256)
            for bk in (64, 128) for s in (3, 4, 5) if s * (bm + bn) * bk * 2 <= 232448 - 4096}
    assert len(ring) == 31
    assert len(space) == 124 == len(ring) * 2 * 2  # x warps {4, 8} x FLATTEN off/on
    assert len(set(space)) == len(space)
    for c in space:
        assert c.GROUP_SIZE_M == 8 and not c.WARP_SPECIALIZE and not c.EPILOGUE_SUBTILE
        assert (c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_stages) in ring
    texts = {c.text() for c in space}
    assert "128x256x64,g8,w8,s3" in texts and "128x256x64,g8,w8,s3,flatten" in texts
    assert "128x256x64,g8,w8,s5" not in texts  # 245760 B of operand ring
    assert "256x256x64,g8,w4,s3,flatten" in texts and "256x256x64,g8,w4,s4" not in texts


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_configs_file(tmp_path):
    p = _write(tmp_path / "c.csv", "# a comment\nwhy,config\nbest,\"128x256x64,g8,w8,s3\"\n"
               "x,\"64x64x64,g8,w4,s3,flatten\"\nagain,\"128x256x64,g8,w8,s3\"\n")
    got = tma_sweep.read_config_file(p)
    assert [c.text() for c in got] == ["128x256x64,g8,w8,s3", "64x64x64,g8,w4,s3,flatten"]
    # one column: the line is the config, quoted or not
    p = _write(tmp_path / "one.csv", "config\n128x256x64,g8,w8,s3\n\"64x64x64,s4\"\n")
    got = tma_sweep.read_config_file(p)
    assert [c.text() for c in got] == ["128x256x64,g8,w8,s3", "64x64x64,g1,w4,s4"]
    for text, where in (("config\n128x256x64\n96x64x64\n", "line 3"),
                        ("why,config\nbest,128x256x64,g8,w8,s3\n", "line 2: 5 fields"),
                        ("name\n128x256x64\n", "no 'config' column"),
                        ("# only\n", "empty"), ("config\n", "no config rows")):
        with pytest.raises(ValueError, match=where):
            tma_sweep.read_config_file(_write(tmp_path / "bad.csv", text))
    with pytest.raises(ValueError, match="No such file"):
        tma_sweep.read_config_file(str(tmp_path / "absent.csv"))


def test_shape_plan_and_shards():
    llm = tma_sweep.plan_shapes(["llm"], [], (0, 1))
    assert len(llm) == 49  # 51 rows, two GEMMs listed under two models each
    dup = [e for e in llm if (e["m"], e["n"], e["k"]) == (1, 28672, 4096)]
    assert len(dup) == 1 and dup[0]["label"] == ("llama3-8b/gate_up_proj; "
                                                 "mixtral-8x7b/expert_w1_w3")
    both = tma_sweep.plan_shapes(["seed", "llm"], ["4100x576x7168", "4100x576x7168"], (0, 1))
    assert len(both) == 23 + 49 + 1 and both[-1]["set"] == "listed"
    shards = [tma_sweep.plan_shapes(["seed", "llm"], [], (i, 5)) for i in range(5)]
    assert sorted(map(str, sum(shards, []))) == sorted(map(str, both[:-1]))
    assert shards[1][0] == both[1] and shards[1][1] == both[6]
    for bad in ("10x10x10", "64x64", "0x64x64", "axbxc"):
        with pytest.raises(ValueError, match="--shape"):
            tma_sweep.plan_shapes([], [bad], (0, 1))
    for bad in ("1/1", "2", "a/b", "0/0"):
        with pytest.raises(ValueError, match="--shard"):
            tma_sweep.parse_shard(bad)
    assert tma_sweep.parse_dtypes(["fp16,bf16", "fp16"]) == ["fp16", "bf16"]
    with pytest.raises(ValueError, match="fp8"):
        tma_sweep.parse_dtypes(["fp8"])


def test_compile_classes():
    assert tma_sweep.shape_spec(4096, 4096, 4096) == "M16N16K16"
    assert tma_sweep.shape_spec(1, 28672, 4096) == "M1N16K16"
    assert tma_sweep.shape_spec(4100, 576, 7168) == "MxN16K16"
    assert tma_sweep.shape_spec(17, 24, 200) == "MxNxKx"
    for spec in ("M16N16K16", "M1N16K16", "MxNxKx"):
        m, n, k = tma_sweep.spec_shape(spec)
        assert tma_sweep.shape_spec(m, n, k) == spec and n % 8 == 0 and k % 8 == 0


def test_bad_command_lines_exit_2(tmp_path, capsys):
    out = str(tmp_path / "o")
    for argv in (["--shape", "10x10x10"], ["--shape", "64x64x64", "--dtype", "fp8"],
                 ["--shape", "64x64x64", "--shard", "3/2"], [],
                 ["--shape", "64x64x64", "--configs", str(tmp_path / "none.csv")]):
        assert tma_sweep.main(["--out", out] + argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("tma_sweep.py: ") and err.count("\n") == 1
    os.makedirs(out)
    _write(tmp_path / "o" / "measurements.csv", "x\n")
    assert tma_sweep.main(["--out", out, "--shape", "64x64x64"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert tma_sweep.main(["--out", out, "--shape", "64x64x64", "--resume"]) == 2
    assert "not a measurements.csv" in capsys.readouterr().err


def _meas(config, status="ok", us="", **kw):
    r = {k: "" for k in tma_layout.MEAS_COLUMNS}
    r.update(set="listed", label="", m="1024", n="1024", k="1024", dtype="bf16")
    r.update(config=config, status=status, us=us, **kw)
    if config.startswith("cublas"):
        return r
    c = parse_text(config)
    r.update(block_m=c.BLOCK_SIZE_M, block_n=c.BLOCK_SIZE_N, block_k=c.BLOCK_SIZE_K,
             group_m=c.GROUP_SIZE_M, num_warps=c.num_warps, num_stages=c.num_stages)
    return r


def test_layout_rows(tmp_path):
    rows = [
        _meas("cublas_before", us="10.0", samples_us="10 10", sm_mhz="1980", seconds="0.5"),
        _meas("128x128x64,g8,w8,s3", us="12.5", tflops="171.8", mode="graph32",
              samples="3", cov="0.01", registers="168", spills="0", shared_bytes="131072",
              rel_err="1e-4", sm_mhz="1900", seconds="0.25"),
        _meas("64x64x64,g8,w4,s3,flatten", status="wrong", rel_err="nan", spills="12",
              error="relative error nan > 0.002"),
        _meas("256x256x64,g8,w4,s4", status="compile_error", error="out of resources"),
        _meas("cublas_after", us="11.0", samples_us="11 11", sm_mhz="1700"),
        _meas("cublas_before", us="5.0", m="512"),  # a shape cut off: left out
    ]
    path = tmp_path / "measurements.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=tma_layout.MEAS_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    with open(path, "a") as f:
        f.write("listed,,2048,2048")  # a row cut off mid-write
    n, c, unfinished = tma_layout.write_run_layout(str(tmp_path))
    assert (n, c) == (1, 3) and [u[2] for u in unfinished] == [512]
    with open(tmp_path / "configs.csv") as f:
        r = csv.DictReader(f)
        assert r.fieldnames == CONFIG_COLUMNS
        got = list(r)
    assert [x["config"] for x in got] == ["128x128x64,g8,w8,s3", "64x64x64,g8,w4,s3,flatten",
                                          "256x256x64,g8,w4,s4"]
    assert [x["passed"] for x in got] == ["1", "0", "0"]
    assert got[0]["measured_ms"] == "0.0125" and got[0]["reps"] == "32"
    assert got[0]["spills"] == "0" and got[1]["spills"] == "1" and got[2]["spills"] == ""
    assert got[0]["dtype"] == "bf16" and got[0]["is_pick"] == "0"
    assert got[2]["note"] == "tma_sweep.py: compile_error out of resources"
    assert got[2]["smem_bytes"] == "0" and got[1]["measured_ms"] == ""
    with open(tmp_path / "shapes.csv") as f:
        r = csv.DictReader(f)
        assert r.fieldnames == SHAPE_COLUMNS
        (s,) = list(r)
    assert s["set"] == "listed" and s["dtype"] == "bf16"
    assert float(s["cublas_ms"]) == pytest.approx(0.0105)  # mean of before and after
    assert float(s["cublas_cov"]) == pytest.approx(0.5 / 10.5, abs=1e-4)
    assert s["sm_mhz"] == "1900" and float(s["seconds"]) == pytest.approx(0.75)


class _FakeTimer:
    """Probes return the listed times in turn; measure records the probe it was given."""

    def __init__(self, probes):
        self.probes = list(probes)
        self.given = None

    def probe(self, run):
        return self.probes.pop(0)

    def measure(self, run, best, t1):
        self.given = t1
        return t1, [t1, t1], "graph4" if t1 < 100 else "events2"


class _NoClocks:
    samples = []


@pytest.mark.parametrize("probes, used, left", [
    ([150.0, 20.0, 30.0], 20.0, []),        # a slow first probe is probed twice more
    ([20.0, 99.0], 20.0, [99.0]),           # under the graph threshold: one probe
    ([150.0, 160.0, 140.0], 140.0, []),     # really above it: the fastest of three
    ([9000.0, 1.0], 9000.0, [1.0]),         # long kernels: one probe
])
def test_timed_row_reprobes(probes, used, left):
    t = _FakeTimer(probes)
    row = tma_sweep.timed_row({"config": "x"}, t, _NoClocks(), None, None, 2e9, 1e-5, 100.0)
    assert t.given == used and t.probes == left
    assert row["us"] == used and row["status"] == "ok" and row["rel_err"] == "1.000e-05"
    assert row["samples"] == 2 and row["tflops"] == round(2e9 / used / 1e6, 2)


class _SpreadTimer:
    """Each timing returns the next (median, samples) pair; probes are fixed at 20 us."""

    def __init__(self, timings):
        self.timings = list(timings)

    def probe(self, run):
        return 20.0

    def measure(self, run, best, t1):
        us, samples = self.timings.pop(0)
        return us, samples, "graph5"


@pytest.mark.parametrize("timings, kept, taken", [
    ([(20.0, [20.0, 20.1, 19.9])], 20.0, 1),                        # steady: timed once
    ([(900.0, [900.0, 100.0]), (20.0, [20.0, 20.1])], 20.0, 2),     # a stall: timed again
    ([(900.0, [900.0, 100.0]), (950.0, [950.0, 90.0]), (30.0, [30.0, 10.0])], 30.0, 3),
    ([(20.0, [20.0, 10.0]), (25.0, [25.0, 5.0]), (40.0, [40.0, 5.0])], 20.0, 3),
])
def test_timed_row_retimes_a_spread_timing(timings, kept, taken):
    t = _SpreadTimer(timings)
    row = tma_sweep.timed_row({"config": "x"}, t, _NoClocks(), None, None, 2e9, None, 100.0)
    assert row["us"] == kept and row["timings"] == taken and t.timings == []


def test_compile_workers_write_stderr_to_the_log(tmp_path):
    import multiprocessing as mp
    log = str(tmp_path / "compile_log.txt")
    with mp.get_context("spawn").Pool(1, initializer=tma_sweep._worker_init,
                                      initargs=(log,)) as pool:
        assert pool.apply(os.write, (2, b"an MLIR dump\n")) == 13
    with open(log) as f:
        assert f.read() == "an MLIR dump\n"


def test_passes_alternate_and_take_the_median():
    assert tma_sweep.pass_order(3, 1) == [0, 1, 2]
    assert tma_sweep.pass_order(3, 2) == [2, 1, 0]
    assert tma_sweep.pass_order(3, 3) == [0, 1, 2]
    calls = []

    def time_one(i):  # a steady drift: each launch 1 us slower than the one before
        calls.append(i)
        return 10.0 * (i + 1) + 2 + len(calls)  # places 3, 4, ... after pass 1
    extra = tma_sweep.interleaved_passes(3, 4, time_one, lambda: False)
    assert calls == [2, 1, 0, 0, 1, 2, 2, 1, 0]
    # pass 1 at places 0, 1, 2 (times 10+0, 20+1, 30+2 in the same drift): over an even
    # number of passes every launch gains the same from the drift.
    first = [10.0, 21.0, 32.0]
    meds = [tma_sweep.with_passes({"us": f}, e, 2e9)["us"] for f, e in zip(first, extra)]
    assert [round(m - 10.0 * (i + 1), 3) for i, m in enumerate(meds)] == [5.5, 5.5, 5.5]
    row = tma_sweep.with_passes({"us": 10.0, "tflops": 0}, [12.0, None, 11.0], 2e9)
    assert row["us"] == 11.0 and row["passes"] == 3 and row["pass_us"] == "10.000 12.000 11.000"
    assert row["tflops"] == round(2e9 / 11.0 / 1e6, 2)


def test_shuffled_passes_are_seeded_permutations_of_their_own():
    a = [tma_sweep.pass_order(40, p, shuffle_seed=7) for p in (2, 3, 4)]
    assert all(sorted(o) == list(range(40)) for o in a)
    assert len({tuple(o) for o in a}) == 3  # a different order every pass
    assert a == [tma_sweep.pass_order(40, p, shuffle_seed=7) for p in (2, 3, 4)]
    assert tma_sweep.pass_order(40, 2, shuffle_seed=8) != a[0]
    calls = []
    tma_sweep.interleaved_passes(5, 3, lambda i: calls.append(i) or 1.0, lambda: False,
                                 shuffle_seed=7)
    assert calls == tma_sweep.pass_order(5, 2, 7) + tma_sweep.pass_order(5, 3, 7)


def test_passes_stop_when_out_of_time():
    n = [0]

    def out_of_time():
        n[0] += 1
        return n[0] > 4
    extra = tma_sweep.interleaved_passes(3, 3, lambda i: 1.0, out_of_time)
    assert [len(e) for e in extra] == [2, 1, 1]  # pass 2 (2, 1, 0) and pass 3's first


@pytest.mark.parametrize("bad", ["0", "9", "-1"])
def test_bad_passes_exit_2(tmp_path, capsys, bad):
    assert tma_sweep.main(["--out", str(tmp_path / "o"), "--shape", "64x64x64",
                           "--passes", bad]) == 2
    assert "--passes" in capsys.readouterr().err


def test_shuffle_without_passes_exits_2(tmp_path, capsys):
    assert tma_sweep.main(["--out", str(tmp_path / "o"), "--shape", "64x64x64",
                           "--shuffle"]) == 2
    assert "--shuffle" in capsys.readouterr().err


def test_dense_config_list_is_the_tables_clean_rows_and_reads_back(tmp_path, capsys):
    import tma_dense_configs
    table = tmp_path / "t.csv"
    table.write_text(
        "# a table\n"
        "bm,bn,bk,w,s,ws,flatten,subtile,status,regs,spill_store_bytes,spill_load_bytes\n"
        "128,256,64,8,3,0,1,0,ok,168,0,0\n"
        "64,64,32,4,2,1,0,1,ok,90,0,0\n"
        "256,256,128,8,2,0,0,0,ok,255,64,64\n"        # spills: left out
        "256,128,128,8,2,0,0,0,ok,255,0,32\n"         # spill loads alone: left out too
        "128,128,64,4,4,1,0,0,compile_error,,,\n")    # did not compile: left out
    assert tma_dense_configs.main(["--table", str(table), "--groups", "1,8"]) == 0
    out = tmp_path / "configs.csv"
    out.write_text(capsys.readouterr().out)
    got = [c.text() for c in tma_sweep.read_config_file(str(out))]
    assert got == ["128x256x64,g1,w8,s3,flatten", "128x256x64,g8,w8,s3,flatten",
                   "64x64x32,g1,w4,s2,warp_specialize,epilogue_subtile",
                   "64x64x32,g8,w4,s2,warp_specialize,epilogue_subtile"]
    assert tma_dense_configs.main(["--table", str(table), "--groups", "0"]) == 2
    assert tma_dense_configs.main(["--table", str(tmp_path / "none.csv")]) == 2
