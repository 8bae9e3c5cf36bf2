#!/usr/bin/env bash
# Calibrate one GPU with origami-calibrate, name the JSON after the GPU model, and check it.
#
#   scripts/calibrate-artifact.sh [OUT_DIR]        (default: calibration-artifacts)
#
# Environment: ORIGAMI_CALIBRATE (binary; default: target/release/origami-calibrate, else
# origami-calibrate on PATH), RUNS (default 5), DEVICE (default 0), EXTRA_ARGS.
# Writes OUT_DIR/<model>.json (e.g. h200.json, h100-80gb-hbm3.json) and OUT_DIR/<model>.txt
# (the human summary). Exit code: origami-calibrate's (3 unstable, 4 no GPU, ...).
set -euo pipefail

out_dir=${1:-calibration-artifacts}
runs=${RUNS:-5}
device=${DEVICE:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${ORIGAMI_CALIBRATE:-}
if [[ -z "$bin" ]]; then
  if [[ -x "$here/target/release/origami-calibrate" ]]; then
    bin="$here/target/release/origami-calibrate"
  else
    bin=origami-calibrate
  fi
fi

mkdir -p "$out_dir"
tmp_json=$(mktemp "$out_dir/.calibration.XXXXXX")
tmp_txt=$(mktemp "$out_dir/.summary.XXXXXX")
trap 'rm -f "$tmp_json" "$tmp_txt"' EXIT

start=$(date +%s.%N)
# shellcheck disable=SC2086
"$bin" --runs "$runs" --device "$device" --output "$tmp_json" --format text ${EXTRA_ARGS:-} >"$tmp_txt"
end=$(date +%s.%N)

# The first "name" of the document is the GPU's (gpu.name).
name=$(grep -m1 '"name"' "$tmp_json" | sed -E 's/.*"name": *"([^"]*)".*/\1/')
model=$(printf '%s' "$name" | tr '[:upper:]' '[:lower:]' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
if [[ -z "$model" ]]; then
  echo "calibrate-artifact: could not read the GPU name from the output" >&2
  exit 1
fi

mv "$tmp_json" "$out_dir/$model.json"
{
  cat "$tmp_txt"
  printf '\ncommand: %s --runs %s --device %s %s\nwall time: %.1f s\n' "$(basename "$bin")" "$runs" "$device" "${EXTRA_ARGS:-}" "$(echo "$end - $start" | bc)"
} >"$out_dir/$model.txt"

"$bin" --check "$out_dir/$model.json" --require-measured
echo "calibrate-artifact: $out_dir/$model.json ($name)"
