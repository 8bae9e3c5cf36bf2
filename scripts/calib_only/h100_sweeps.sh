# Sourced by the calibration-only scripts: the H100 sweeps nothing was fitted on, in the
# layout `origami-bench refit --out DIR` reads. h100_sweep_configs TRITON_DIR ORIGAMI_DIR
# writes TRITON_DIR/configs.csv (results/h100/triton-auto/classic2, the triton family's 16
# LLM shapes) and ORIGAMI_DIR/configs.csv (results/h100/device-check/whole, the origami
# family's 6 shapes).
h100_sweep_configs() {
  mkdir -p "$1" "$2"
  zcat results/h100/triton-auto/classic2/configs.csv.gz >"$1/configs.csv"
  if [[ -f results/h100/device-check/whole/configs.csv.gz ]]; then
    zcat results/h100/device-check/whole/configs.csv.gz >"$2/configs.csv"
  else
    cp results/h100/device-check/whole/configs.csv "$2/configs.csv"
  fi
}
