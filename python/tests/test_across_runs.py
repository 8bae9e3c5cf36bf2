"""scripts/triton/across_runs.py: the triton-tma picks against the median of several
validation runs, each run's times over its own cuBLAS timings."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "triton", "across_runs.py")
from _validation_runs import run_folder  # noqa: E402


def picks_file(path, pick):
    path.write_text("       M        N        K dtype  pick   predicted_us\n"
                    f"    1000      576     7168  fp16  {pick}   30.0\n")
    return str(path)


def test_the_runs_clocks_cancel_and_the_median_decides(tmp_path):
    a, b = "64x128x128,g8,w4,s4", "128x64x128,g8,w4,s4"
    # run 2 runs everything 10 % slower (its cuBLAS too); run 3 has b's unlucky launch
    r1 = run_folder(tmp_path / "r1", 20.0, {a: 30.0, b: 28.0})
    r2 = run_folder(tmp_path / "r2", 22.0, {a: 33.0, b: 30.8})
    r3 = run_folder(tmp_path / "r3", 20.0, {a: 30.0, b: 36.0})
    out = subprocess.run([sys.executable, SCRIPT, picks_file(tmp_path / "p.txt", a), r1, r2, r3],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = [x for x in out.stdout.splitlines() if x.startswith("held out")][0].split()
    # medians over the runs (relative to cuBLAS): a 1.5, b 1.4: a scores 1.4 / 1.5
    assert line[3] == "1" and abs(float(line[4]) - 1.4 / 1.5) < 1e-3


def test_bad_inputs_are_one_line_and_exit_2(tmp_path):
    out = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    out = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "none.txt"), str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("across_runs: ")
