"""Shared by the tests of scripts/triton/across_runs.py and run_to_run.py: a minimal
tma_sweep.py-like run folder (one held-out shape, cuBLAS timed twice, the configs' times)."""

HEADER = "set,m,n,k,dtype,config,block_m,status,us\n"


def run_folder(path, cublas_us, times):
    """Write a run folder at `path` (a pathlib.Path) for 1000x576x7168 fp16; its path."""
    path.mkdir(parents=True)
    rows = [f"llm_shapes,1000,576,7168,fp16,cublas_before,,ok,{cublas_us}",
            f"llm_shapes,1000,576,7168,fp16,cublas_after,,ok,{cublas_us}"]
    rows += [f'llm_shapes,1000,576,7168,fp16,"{c}",64,ok,{t}' for c, t in times.items()]
    (path / "measurements.csv").write_text(HEADER + "\n".join(rows) + "\n")
    return str(path)
