"""scripts/triton/probe_table.py: a probe's launches side by side, measured over predicted."""
import importlib.util
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "triton", "probe_table.py")
HEADER = "set,m,n,k,dtype,config,predicted_us,measured_us,picked\n"


def load():
    spec = importlib.util.spec_from_file_location("probe_table", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(m, config, pred, meas, picked=False, dtype="fp16"):
    return {"m": str(m), "n": "64", "k": "32", "dtype": dtype, "config": config,
            "predicted_us": str(pred), "measured_us": str(meas),
            "picked": "true" if picked else "false"}


def test_configs_match_without_their_group_and_the_pick_is_marked():
    mod = load()
    rows = [row(2, "64x64x64,g1,w4,s3", 1.0, 3.0, picked=True), row(2, "64x64x32,g8,w4,s3", 2.0, 2.5),
            row(1, "64x64x64,g8,w4,s3", 4.0, 5.0), row(1, "64x64x64,g8,w4,s3", 9.0, 9.0, dtype="bf16")]
    lines = mod.table(rows, "fp16", ["64x64x64,w4,s3", "128x64x64,w4,s3"])
    assert len(lines) == 3
    # shapes in ascending order; bf16 rows left out
    assert lines[1].startswith("1x64x32") and "5.00 /      4.00 " in lines[1]
    # the best of the shape is any config measured, named or not; the pick carries a star
    assert lines[2].startswith("2x64x32") and "     2.50  " in lines[2] and "3.00 /      1.00*" in lines[2]
    # a config the shape did not time prints a dash
    assert lines[2].rstrip().endswith("-")


def test_of_a_config_timed_at_several_groups_the_fastest_is_shown():
    mod = load()
    rows = [row(1, "64x64x64,g4,w4,s3", 1.0, 3.0), row(1, "64x64x64,g8,w4,s3", 2.0, 2.0),
            row(1, "64x64x64,g16,w4,s3", 3.0, 4.0)]
    lines = mod.table(rows, "fp16", ["64x64x64,w4,s3"])
    assert "2.00 /      2.00 " in lines[1]


def test_a_missing_file_is_one_line_and_exit_2(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "none.csv"), "fp16", "a"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "probe_table.py" in r.stderr


def test_wrong_arguments_print_usage_and_exit_2():
    r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr


def test_the_command_line_prints_the_table(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text(HEADER + 'fit,8,64,32,fp16,"64x64x64,g8,w4,s3",1.5,2.0,true\n')
    r = subprocess.run([sys.executable, SCRIPT, str(f), "fp16", "64x64x64,w4,s3"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "8x64x32" in r.stdout and "2.00 /      1.50*" in r.stdout
