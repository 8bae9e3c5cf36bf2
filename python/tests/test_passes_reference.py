"""scripts/triton/passes_reference.py: held-out references from a single-pass sweep and a
sweep timed in several passes."""
import csv
import gzip
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "triton", "passes_reference.py")

CONFIGS = "set,m,n,k,dtype,config,measured_ms,passed\n"
MEAS = "set,m,n,k,dtype,config,status,pass_us\n"


def gz(path, text):
    with gzip.open(path, "wt") as f:
        f.write(text)


def test_medians_of_the_passes_and_of_all_four(tmp_path):
    first, passes, out = tmp_path / "first", tmp_path / "passes", tmp_path / "out"
    first.mkdir()
    passes.mkdir()
    # one shape, three launches; the single pass orders them a < b < c, the passes b < a < c
    gz(first / "configs.csv.gz", CONFIGS + "s,1,2,3,fp16,a,0.010,1\ns,1,2,3,fp16,b,0.020,1\n"
       "s,1,2,3,fp16,c,0.030,1\n")
    gz(passes / "configs.csv.gz", CONFIGS + "s,1,2,3,fp16,a,0.012,1\ns,1,2,3,fp16,b,0.011,1\n"
       "s,1,2,3,fp16,c,0.040,1\n")
    gz(passes / "measurements.csv.gz", MEAS + "s,1,2,3,fp16,cublas_before,ok,5 5 5\n"
       "s,1,2,3,fp16,a,ok,12 13 11\ns,1,2,3,fp16,b,ok,11 10 12\ns,1,2,3,fp16,c,ok,40 41 39\n")
    p = subprocess.run([sys.executable, SCRIPT, str(first), str(passes), str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # pairs: (a,b) discordant, (a,c) and (b,c) concordant: tau (2 - 1) / 3
    assert "fp16: 1 shapes, 3 launches in both; the single pass against the 3-pass median: " \
           "Kendall tau-b mean 0.333" in p.stdout
    passes_rows = list(csv.DictReader(open(out / "passes.csv")))
    assert [r["measured_ms"] for r in passes_rows] == ["0.012", "0.011", "0.040"]
    joined = {r["config"]: float(r["measured_ms"]) for r in csv.DictReader(open(out / "all.csv"))}
    # the median of the three passes and the single pass: a 0.010-0.013 -> 0.0115, c 0.030-0.041
    # -> 0.0395
    assert joined == {"a": 0.0115, "b": 0.0115, "c": 0.0395}


def test_an_extra_single_pass_joins_the_median_where_it_timed_the_launch(tmp_path):
    first, passes, extra, out = (tmp_path / d for d in ("first", "passes", "extra", "out"))
    for d in (first, passes, extra):
        d.mkdir()
    gz(first / "configs.csv.gz", CONFIGS + "s,1,2,3,fp16,a,0.010,1\ns,1,2,3,fp16,b,0.020,1\n")
    gz(passes / "configs.csv.gz", CONFIGS + "s,1,2,3,fp16,a,0.012,1\ns,1,2,3,fp16,b,0.011,1\n")
    gz(passes / "measurements.csv.gz", MEAS + "s,1,2,3,fp16,a,ok,12 13 11\n"
       "s,1,2,3,fp16,b,ok,11 10 12\n")
    # the extra sweep timed a (at 0.030) and b failed there
    gz(extra / "configs.csv.gz", CONFIGS + "s,1,2,3,fp16,a,0.030,1\ns,1,2,3,fp16,b,,0\n")
    p = subprocess.run([sys.executable, SCRIPT, str(first), str(passes), str(out), str(extra)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"{extra}: joined the median of 1 launches" in p.stdout
    joined = {r["config"]: float(r["measured_ms"]) for r in csv.DictReader(open(out / "all.csv"))}
    # a: median of 0.010, 0.011, 0.012, 0.013, 0.030; b: of 0.010, 0.011, 0.012, 0.020
    assert joined == {"a": 0.012, "b": 0.0115}
    p = subprocess.run([sys.executable, SCRIPT, str(first), str(passes), str(out),
                        str(tmp_path / "none")], capture_output=True, text=True)
    assert p.returncode == 2 and "none" in p.stderr


def test_missing_inputs_are_one_line_and_exit_2(tmp_path):
    p = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert p.returncode == 2
    p = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "a"), str(tmp_path / "b"),
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "configs.csv.gz" in p.stderr
