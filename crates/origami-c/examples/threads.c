/* One selector shared by threads that C created (POSIX threads): every thread's picks
 * equal the main thread's, and each thread's last error is its own. Exits 0 when they
 * do, 1 otherwise.
 *
 * Build and run (from the repository root):
 *   cargo build --release -p origami-c
 *   gcc -std=c11 -Wall -Wextra -Werror -pthread -Icrates/origami-c/include \
 *       crates/origami-c/examples/threads.c target/release/liborigami_c.a \
 *       -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/select-threads
 *   ./target/select-threads
 */

#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "origami.h"

enum { THREADS = 8, SHAPES = 6, ROUNDS = 50 };

static const origami_shape shapes[SHAPES] = {
    {4096, 4096, 4096}, {1, 6144, 4096}, {128, 8192, 28672},
    {3000, 3000, 3000}, {8192, 128, 4096}, {64, 64, 64}};

/* origami_pick has no padding bytes, so memcmp compares its fields and nothing else. */
_Static_assert(sizeof(origami_pick) == 7 * 8 + 8 * 4 + 3 + 5 + 3 * ORIGAMI_NAME_CAPACITY +
                                           ORIGAMI_CONFIG_CAPACITY,
               "origami_pick has padding");

static origami_selector *sel;
static origami_pick expected[SHAPES];

struct job {
  int id;
  int failures;
};

static void *work(void *arg) {
  struct job *job = arg;
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < SHAPES; i++) {
      const origami_shape *s = &shapes[(i + job->id) % SHAPES];
      const origami_pick *want = &expected[(i + job->id) % SHAPES];
      if ((r + job->id) % 3 == 0) {
        /* a failure on this thread alone */
        origami_pick bad;
        if (origami_select(sel, s->m, s->n, s->k, "int3", &bad) != ORIGAMI_STATUS_BAD_INPUT ||
            strncmp(origami_last_error(), "--dtype: ", 9) != 0) {
          job->failures++;
        }
      }
      origami_pick p;
      if (origami_select(sel, s->m, s->n, s->k, "fp16", &p) != ORIGAMI_STATUS_OK ||
          origami_last_error()[0] != '\0' || memcmp(&p, want, sizeof p) != 0) {
        job->failures++;
      }
    }
  }
  return NULL;
}

int main(void) {
  if (origami_selector_new(NULL, "h100-sxm", "triton-auto", &sel) != ORIGAMI_STATUS_OK) {
    fprintf(stderr, "origami_selector_new: %s\n", origami_last_error());
    return 1;
  }
  for (int i = 0; i < SHAPES; i++) {
    if (origami_select(sel, shapes[i].m, shapes[i].n, shapes[i].k, "fp16", &expected[i]) !=
        ORIGAMI_STATUS_OK) {
      fprintf(stderr, "origami_select: %s\n", origami_last_error());
      return 1;
    }
  }
  /* the main thread's own error, which the others must leave alone */
  origami_pick bad;
  origami_select(sel, 0, 1, 1, "fp16", &bad);
  char mine[256];
  snprintf(mine, sizeof mine, "%s", origami_last_error());

  pthread_t t[THREADS];
  struct job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (struct job){i, 0};
    if (pthread_create(&t[i], NULL, work, &jobs[i]) != 0) return 1;
  }
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    failures += jobs[i].failures;
  }
  if (strcmp(mine, origami_last_error()) != 0 || mine[0] == '\0') failures++;
  origami_selector_free(sel);
  printf("%d threads x %d rounds x %d shapes: %d failures\n", THREADS, ROUNDS, SHAPES, failures);
  return failures == 0 ? 0 : 1;
}
