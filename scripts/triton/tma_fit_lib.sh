# Sourced by the triton-tma refit studies (tma_neighbour_fit.sh, tma_gpc_fit.sh) and probe fits
# (tma_padding_fit.sh, tma_epilogue_fit.sh, tma_edge_fit.sh, tma_fragment_fit.sh, tma_second_pass.sh,
# tma_joint_fit.sh, tma_resident_fit.sh), CPU only:
# the four-timing references and the refit and scoring lines they print.
# Needs $bench (target/release/origami-bench) and $work (a fresh folder) set.

# $base (exported as TMA_BASE for the scripts' Python steps): the constants the refit
# studies start from, $START_FILE or the family's file before the neighbour terms (what
# calibrations/fitted/h100-triton-tma.json was until 2026-11-28; the embedded file is now
# scripts/triton/tma_neighbour_fit.sh's output).
base=${START_FILE:-results/h100/triton-tma/fit/h100-triton-tma-min-n.json}
export TMA_BASE=$base

# tma_hold: the knobs the neighbour-share refits hold (measured or hand-set, not fitted):
# tma_neighbour_fit.sh's refits and tma_padding_fit.sh's check of them.
tma_hold=tp_wgmma_min_n,tp_fragment_read_weight,tp_prologue_loads,tp_dram_scale,tp_l2_active_exponent

# tma_four_reference: $work/four/configs.csv, each launch's median of its four timings: the
# seed list (sweep-seed and seed-passes3) to fit on, the LLM list (sweep-llm and llm-passes3)
# held out (scripts/triton/passes_reference.py).
tma_four_reference() {
    local tma=results/h100/triton-tma
    mkdir -p "$work/four"
    python3 scripts/triton/passes_reference.py "$tma/sweep-seed" "$tma/seed-passes3" "$work/seed4" >/dev/null
    python3 scripts/triton/passes_reference.py "$tma/sweep-llm" "$tma/llm-passes3" "$work/llm" >/dev/null
    { cat "$work/seed4/all.csv"; tail -n +2 "$work/llm/all.csv"; } >"$work/four/configs.csv"
}

# tma_refit START WRITE HOLD [ARGS...]: the constants of START refitted on the seed list
# (`origami-bench refit --rounds 6 --tau-weight 1`, HOLD's knobs held), written to WRITE;
# prints the fit set's and the held-out list's "after" lines.
tma_refit() {
    local start=$1 write=$2 hold=$3
    shift 3
    TRITONBLAS_HW_PARAMS=$start "$bench" refit --out "$work/four" --fit-set seed_shapes \
        --family triton-tma --gpu h100-sxm --rounds 6 --tau-weight 1 --hold "$hold" \
        --write "$write" "$@" 2>&1 |
        grep -E '^(fit set|held out), after  ' | sed -E 's/, after +/ /'
}

# tma_score FILE LABEL [ARGS...]: FILE's constants scored as they are (`--rounds 0`); prints
# the "before" lines with "(LABEL)" in place of ", before".
tma_score() {
    local file=$1 label=$2
    shift 2
    TRITONBLAS_HW_PARAMS=$file "$bench" refit --out "$work/four" --fit-set seed_shapes \
        --family triton-tma --gpu h100-sxm --rounds 0 "$@" 2>&1 |
        grep -E '^(fit set|held out), before  ' | sed -E "s/, before +/ ($label) /"
}

# tma_seed_tau LINES: the fit set's tau mean in tma_refit's lines.
tma_seed_tau() {
    echo "$1" | grep '^fit set' | sed -E 's/.*tau mean ([0-9.]+).*/\1/'
}

# tma_variant SRC OUT NAME=VALUE...: SRC's constants with those set (in the order given),
# written to OUT in the refit's own layout (two-space indent, a final newline).
tma_variant() {
    python3 - "$@" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
for setting in sys.argv[3:]:
    name, value = setting.split("=")
    d["constants"][name] = float(value)
with open(out, "w") as f:
    f.write(json.dumps(d, indent=2) + "\n")
PY
}

# tma_probe_run RUN: a copy of a probe's sweep RUN (configs.csv, shapes.csv) under
# $work/probe-runs/ without the shapes of the seed and LLM lists (a probe is of shapes outside
# both: the H100 padding probe's ladder 2048 x {512 ... 768} x 7168 holds the LLM list's
# 2048x576x7168, which no probe score counts since 2026-11-28, the session after); prints its path.
tma_probe_run() {
    local out=$work/probe-runs/${1//\//_}
    if [[ ! -f $out/configs.csv ]]; then
        mkdir -p "$out"
        python3 - "$1" "$out" <<'PY'
import csv, os, sys
run, out = sys.argv[1], sys.argv[2]
def listed(path):
    rows = [l for l in open(path) if not l.startswith("#")]
    return {(r["M"], r["N"], r["K"]) for r in csv.DictReader(rows)}
skip = listed("data/seed_shapes.csv") | listed("data/llm_shapes.csv")
for name in ("configs.csv", "shapes.csv"):
    with open(os.path.join(run, name), newline="") as f, open(os.path.join(out, name), "w", newline="") as g:
        r = csv.DictReader(f)
        w = csv.DictWriter(g, fieldnames=r.fieldnames, lineterminator="\n")
        w.writeheader()
        for row in r:
            if (row["m"], row["n"], row["k"]) not in skip:
                w.writerow(row)
PY
    fi
    echo "$out"
}

# tma_probe FILE RUN GPU DTYPE: "tau T rms R" of FILE's constants on a probe's sweep RUN, the
# seed and LLM lists' shapes left out (tma_probe_run): its Kendall tau, then the RMS of its
# per-shape log residuals (scripts/triton/probe_residuals.py).
tma_probe() {
    local run
    run=$(tma_probe_run "$2")
    TRITONBLAS_HW_PARAMS=$1 "$bench" refit --out "$run" --fit-set listed --family triton-tma \
        --gpu "$3" --dtype "$4" --rounds 0 --predictions "$work/probe-pred.csv" 2>&1 |
        grep -m1 '^fit set, before  ' | sed -E 's/.*tau mean ([0-9.]+).*/tau \1/' | tr '\n' ' '
    python3 scripts/triton/probe_residuals.py "$work/probe-pred.csv"
}

# tma_chain NAME PREV_SCRIPT PREV_JSON: the start of a probe fit that builds on an earlier fit:
# $bench checked (NAME in the message), a fresh $work, PREV_SCRIPT run with its output in
# $work/PREV_JSON (its report beside it, .txt), then the four-timing reference.
tma_chain() {
    [[ -x $bench ]] || { echo "$1: no $bench (cargo build --release)" >&2; exit 2; }
    rm -rf "$work"
    mkdir -p "$work"
    OUT_FILE=$work/$3 "$2" >"$work/${3%.json}.txt"
    tma_four_reference
}

# tma_probe_means FILE SPEC...: FILE's constants on each probe SPEC ("RUN GPU DTYPE LABEL");
# prints "TAU RMS LIST": the mean Kendall tau and mean RMS over the probes (4 decimals) and
# each probe's "LABEL tau T rms R", separated by "; ".
tma_probe_means() {
    local file=$1 spec run gpu dt label s sum_tau=0 sum_rms=0 line=""
    shift
    for spec in "$@"; do
        read -r run gpu dt label <<<"$spec"
        s=$(tma_probe "$file" "$run" "$gpu" "$dt")
        line+=" $label $s;"
        sum_tau=$(echo "$s" | awk -v a="$sum_tau" '{print a + $2}')
        sum_rms=$(echo "$s" | awk -v a="$sum_rms" '{print a + $4}')
    done
    awk -v t="$sum_tau" -v r="$sum_rms" -v n=$# 'BEGIN {printf "%.4f %.4f", t / n, r / n}'
    echo " ${line% ;}"
}

# tma_score_lists FILE LABEL: tma_score's lines of FILE in fp16 and bf16, without the oracle
# lines, indented by three spaces (the probe fits' reports).
tma_score_lists() {
    tma_score "$1" "$2" | grep -v oracle | sed 's/^/   /'
    tma_score "$1" "$2, bf16" --dtype bf16 | grep -v oracle | sed 's/^/   /'
}

# tma_write_choice W: a probe fit's choice $work/wW.json copied to $out_file, both said.
tma_write_choice() {
    echo "## chosen on the probes: W $1"
    cp "$work/w$1.json" "$out_file"
    echo "## written: $out_file"
}

# tma_probe_specs [POWER]: the probes of shapes outside both lists that the edge and fragment
# fits score on, one "RUN GPU DTYPE LABEL" a line: the H200 tile-pair probe (fp16), the two H200
# lockstep probes (fp16 and bf16), with POWER the H200 power-cap probe (fp16), the H100 padding
# probes (fp16).
tma_probe_specs() {
    local t=results/h200/triton-tma p dt
    echo "$t/tile-pair-probe/run h200 fp16 tile-pair-probe/h200/fp16"
    for p in lockstep-probe lockstep-probe2; do
        for dt in fp16 bf16; do echo "$t/$p/run h200 $dt $p/h200/$dt"; done
    done
    if [[ -n ${1:-} ]]; then echo "$t/power-probe/run h200 fp16 power-probe/h200/fp16"; fi
    for p in padding-probe padding-probe2; do
        echo "results/h100/triton-tma/$p/run h100-sxm fp16 $p/h100-sxm/fp16"
    done
}

# tma_best_on_probes W0 W...: the weight with the highest mean probe tau among W0 (the term's
# absence) and those Ws whose mean RMS is not above W0's, a tie in tau (the four decimals
# printed) going to the lower RMS; reads the caller's tau and rms arrays (tma_probe_means' first
# two fields, by weight).
tma_best_on_probes() {
    local base=$1 best=$1 w
    shift
    for w in "$@"; do
        if awk -v t="${tau[$w]}" -v tb="${tau[$best]}" -v r="${rms[$w]}" -v r0="${rms[$base]}" \
            -v rb="${rms[$best]}" 'BEGIN {exit !(r <= r0 && (t > tb || (t == tb && r < rb)))}'; then
            best=$w
        fi
    done
    echo "$best"
}

# tma_held_candidate KEY LABEL SRC NAME=VALUE...: a probe fit's candidate with SRC's other
# constants held: $work/wKEY.json, its probe means in the caller's tau and rms arrays (by KEY,
# over the caller's probes array), "## LABEL: probes mean tau T rms R ( ... )" and its lists'
# lines (tma_score_lists, labelled LABEL).
tma_held_candidate() {
    local key=$1 label=$2 src=$3 line
    shift 3
    tma_variant "$src" "$work/w$key.json" "$@"
    read -r tau[$key] rms[$key] line <<<"$(tma_probe_means "$work/w$key.json" "${probes[@]}")"
    echo "## $label: probes mean tau ${tau[$key]} rms ${rms[$key]} ( $line)"
    tma_score_lists "$work/w$key.json" "$label"
}

# tma_refit_candidate KEY LABEL SRC NAME=VALUE...: the same with the other constants refitted on
# the seed list (tma_refit from $work/start-KEY.json, tma_hold's knobs held): "## LABEL: refitted
# on the seed list", the refit's lines, "   probes mean tau T rms R ( ... )", the lists' lines.
tma_refit_candidate() {
    local key=$1 label=$2 src=$3 line
    shift 3
    tma_variant "$src" "$work/start-$key.json" "$@"
    echo "## $label: refitted on the seed list"
    tma_refit "$work/start-$key.json" "$work/w$key.json" "$tma_hold" | sed 's/^/   /'
    read -r tau[$key] rms[$key] line <<<"$(tma_probe_means "$work/w$key.json" "${probes[@]}")"
    echo "   probes mean tau ${tau[$key]} rms ${rms[$key]} ( $line)"
    tma_score_lists "$work/w$key.json" "$label"
}
