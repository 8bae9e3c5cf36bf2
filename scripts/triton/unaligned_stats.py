#!/usr/bin/env python3
"""What Triton 3.6 compiles of the sweep's matmul kernel (scripts/triton_sweep.py) for
shapes whose N and/or K are not multiples of 16, on a CPU for sm_90a: for every config
of data/triton_sm90.csv and every unaligned class (scripts/triton/alignment.py) ptxas's
registers and spills (the log of Triton's own ptxas run), Triton's shared memory, whether
the dot became wgmma, and from the PTX the width of the operand loads (cp.async or
ld.global, narrowest in bytes) and of the C stores, with their static instruction counts.

With K unaligned the operands are loaded one 2-byte element per instruction: a thread
issues (BM + BN) x BK / (32 x num_warps) scalar loads per K step, and for the largest
tiles ptxas runs for minutes. So in the classes k and nk a config with more than
--max-scalar-loads (default 128) of them gets status `skipped` without a compile (the
table's compiled rows show where spilling sets in: docs/triton.md), and every compile
runs in its own process with a time limit (--limit-s, default 60; status `timeout`).
Skipped and timed-out configs carry no numbers and the model never picks them. Rows are
appended as they finish, so an interrupted run resumes where it stopped (same OUT.csv).

Usage: python3 scripts/triton/unaligned_stats.py OUT.csv [--classes n,k,nk] [--jobs 2]
       [--only BMxBNxBK_wW_sS[,...]] [--limit-s 60] [--max-scalar-loads 128]
       python3 scripts/triton/unaligned_stats.py --summary TABLE.csv   (per class, against
       data/triton_sm90.csv: what docs/triton.md quotes)
Made data/triton_sm90_unaligned.csv with the defaults (TRITON_INTERPRET unset).
"""
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import alignment  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
ALIGNED_TABLE = os.path.join(ROOT, "data", "triton_sm90.csv")
FIELDS = ["class", "bm", "bn", "bk", "w", "s", "status", "regs", "spill_store_bytes",
          "spill_load_bytes", "shared_bytes", "wgmma", "load_bytes", "loads", "store_bytes",
          "stores"]
COMMENT = ("# Triton 3.6 matmul_kernel (scripts/triton_sweep.py) compiled for sm_90a (fp16) "
           "per unaligned class on a CPU: python3 scripts/triton/unaligned_stats.py "
           "data/triton_sm90_unaligned.csv")

_WIDTH = re.compile(r"^(?:v(\d)\.)?[bsuf](8|16|32|64)$")


def access_bytes(op):
    """Bytes moved per thread by one ld/st instruction, from its modifiers
    ('ld.global.v4.b32' -> 16, 'st.global.b16' -> 2, cache hints ignored)."""
    parts = op.split(".")
    for i in range(len(parts)):
        m = _WIDTH.match(".".join(parts[i:i + 2]) if parts[i].startswith("v") else parts[i])
        if m:
            return int(m.group(1) or 1) * int(m.group(2)) // 8
    raise ValueError(f"no width in {op!r}")


def ptx_accesses(ptx):
    """(operand loads, C stores): lists of per-thread bytes, one per static instruction.
    Operand loads are cp.async copies (size operand) and ld.global; stores are st.global."""
    loads, stores = [], []
    for line in ptx.splitlines():
        line = line.strip()
        if line.startswith("@"):
            line = line.split(None, 1)[1] if " " in line else ""
        op = line.split(None, 1)[0] if line else ""
        if op.startswith("cp.async.c") and ".shared.global" in op:
            m = re.search(r"\],\s*(0x[0-9a-fA-F]+|\d+)\s*[,;]", line)
            if not m:
                raise ValueError(f"no copy size in {line!r}")
            loads.append(int(m.group(1), 0))
        elif op.startswith("ld.global"):
            loads.append(access_bytes(op))
        elif op.startswith("st.global"):
            stores.append(access_bytes(op))
    return loads, stores


def configs():
    with open(ALIGNED_TABLE) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return sorted({(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"]))
                       for r in rows})


def config_key(cfg):
    bm, bn, bk, w, s = cfg
    return f"{bm}x{bn}x{bk}_w{w}_s{s}"


def compile_one(cls, cfg):
    """Compile one config of one class in this process; print the row as JSON."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_sweep import matmul_kernel
    bm, bn, bk, w, s = cfg
    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn", "stride_cm",
             "GROUP_SIZE_M", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"]
    sig = dict(zip(names, ["*fp16"] * 3 + ["i32"] * 7 + ["constexpr"] * 3))
    consts = {(10,): bm, (11,): bn, (12,): bk}
    k = triton.compile(ASTSource(matmul_kernel, sig, consts, alignment.divisibility_attrs(cls)),
                       target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": w, "num_stages": s})
    ptx = k.asm["ptx"]
    loads, stores = ptx_accesses(ptx)
    row = {"shared_bytes": k.metadata.shared, "wgmma": int("wgmma.mma_async" in ptx),
           "load_bytes": min(loads, default=0), "loads": len(loads),
           "store_bytes": min(stores, default=0), "stores": len(stores)}
    print("ROW " + json.dumps(row), flush=True)


def scalar_loads_per_thread(cfg):
    """2-byte operand loads one thread issues per K step when K is unaligned."""
    bm, bn, bk, w, _ = cfg
    return (bm + bn) * bk // (32 * w)


def run_one(job, limit_s):
    """Compile a (class, config) in a child process (its own session, killed whole at the
    time limit); the registers and spills come from Triton's ptxas log on its stdout."""
    cls, cfg = job
    row = {"class": cls, "bm": cfg[0], "bn": cfg[1], "bk": cfg[2], "w": cfg[3], "s": cfg[4]}
    env = dict(os.environ, TRITON_DUMP_PTXAS_LOG="1", TRITON_ALWAYS_COMPILE="1")
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--one", cls,
                          *map(str, cfg)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        row["status"] = "timeout"
        return row, ""
    got = [line[4:] for line in out.splitlines() if line.startswith("ROW ")]
    regs = re.search(r"Used (\d+) registers", out)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out)
    if p.returncode != 0 or not got or not regs or not spill:
        return row, (err.strip().splitlines() or ["no output"])[-1][:200]
    row.update(json.loads(got[-1]), status="ok", regs=int(regs.group(1)),
               spill_store_bytes=int(spill.group(1)), spill_load_bytes=int(spill.group(2)))
    return row, ""


def _key(row):
    return (row["class"], int(row["bm"]), int(row["bn"]), int(row["bk"]), int(row["w"]),
            int(row["s"]))


def sort_table(path):
    """Rewrite a finished table in class, then config order."""
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    order = {c: i for i, c in enumerate(alignment.CLASSES)}
    rows.sort(key=lambda r: (order[r["class"]],) + _key(r)[1:])
    with open(path, "w", newline="") as f:
        f.write(COMMENT + "\n")
        wr = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        wr.writeheader()
        wr.writerows(rows)
    return len(rows)


def _cfg(r):
    return tuple(int(r[k]) for k in ("bm", "bn", "bk", "w", "s"))


def summary(path):
    """Per class: statuses, spills, registers and shared memory against the aligned table,
    tensor-core path changes, access widths; for k and nk spills by loads per thread."""
    import statistics
    from collections import Counter
    with open(ALIGNED_TABLE) as f:
        al = {_cfg(r): r for r in csv.DictReader(x for x in f if not x.startswith("#"))}
    with open(path) as f:
        rows = list(csv.DictReader(x for x in f if not x.startswith("#")))
    spills = lambda r: int(r["spill_store_bytes"]) + int(r["spill_load_bytes"]) > 0  # noqa: E731
    for cls in alignment.UNALIGNED:
        rs = [r for r in rows if r["class"] == cls]
        ok = [r for r in rs if r["status"] == "ok"]
        if not ok:
            print(f"{cls}: no compiled rows")
            continue
        ratio = [int(r["regs"]) / int(al[_cfg(r)]["regs"]) for r in ok]
        one = sum(int(r["shared_bytes"]) == (int(r["bm"]) + int(r["bn"])) * int(r["bk"]) * 2
                  for r in ok)
        smaller = sum(int(r["shared_bytes"]) < int(al[_cfg(r)]["shared_bytes"]) for r in ok)
        print(f"{cls}: {dict(Counter(r['status'] for r in rs))}; spilling {sum(map(spills, ok))} "
              f"(aligned: {sum(spills(al[_cfg(r)]) for r in ok)}); registers / aligned median "
              f"{statistics.median(ratio):.2f} (min {min(ratio):.2f}, max {max(ratio):.2f}); "
              f"shared memory below the aligned {smaller}, one operand buffer {one}; "
              f"wgmma changed {sum(r['wgmma'] != al[_cfg(r)]['wgmma'] for r in ok)}; "
              f"load bytes {dict(sorted(Counter(r['load_bytes'] for r in ok).items()))}, "
              f"store bytes {dict(sorted(Counter(r['store_bytes'] for r in ok).items()))}")
        if cls != "n":
            by = {}
            for r in ok:
                lo = 1
                while lo * 2 <= scalar_loads_per_thread(_cfg(r)):
                    lo *= 2
                n, sp = by.get(lo, (0, 0))
                by[lo] = (n + 1, sp + spills(r))
            print("   spilling / compiled by 2-byte loads per thread (from): "
                  + ", ".join(f"{k}: {v[1]}/{v[0]}" for k, v in sorted(by.items())))


def main():
    args = sys.argv[1:]
    if args[:1] == ["--summary"] and len(args) == 2:
        summary(args[1])
        return
    if args[:1] == ["--one"]:
        compile_one(args[1], tuple(int(x) for x in args[2:7]))
        return
    if not args or args[0].startswith("-"):
        sys.exit("usage: unaligned_stats.py OUT.csv [--classes n,k,nk] [--jobs N] "
                 "[--only KEY,...] [--limit-s S]")
    if os.environ.get("TRITON_INTERPRET") == "1":
        sys.exit("unset TRITON_INTERPRET: this script compiles for sm_90a")
    dst = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    if len(args[1:]) % 2 or set(opts) - {"--classes", "--jobs", "--only", "--limit-s",
                                         "--max-scalar-loads"}:
        sys.exit(f"bad options: {' '.join(args[1:])}")
    classes = opts.get("--classes", ",".join(alignment.UNALIGNED)).split(",")
    bad = [c for c in classes if c not in alignment.UNALIGNED]
    if bad:
        sys.exit(f"unknown class {bad[0]!r} (one of {', '.join(alignment.UNALIGNED)})")
    try:
        jobs = int(opts.get("--jobs", "2"))
        limit_s = float(opts.get("--limit-s", "60"))
        max_loads = int(opts.get("--max-scalar-loads", "128"))
        assert jobs >= 1 and limit_s > 0 and max_loads >= 1
    except (ValueError, AssertionError):
        sys.exit("--jobs and --max-scalar-loads must be positive integers, --limit-s a "
                 "positive number")
    cfgs = configs()
    if "--only" in opts:
        want = set(opts["--only"].split(","))
        cfgs = [c for c in cfgs if config_key(c) in want]
        if not cfgs:
            sys.exit("no config of data/triton_sm90.csv matches --only")
    done = set()
    if os.path.exists(dst):
        with open(dst) as f:
            done = {_key(r) for r in csv.DictReader(line for line in f if not line.startswith("#"))}
    else:
        with open(dst, "w", newline="") as f:
            f.write(COMMENT + "\n")
            csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n").writeheader()
    todo = [(c, g) for c in classes for g in cfgs if (c,) + g not in done]
    skip = [j for j in todo if j[0] != "n" and scalar_loads_per_thread(j[1]) > max_loads]
    # Fewest loads per thread first: the K-unaligned tiles with many are the slow ones.
    work = sorted((j for j in todo if j not in skip),
                  key=lambda j: (scalar_loads_per_thread(j[1]), j[1][0] * j[1][1], j))
    t0 = time.time()
    errors = []
    with ThreadPoolExecutor(jobs) as pool, open(dst, "a", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        for cls, g in skip:
            wr.writerow({"class": cls, "bm": g[0], "bn": g[1], "bk": g[2], "w": g[3], "s": g[4],
                         "status": "skipped"})
        for i, (row, err) in enumerate(pool.map(lambda j: run_one(j, limit_s), work)):
            if err:
                errors.append(f"{row['class']} {config_key(_key(row)[1:])}: {err}")
                continue
            wr.writerow(row)
            f.flush()
            if (i + 1) % 50 == 0:
                print(f"{i + 1}/{len(work)} ({time.time() - t0:.0f} s)", flush=True)
    print(f"{len(skip)} configs over {max_loads} scalar loads per thread skipped")
    if errors:
        sys.exit("compile failed: " + errors[0]
                 + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    print(f"{sort_table(dst)} rows in {time.time() - t0:.0f} s -> {dst}")


if __name__ == "__main__":
    main()
