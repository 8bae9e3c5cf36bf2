"""scripts/correction/moves_score.py: a correction's moved picks scored against the fastest
launch of a re-timing run."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "correction", "moves_score.py")

HEADER = "m,n,k,dtype,config,measured_ms,passed\n"


def run(tmp_path, jobs, rows):
    j = tmp_path / "jobs.txt"
    j.write_text(jobs)
    r = tmp_path / "configs.csv"
    r.write_text(HEADER + rows)
    return subprocess.run([sys.executable, SCRIPT, str(j), str(r)], capture_output=True, text=True)


def test_scores_each_move_against_the_fastest_launch(tmp_path):
    rows = ("1,512,512,fp16,a,0.010,1\n1,512,512,fp16,b,0.008,1\n1,512,512,fp16,c,0.020,0\n"
            "2,512,512,fp16,a,0.010,1\n2,512,512,fp16,b,0.020,1\n")
    p = run(tmp_path, "fp16 1 512 512 a b b\nfp16 2 512 512 a b a\n", rows)
    assert p.returncode == 0, p.stderr
    assert "1x512x512 fp16: model 80.0 % -> corrected 100.0 %" in p.stdout
    assert "2x512x512 fp16: model 100.0 % -> corrected 50.0 %" in p.stdout
    # the failed row (passed 0) is not the fastest launch
    assert "fp16: 2 moves, mean A/BF model 90.0 % -> corrected 75.0 %; better 1, worse 1" in p.stdout


def test_a_pick_the_run_did_not_time_is_an_error(tmp_path):
    p = run(tmp_path, "fp16 1 512 512 a z a\n", "1,512,512,fp16,a,0.010,1\n")
    assert p.returncode == 1
    assert "was not timed" in p.stderr
    p = run(tmp_path, "", "")
    assert p.returncode == 0
    p = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert p.returncode == 2
    # a file that is not there, or a run without the columns: one line, exit 2
    p = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "no-jobs.txt"),
                        str(tmp_path / "no.csv")], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "no.csv" in p.stderr
    (tmp_path / "bad.csv").write_text("x,y\n1,2\n")
    (tmp_path / "jobs.txt").write_text("fp16 1 512 512 a a a\n")
    p = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "jobs.txt"),
                        str(tmp_path / "bad.csv")], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "no column" in p.stderr
