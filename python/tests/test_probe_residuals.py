"""scripts/triton/probe_residuals.py: the spread of a model's errors within each shape, the
second key by which scripts/triton/tma_padding_fit.sh chooses the zero-filled rows' charge."""
import importlib.util
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "triton", "probe_residuals.py")
HEADER = "set,m,n,k,dtype,config,predicted_us,measured_us,picked\n"


def load():
    spec = importlib.util.spec_from_file_location("probe_residuals", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(m, config, pred, meas):
    return {"m": str(m), "n": "8", "k": "8", "dtype": "fp16", "config": config,
            "predicted_us": str(pred), "measured_us": str(meas)}


def test_an_error_common_to_a_shape_costs_nothing():
    mod = load()
    # every launch of a shape twice as slow as predicted: the ranking is perfect
    rows = [row(1, "a", 1.0, 2.0), row(1, "b", 2.0, 4.0), row(2, "a", 3.0, 3.0)]
    assert mod.residual_rms(rows) == 0.0


def test_the_spread_is_the_rms_of_log_errors_less_the_shape_median():
    mod = load()
    rows = [row(1, "a", 1.0, 1.0), row(1, "b", 1.0, math.e), row(1, "c", 1.0, math.e ** 2)]
    # logs 0, 1, 2; median 1: residuals -1, 0, 1
    assert abs(mod.residual_rms(rows) - math.sqrt(2.0 / 3.0)) < 1e-12
    assert mod.residual_rms([row(1, "a", 0.0, 1.0)]) is None


def test_the_command_prints_one_line_and_refuses_bad_files(tmp_path):
    good = tmp_path / "pred.csv"
    good.write_text(HEADER + "listed,1,8,8,fp16,a,1.0,2.0,true\nlisted,1,8,8,fp16,b,1.0,1.0,false\n")
    out = subprocess.run([sys.executable, SCRIPT, str(good)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("rms ")
    for bad in (tmp_path / "missing.csv", tmp_path / "empty.csv"):
        if bad.name == "empty.csv":
            bad.write_text(HEADER)
        out = subprocess.run([sys.executable, SCRIPT, str(bad)], capture_output=True, text=True)
        assert out.returncode == 2 and out.stderr.count("\n") == 1
    out = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert out.returncode == 2
