"""scripts/triton/run_to_run.py: the ceiling run-to-run noise puts on one run's A/BF."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "triton", "run_to_run.py")
from _validation_runs import run_folder  # noqa: E402


def held_out_line(stdout):
    return [x for x in stdout.splitlines() if x.startswith("held out")][0].split()


def test_a_config_fastest_in_one_run_is_scored_in_the_other():
    import importlib.util
    spec = importlib.util.spec_from_file_location("run_to_run", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    key = (8, 8, 8, "fp16")
    # run 0: a fastest (1.0 vs 1.1); run 1: b fastest (1.0 vs 1.25); c only in run 0
    runs = [{key: {"a": 1.0, "b": 1.1, "c": 0.5}}, {key: {"a": 1.25, "b": 1.0}}]
    v = sorted(mod.pair_scores(runs, key))
    # a in run 1: 1.0 / 1.25; b in run 0: 1.0 / 1.1 (c, timed by one run only, takes no part)
    assert abs(v[0] - 0.8) < 1e-12 and abs(v[1] - 1.0 / 1.1) < 1e-12


def test_the_command_line_prints_the_worst_pair(tmp_path):
    a, b = "64x128x128,g8,w4,s4", "128x64x128,g8,w4,s4"
    # the runs' clocks differ (run 2's cuBLAS 10 % slower) and the two configs swap places
    r1 = run_folder(tmp_path / "r1", 20.0, {a: 28.0, b: 30.0})
    r2 = run_folder(tmp_path / "r2", 22.0, {a: 36.3, b: 33.0})
    out = subprocess.run([sys.executable, SCRIPT, r1, r2], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = held_out_line(out.stdout)
    # a (fastest in r1) in r2: 33.0 / 36.3; b (fastest in r2) in r1: 28 / 30
    assert line[3] == "1" and abs(float(line[5]) - 33.0 / 36.3) < 1e-3


def test_one_run_is_refused_with_exit_2(tmp_path):
    r1 = run_folder(tmp_path / "r1", 20.0, {"64x64x64,g8,w4,s3": 25.0})
    out = subprocess.run([sys.executable, SCRIPT, r1], capture_output=True, text=True)
    assert out.returncode == 2 and "usage" in out.stderr
