/* Timing of origami's C interface from C (a benchmark, not a test): one origami_select
 * answered from the selector's cache, one computed afresh (a selector with no cache), and
 * a batch of 10,000 shapes through origami_select_batch. Each figure is the median of
 * ROUNDS rounds on one thread.
 *
 * Build and run (from the repository root):
 *   cargo build --release -p origami-c
 *   gcc -std=c11 -O2 -Wall -Wextra -Werror -Icrates/origami-c/include \
 *       crates/origami-c/examples/bench.c target/release/liborigami_c.a \
 *       -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/select-bench
 *   ./target/select-bench [gpu-preset] [family]
 */

#define _POSIX_C_SOURCE 199309L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "origami.h"

enum { ROUNDS = 5, CACHED_CALLS = 200000, UNCACHED_CALLS = 200, BATCH = 10000 };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static void die(origami_status s, const char *what) {
  fprintf(stderr, "%s: %s: %s\n", what, origami_status_name(s), origami_last_error());
  exit(1);
}

static origami_selector *make(const char *gpu, const char *family, int64_t cache) {
  origami_options o;
  origami_status s = origami_options_init(&o);
  if (s != ORIGAMI_STATUS_OK) die(s, "origami_options_init");
  o.gpu = gpu;
  o.family = family;
  o.cache_entries = cache;
  origami_selector *sel = NULL;
  s = origami_selector_new_with(&o, &sel);
  if (s != ORIGAMI_STATUS_OK) die(s, "origami_selector_new_with");
  return sel;
}

/* A fixed pseudo-random mix of shapes: M 1..8192, N and K multiples of 64 up to 16384. */
static void shapes_of(origami_shape *out, size_t n) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    out[i].m = 1 + (x >> 33) % 8192;
    out[i].n = 64 * (1 + (x >> 17) % 256);
    out[i].k = 64 * (1 + (x >> 45) % 256);
  }
}

int main(int argc, char **argv) {
  const char *gpu = argc > 1 ? argv[1] : "h100-sxm";
  const char *family = argc > 2 ? argv[2] : "triton";
  double t[ROUNDS];
  origami_pick p;
  origami_status s;
  printf("origami %s, gpu %s, family %s, %d rounds, median\n", origami_version(), gpu, family,
         ROUNDS);

  /* setup (a selector, its first selection builds the fp16 selector) */
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_s();
    origami_selector *sel = make(gpu, family, -1);
    s = origami_select(sel, 4096, 4096, 4096, "fp16", &p);
    if (s != ORIGAMI_STATUS_OK) die(s, "origami_select");
    t[r] = now_s() - t0;
    origami_selector_free(sel);
  }
  printf("selector_new + first select:   %10.3f ms\n", 1e3 * median(t, ROUNDS));

  /* cached: the same shape again and again */
  origami_selector *cached = make(gpu, family, -1);
  s = origami_select(cached, 4096, 4096, 4096, "fp16", &p);
  if (s != ORIGAMI_STATUS_OK) die(s, "origami_select");
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_s();
    for (int i = 0; i < CACHED_CALLS; i++) {
      s = origami_select(cached, 4096, 4096, 4096, "fp16", &p);
      if (s != ORIGAMI_STATUS_OK) die(s, "origami_select");
    }
    t[r] = (now_s() - t0) / CACHED_CALLS;
  }
  printf("origami_select, cached:        %10.3f us/call (%d calls a round)\n",
         1e6 * median(t, ROUNDS), CACHED_CALLS);

  /* uncached: a selector with no cache, distinct shapes */
  origami_selector *uncached = make(gpu, family, 0);
  origami_shape *shapes = malloc(sizeof *shapes * BATCH);
  origami_pick *picks = malloc(sizeof *picks * BATCH);
  int32_t *statuses = malloc(sizeof *statuses * BATCH);
  if (!shapes || !picks || !statuses) return 1;
  shapes_of(shapes, BATCH);
  s = origami_select(uncached, 4096, 4096, 4096, "fp16", &p);
  if (s != ORIGAMI_STATUS_OK) die(s, "origami_select");
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_s();
    for (int i = 0; i < UNCACHED_CALLS; i++) {
      const origami_shape *sh = &shapes[i];
      s = origami_select(uncached, sh->m, sh->n, sh->k, "fp16", &p);
      if (s != ORIGAMI_STATUS_OK) die(s, "origami_select");
    }
    t[r] = (now_s() - t0) / UNCACHED_CALLS;
  }
  printf("origami_select, uncached:      %10.3f us/call (%d shapes a round)\n",
         1e6 * median(t, ROUNDS), UNCACHED_CALLS);

  /* a batch of 10,000 shapes */
  size_t ok_rows = 0;
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_s();
    s = origami_select_batch(cached, shapes, BATCH, "fp16", picks, statuses);
    t[r] = now_s() - t0;
    ok_rows = 0;
    for (size_t i = 0; i < BATCH; i++) ok_rows += statuses[i] == ORIGAMI_STATUS_OK;
  }
  double b = median(t, ROUNDS);
  printf("origami_select_batch, %d:   %10.3f ms (%.3f us/shape, %zu rows OK, status %s)\n",
         BATCH, 1e3 * b, 1e6 * b / BATCH, ok_rows, origami_status_name(s));

  free(shapes);
  free(picks);
  free(statuses);
  origami_selector_free(cached);
  origami_selector_free(uncached);
  return 0;
}
