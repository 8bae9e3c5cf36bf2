"""scripts/hopper/fit_auto.py: the readers of the two Triton kernels' timed picks that
`--family triton-auto`'s time maps are fitted on."""
import gzip
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "hopper", "fit_auto.py")


def load():
    spec = importlib.util.spec_from_file_location("fit_auto", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_classic_picks_take_their_prediction_from_the_inputs_listing(tmp_path):
    inputs, run = tmp_path / "inputs", tmp_path / "run"
    write(inputs / "64_128_256.csv", "rank,BLOCK_SIZE_M,predicted_us\n1,16,2.5\n2,32,3.0\n")
    write(run / "run_info.json", json.dumps({"args": {"inputs": str(inputs)}}))
    write(run / "shapes.csv", "set,m,n,k,dtype,cublas_ms\nseed_shapes_shapes,64,128,256,fp16,0.004\n")
    write(run / "configs.csv",
          "set,m,n,k,dtype,config,is_pick,predicted_us,measured_ms,passed\n"
          "seed_shapes_shapes,64,128,256,fp16,a,1,0,0.005,1\n"
          "seed_shapes_shapes,64,128,256,fp16,b,0,0,0.003,1\n")
    rows = load().triton_rows([str(run)])
    # the pick only, its prediction from rank 1 of the listing (configs.csv says 0), the
    # list named once
    assert rows == {(64, 128, 256, "fp16"): {"set": "seed_shapes", "pred": 2.5, "meas": 5.0,
                                              "cublas": 4.0}}


def test_the_tma_picks_are_read_where_the_run_timed_them(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    with gzip.open(run / "measurements.csv.gz", "wt") as f:
        f.write("set,m,n,k,dtype,config,status,us\n"
                "llm_shapes,1,2,3,fp16,cublas_before,ok,10\n"
                "llm_shapes,1,2,3,fp16,cublas_after,ok,12\n"
                "llm_shapes,1,2,3,fp16,\"64x64x64,g8,w4,s3\",ok,20\n"
                "llm_shapes,1,2,3,fp16,\"64x64x128,g8,w4,s3\",ok,15\n"
                "llm_shapes,4,5,6,fp16,cublas_before,ok,10\n")
    picks = tmp_path / "picks.txt"
    picks.write_text("       M        N        K dtype  pick                          predicted_us\n"
                     "       1        2        3  fp16  64x64x64,g8,w4,s3                    18.5\n"
                     "       4        5        6  fp16  64x64x64,g8,w4,s3                     9.0\n")
    rows = load().tma_rows([str(run)], str(picks))
    # 4x5x6's pick was not timed: left out
    assert rows == {(1, 2, 3, "fp16"): {"set": "llm_shapes", "pred": 18.5, "meas": 20.0,
                                         "cublas": 11.0}}


def test_the_triton_inputs_go_together(tmp_path):
    p = subprocess.run([sys.executable, SCRIPT, "--hopper", "x", "--origami", "y", "--triton", "z"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "go together" in p.stderr
