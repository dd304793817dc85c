/* Cooperative threads that take turns (vm_internal.h, VmBaton): the block
 * VM's warps in a warp branch that waits on rings, the thread-level VM's
 * two sides of a divergent if that polls mbarriers. One task runs at a
 * time; the caller's thread schedules them. */
#include "vm_internal.h"

enum { TURN_SCHEDULER = -1 };

typedef struct BatonTask {
  VmBaton *b;
  int64_t i;
} BatonTask;

static void wait_turn(VmBaton *b, int64_t i) {
  while (b->turn != i)
    pthread_cond_wait(&b->cv, &b->mu);
}

static void *task_main(void *p) {
  BatonTask *t = p;
  VmBaton *b = t->b;
  pthread_mutex_lock(&b->mu);
  wait_turn(b, t->i);
  pthread_mutex_unlock(&b->mu);
  bool ok = !b->abort && b->body(b->ctx, t->i);
  pthread_mutex_lock(&b->mu);
  b->ok[t->i] = ok;
  b->state[t->i] = VB_DONE;
  b->turn = TURN_SCHEDULER;
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

void vm_baton_start(VmBaton *b, int64_t n, bool (*body)(void *, int64_t),
                    void *ctx) {
  memset(b, 0, sizeof *b);
  b->n = n;
  b->body = body;
  b->ctx = ctx;
  b->turn = TURN_SCHEDULER;
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  b->state = tl_xcalloc((size_t)n, sizeof *b->state);
  b->ok = tl_xcalloc((size_t)n, sizeof *b->ok);
  b->th = tl_xcalloc((size_t)n, sizeof *b->th);
  BatonTask *tasks = tl_xcalloc((size_t)n, sizeof *tasks);
  b->tasks = tasks;
  for (int64_t i = 0; i < n; i++) {
    tasks[i] = (BatonTask){b, i};
    if (pthread_create(&b->th[i], NULL, task_main, &tasks[i]))
      tl_fatal(__FILE__, __LINE__, "cannot start a thread for the VM");
  }
}

void vm_baton_run(VmBaton *b, int64_t i) {
  pthread_mutex_lock(&b->mu);
  if (b->state[i] != VB_DONE)
    b->state[i] = VB_READY;
  b->turn = i;
  pthread_cond_broadcast(&b->cv);
  wait_turn(b, TURN_SCHEDULER);
  pthread_mutex_unlock(&b->mu);
}

bool vm_baton_yield(VmBaton *b, int64_t i) {
  pthread_mutex_lock(&b->mu);
  b->state[i] = VB_BLOCKED;
  b->turn = TURN_SCHEDULER;
  pthread_cond_broadcast(&b->cv);
  wait_turn(b, i);
  pthread_mutex_unlock(&b->mu);
  return !b->abort;
}

void vm_baton_finish(VmBaton *b) {
  for (int64_t i = 0; i < b->n; i++)
    if (b->state[i] != VB_DONE)
      vm_baton_run(b, i);
  for (int64_t i = 0; i < b->n; i++)
    pthread_join(b->th[i], NULL);
  pthread_mutex_destroy(&b->mu);
  pthread_cond_destroy(&b->cv);
  tl_free(b->state);
  tl_free(b->ok);
  tl_free(b->th);
  tl_free(b->tasks);
}
