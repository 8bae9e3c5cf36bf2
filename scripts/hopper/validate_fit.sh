#!/usr/bin/env bash
# The fitted hopper family's picks against the brute force of the same run: both shape
# lists swept again (every config timed, the pick now the fitted model's), fp16.
# Device only; origami-bench (built with calibrations/fitted/h200-hopper.json embedded)
# carried as target/devbin/origami-bench.xz. Usage: scripts/hopper/validate_fit.sh
set -u
bash scripts/hopper/sweep_seed.sh 200 seed >"$OUT/seed.log" 2>&1
tail -n 3 "$OUT/seed.log"
bash scripts/hopper/sweep_seed.sh 250 llm >"$OUT/llm.log" 2>&1
tail -n 3 "$OUT/llm.log"
