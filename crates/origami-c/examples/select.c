/* origami's C interface in use: picks for a few shapes, the three best configs of one,
 * a batch with one bad row, and an error case that prints the last error.
 *
 * Build and run (from the repository root):
 *   cargo build --release -p origami-c
 *   gcc -std=c11 -Wall -Wextra -Werror -Icrates/origami-c/include \
 *       crates/origami-c/examples/select.c target/release/liborigami_c.a \
 *       -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/select-example
 *   ./target/select-example [gpu-preset] [family]
 *
 * Exits 0 when every call behaved as documented, 1 otherwise. */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "origami.h"

static int failures = 0;

/* Report a call that should have worked and did not. */
static int ok(origami_status s, const char *what) {
  if (s != ORIGAMI_STATUS_OK) {
    fprintf(stderr, "%s: %s (%d): %s\n", what, origami_status_name(s), (int)s,
            origami_last_error());
    failures++;
    return 0;
  }
  return 1;
}

static void print_pick(const origami_pick *p) {
  printf("%" PRIu64 "x%" PRIu64 "x%" PRIu64 " %s %s: %s  BLOCK %ux%ux%u GROUP_SIZE_M=%u "
         "num_warps=%u num_stages=%u grid=%" PRIu64 " smem=%" PRIu64 " predicted %.2f us\n",
         p->m, p->n, p->k, p->dtype, p->family, p->config, p->block_m, p->block_n, p->block_k,
         p->group_m, p->num_warps, p->num_stages, p->grid, p->smem_bytes, p->predicted_us);
}

int main(int argc, char **argv) {
  const char *gpu = argc > 1 ? argv[1] : "h100-sxm";
  const char *family = argc > 2 ? argv[2] : "triton-auto";

  printf("origami %s (ABI %u, header ABI %d)\n", origami_version(), origami_abi_version(),
         ORIGAMI_ABI_VERSION);
  if (origami_abi_version() != ORIGAMI_ABI_VERSION) {
    fprintf(stderr, "library and header ABI differ\n");
    return 1;
  }

  origami_selector *sel = NULL;
  if (!ok(origami_selector_new(NULL, gpu, family, &sel), "origami_selector_new")) {
    return 1;
  }
  printf("selector: family %s on %s\n", origami_selector_family(sel), gpu);

  /* 1. single picks */
  static const uint64_t shapes[][3] = {{4096, 4096, 4096}, {1, 6144, 4096}, {128, 8192, 28672}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    origami_pick p;
    if (ok(origami_select(sel, shapes[i][0], shapes[i][1], shapes[i][2], "fp16", &p),
           "origami_select")) {
      print_pick(&p);
    }
  }

  /* 2. the three best configs of one shape */
  origami_pick top[3];
  size_t written = 0;
  if (ok(origami_select_top(sel, 4096, 4096, 4096, "fp16", top, 3, &written),
         "origami_select_top")) {
    printf("top %zu of 4096x4096x4096:\n", written);
    for (size_t i = 0; i < written; i++) {
      printf("  %zu. %s %.2f us\n", i + 1, top[i].config, top[i].predicted_us);
    }
    if (written != 3 || top[0].predicted_us > top[1].predicted_us) {
      fprintf(stderr, "top: expected 3 configs, best first\n");
      failures++;
    }
  }

  /* 3. a batch: the second row is bad (M = 0) and fails alone */
  origami_shape batch[4] = {{2048, 2048, 2048}, {0, 4096, 4096}, {8192, 128, 4096},
                            {3000, 3000, 3000}};
  origami_pick picks[4];
  int32_t statuses[4];
  origami_status bs = origami_select_batch(sel, batch, 4, "bf16", picks, statuses);
  printf("batch: %s (%s)\n", origami_status_name(bs), origami_last_error());
  for (size_t i = 0; i < 4; i++) {
    printf("  row %zu: %s %s\n", i, origami_status_name(statuses[i]),
           statuses[i] == ORIGAMI_STATUS_OK ? picks[i].config : "-");
  }
  if (bs != ORIGAMI_STATUS_BAD_INPUT || statuses[1] != ORIGAMI_STATUS_BAD_INPUT ||
      statuses[0] != ORIGAMI_STATUS_OK || statuses[3] != ORIGAMI_STATUS_OK) {
    fprintf(stderr, "batch: expected row 1 alone to fail\n");
    failures++;
  }

  /* 4. an error case: an unknown input type, then the message copied out */
  origami_pick bad;
  origami_status es = origami_select(sel, 4096, 4096, 4096, "int3", &bad);
  printf("error case: %s: %s\n", origami_status_name(es), origami_last_error());
  char msg[512];
  size_t needed = 0;
  if (es != ORIGAMI_STATUS_BAD_INPUT ||
      origami_last_error_copy(msg, sizeof msg, &needed) != ORIGAMI_STATUS_OK ||
      strncmp(msg, "--dtype: ", 9) != 0) {
    fprintf(stderr, "error case: expected BAD_INPUT with a --dtype message\n");
    failures++;
  }

  /* 5. NULL is refused, not a crash */
  if (origami_select(NULL, 1, 1, 1, "fp16", &bad) != ORIGAMI_STATUS_NULL_ARGUMENT) {
    fprintf(stderr, "a NULL selector was not refused\n");
    failures++;
  }

  origami_selector_free(sel);
  printf("%s\n", failures == 0 ? "all calls behaved" : "some calls misbehaved");
  return failures == 0 ? 0 : 1;
}
