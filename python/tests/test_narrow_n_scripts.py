"""scripts/triton/picks_compare.py (two sets of picks against one validation run),
scripts/triton/narrow_n_summary.py (the Nsight Compute probes' L2 reads against the boxes) and
scripts/triton/gpc_merge_fit.py (the GPC merge shares from those reads)."""
import io
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts", "triton")
COMPARE = os.path.join(SCRIPTS, "picks_compare.py")
SUMMARY = os.path.join(SCRIPTS, "narrow_n_summary.py")
GPC_FIT = os.path.join(SCRIPTS, "gpc_merge_fit.py")
LAUNCHES = os.path.join(SCRIPTS, "ncu_launches_summary.py")
TWINS = os.path.join(SCRIPTS, "twins_summary.py")
H100_TOPOLOGY = os.path.join(HERE, "..", "..", "calibrations", "topology", "h100-sxm.json")

MEAS = "set,m,n,k,dtype,config,status,us,block_m\n"
PICKS = "       M        N        K dtype  pick                          predicted_us\n"


def run(*args):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)


def archive_of(path, files):
    """A .tgz at `path` holding `files` (member name -> text); an empty one for {}."""
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def refused_empty(script, tmp_path, why):
    """`script` on an empty archive exits 2 and says `why`."""
    p = run(script, archive_of(tmp_path / "empty.tgz", {}))
    assert p.returncode == 2
    assert why in p.stderr


def test_two_sets_of_picks_scored_on_the_same_run(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # a seed shape (64^3) and a held-out one; cuBLAS rows and failed launches do not count
    (run_dir / "measurements.csv").write_text(
        MEAS + "seed,64,64,64,fp16,cublas_before,ok,1.0,\n"
        "seed,64,64,64,fp16,a,ok,10.0,64\nseed,64,64,64,fp16,b,ok,20.0,64\n"
        "llm,17,4096,4096,fp16,a,ok,8.0,64\nllm,17,4096,4096,fp16,b,ok,10.0,64\n"
        "llm,17,4096,4096,fp16,c,failed,1.0,64\n")
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text(PICKS + "      64       64       64  fp16  a  1.0\n"
                   "      17     4096     4096  fp16  a  1.0\n")
    new.write_text(PICKS + "      64       64       64  fp16  b  1.0\n"
                   "      17     4096     4096  fp16  c  1.0\n")
    p = run(COMPARE, old, new, run_dir)
    assert p.returncode == 0, p.stderr
    # the held-out shape's new pick failed: listed and left out of both
    assert "not timed: 17x4096x4096 fp16 old a new c" in p.stdout
    assert "64x64x64 fp16  old a" in p.stdout and "1.000" in p.stdout and "0.500" in p.stdout
    assert "seed      fp16       1        1.000  1.000  1.000        0.500  0.500  0.500" in p.stdout
    assert "held out" not in p.stdout.split("list")[1]


def test_picks_compare_refuses_a_missing_run(tmp_path):
    picks = tmp_path / "p.txt"
    picks.write_text(PICKS + "      64       64       64  fp16  a  1.0\n")
    p = run(COMPARE, picks, picks, tmp_path / "nowhere")
    assert p.returncode == 2
    assert p.stderr.strip().startswith("picks_compare:")


def ncu_csv(metrics):
    head = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
    rows = "".join(f'"0","k","s","{n}","","{v}"\n' for n, v in metrics.items())
    return "==PROF== preamble\n" + head + rows


def test_l2_reads_against_the_boxes_asked_for(tmp_path):
    archive = archive_of(tmp_path / "probe.tgz", {
        "probe/128x64x128_g8_w4_s4.csv": ncu_csv({
            "gpu__time_duration.sum": "318,016",
            "lts__t_sectors_srcunit_tex_op_read.sum": "85,197,432",
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed": "46.90",
            "dram__bytes_read.sum": "168,049,152"}),
        "probe/4100x576x7168_128x256x64_g1_w8_s3.csv": ncu_csv({
            "gpu__time_duration.sum": "80,000",
            "lts__t_sectors_srcunit_tex_op_read.sum": "1,000,000"}),
        "probe/4100x1536x7168_64x256x64_g8_w4_s4_flatten.csv": ncu_csv({
            "gpu__time_duration.sum": "132,000",
            "lts__t_sectors_srcunit_tex_op_read.sum": "1,000,000"}),
        "probe/configs.csv": "config\n",
    })
    p = run(SUMMARY, archive, "--shape", "4096x4096x4096")
    assert p.returncode == 0, p.stderr
    line = [x for x in p.stdout.splitlines() if "128x64x128,g8,w4,s4" in x][0]
    # 2048 tiles x 192 rows x 4096 x 2 bytes = 3.22 GB asked for; 85.2 M sectors x 32 = 2.73 GB
    assert line.split() == ["4096x4096x4096", "128x64x128,g8,w4,s4", "318.0", "46.9", "nan",
                            "nan", "2.73", "3.22", "0.85", "0.168"]
    # a probe that names its shape: 4100x576x7168, 33 x 3 tiles of 128 x 256
    line = [x for x in p.stdout.splitlines() if x.startswith("4100x576x7168")][0]
    assert line.split()[1] == "128x256x64,g1,w8,s3"
    assert line.split()[7] == f"{99 * 384 * 7168 * 2 / 1e9:.2f}"
    # a probe with a switch keeps it in its config
    line = [x for x in p.stdout.splitlines() if x.startswith("4100x1536x7168")][0]
    assert line.split()[1] == "64x256x64,g8,w4,s4,flatten"


def test_summary_refuses_an_archive_without_probes(tmp_path):
    refused_empty(SUMMARY, tmp_path, "no ncu CSV")


GAIN = os.path.join(SCRIPTS, "groups_gain.py")


def test_what_choosing_the_group_would_buy(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "measurements.csv").write_text(
        "m,n,k,dtype,config,status,us,block_m\n"
        "64,64,64,fp16,cublas_before,ok,1.0,\n"
        "64,64,64,fp16,\"64x64x64,g8,w4,s3\",ok,10.0,64\n"
        "64,64,64,fp16,\"64x64x64,g1,w4,s3\",ok,8.0,64\n"
        "64,64,64,fp16,\"64x64x128,g8,w4,s3\",ok,9.0,64\n"
        "64,64,64,fp16,\"64x64x128,g16,w4,s3\",ok,9.9,64\n")
    p = run(GAIN, run_dir)
    assert p.returncode == 0, p.stderr
    # best at 8: 9.0 us; best anywhere: 8.0 at group 1; gain 1.125
    assert "9.0        8.0  1.125  64x64x64,g1,w4,s3" in p.stdout
    assert "median 1.125, max 1.125; its group: 1 (1)" in p.stdout
    # tiles: 64x64x64 10/8 = 1.25, 64x64x128 9.0/9.0 = 1.0
    assert "median 1.125, 90th percentile 1.000, max 1.250 (2 tiles x shapes)" in p.stdout


def test_groups_gain_refuses_a_folder_without_measurements(tmp_path):
    p = run(GAIN, tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("groups_gain:")


BIMODAL = os.path.join(SCRIPTS, "tma_bimodal_summary.py")


def test_rounds_summarised_per_file_and_config(tmp_path):
    (tmp_path / "keep.csv").write_text(
        "round,config,us,us_min,us_max,a_addr,b_addr,sm_mhz\n"
        "0,\"a,g8\",100.0,99,101,0x1,0x2,1980\n1,\"a,g8\",110.0,109,111,0x1,0x2,1965\n"
        "2,\"a,g8\",90.0,89,91,0x1,0x2,1980\n")
    p = run(BIMODAL, tmp_path)
    assert p.returncode == 0, p.stderr
    assert "keep.csv: the same buffers and values (3 rounds); SM clock read after each " \
           "timing: 1965, 1980 MHz" in p.stdout
    assert "median  100.0  min   90.0  max  110.0  max/min 1.22" in p.stdout


def test_bimodal_summary_refuses_a_folder_without_rounds(tmp_path):
    p = run(BIMODAL, tmp_path)
    assert p.returncode == 2
    assert "none of the round files" in p.stderr


SUMMARY_HEAD = ("shape           config     us  tensor%  L2SOL%  L2sectors%  L2readGB  boxesGB  "
                "read/boxes  DRAMGB\n")


def test_gpc_counts_match_the_model_and_the_shares_are_fitted(tmp_path):
    # the H100 placement's distinct boxes per GPC, as model::gpc_share's test pins them:
    # 4096^3 in 128 x 64 tiles (d_A 256/528, d_B 76/528), 4100x576x7168 in 128 x 256 (83/99,
    # 18/99); reads made from known shares c_A 0.4, c_B 0.8 give them back
    cases = [("4096x4096x4096", "128x64x128,g8,w4,s4", 128, 64, 256 / 528, 76 / 528),
             ("4100x576x7168", "128x256x64,g8,w8,s3", 128, 256, 83 / 99, 18 / 99)]
    rows = []
    for shape, cfg, bm, bn, da, db in cases:
        f = 1 - (bm * 0.4 * (1 - da) + bn * 0.8 * (1 - db)) / (bm + bn)
        rows.append(f"{shape}  {cfg}  1.0  1.0  nan  1.0  1.0  1.0  {f:.6f}  0.1")
    summary = tmp_path / "summary.txt"
    summary.write_text(SUMMARY_HEAD + "\n".join(rows) + "\n")
    p = run(GPC_FIT, H100_TOPOLOGY, summary)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert out[1].split()[3:5] == [f"{256 / 528:.2f}", f"{76 / 528:.2f}"]
    assert out[2].split()[3:5] == [f"{83 / 99:.2f}", f"{18 / 99:.2f}"]
    assert "tp_l2_gpc_merge_a 0.400  tp_l2_gpc_merge_b 0.800" in out[-1]


def test_gpc_fit_refuses_a_document_without_a_topology(tmp_path):
    doc = tmp_path / "doc.json"
    doc.write_text('{"measurements": []}')
    summary = tmp_path / "summary.txt"
    summary.write_text(SUMMARY_HEAD)
    p = run(GPC_FIT, doc, summary)
    assert p.returncode == 2
    assert "no sm_topology" in p.stderr


def test_launches_summarised_with_their_spread(tmp_path):
    head = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    rows = []
    for lid, ns, dram in ((0, "100,000", "70,000,000"), (1, "80,000", "67,000,000")):
        rows.append(f'"{lid}","k","gpu__time_duration.sum","ns","{ns}"')
        rows.append(f'"{lid}","k","dram__bytes_read.sum","byte","{dram}"')
        rows.append(f'"{lid}","k","lts__t_sectors_srcunit_tex_lookup_hit.sum","sector","3"')
        rows.append(f'"{lid}","k","lts__t_sectors_srcunit_tex_lookup_miss.sum","sector","1"')
    archive = archive_of(tmp_path / "launches.tgz", {
        "probe/128x256x64_g8_w8_s3.csv": "==PROF== noise\n" + head + "\n".join(rows) + "\n"})
    p = run(LAUNCHES, archive)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "128x256x64_g8_w8_s3"
    first = lines[2].split()
    assert first[0] == "0" and first[1] == "100.000" and first[4] == "70.000" and first[-1] == "75.0"
    assert "us 1.250" in lines[-1] and "DRAM MB 1.045" in lines[-1]


def test_launches_summary_refuses_an_archive_without_launches(tmp_path):
    refused_empty(LAUNCHES, tmp_path, "no ncu CSV")


def test_twins_timed_both_ways_round(tmp_path):
    head = "round,config,us,us_min,us_max,a_addr,b_addr,sm_mhz\n"
    rows = ['0,"128x256x64,g8,w8,s3",110.0,1,1,0x0,0x0,1980',
            '0,"128x256x64,g8,w8,s3,flatten",100.0,1,1,0x0,0x0,1980',
            '0,"128x256x64,g8,w8,s3,flatten",100.0,1,1,0x0,0x0,1500',
            '0,"128x256x64,g8,w8,s3",90.0,1,1,0x0,0x0,1500',
            '1,"128x256x64,g8,w8,s3",120.0,1,1,0x0,0x0,1500',
            '1,"128x256x64,g8,w8,s3,flatten",100.0,1,1,0x0,0x0,1500']
    archive = archive_of(tmp_path / "twins.tgz", {
        "flatten-twins/4096x4096x4096-fp16.csv": head + "\n".join(rows) + "\n"})
    p = run(TWINS, archive)
    assert p.returncode == 0, p.stderr
    # round 0: (110 + 90) / 2 over 100 = 1.000; round 1: 1.200; median 1.100
    assert p.stdout.split() == ["4096x4096x4096-fp16", "plain/flatten", "per", "round", "1.000",
                                "1.200", "median", "1.100", "SM", "1500-1980", "MHz"]


def test_twins_summary_refuses_an_archive_without_rounds(tmp_path):
    refused_empty(TWINS, tmp_path, "no rounds")
