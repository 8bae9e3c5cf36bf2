#!/usr/bin/env bash
# CPU only (issue 15, section 4): the predicted time/energy fronts of the hopper family on
# the H100 preset, both shape lists, at the GPU's own limit (700 W) and three lower limits
# for planning, with the committed energy costs (calibrations/energy/h100-sxm.json), and
# the energy and sustained-time picks at each limit (and the burst-time pick at 700 W).
# Writes OUT_DIR/fronts-LIST-W.csv, OUT_DIR/picks-LIST-OBJECTIVE-W.csv and OUT_DIR/fronts-llm-700.png. Usage: predicted_fronts.sh OUT_DIR
set -eu
out=${1:?output folder}
sel=${ORIGAMI_SELECT:-target/release/origami-select}
mkdir -p "$out"
for w in 700 550 400 300; do
    for list in seed llm; do
        $sel --shapes data/${list}_shapes.csv --family hopper --gpu h100-sxm --pareto \
            --power-limit $w --format csv > "$out/fronts-$list-$w.csv"
        for obj in energy sustained; do
            $sel --shapes data/${list}_shapes.csv --family hopper --gpu h100-sxm \
                --objective $obj --power-limit $w --format csv > "$out/picks-$list-$obj-$w.csv"
        done
    done
done
# the model's own (burst-time) pick, priced under the GPU's own limit (700 W)
for list in seed llm; do
    $sel --shapes data/${list}_shapes.csv --family hopper --gpu h100-sxm --objective time \
        --energy-costs calibrations/energy/h100-sxm.json --format csv > "$out/picks-$list-time-700.csv"
done
$sel --shapes data/llm_shapes.csv --family hopper --gpu h100-sxm --pareto --format csv \
    --plot "$out/fronts-llm-700.png" > /dev/null
