/* The cost of one synchronisation window of a conservative parallel
 * simulation (docs/scaling.md): T threads, each per window publishing the
 * time of its next event into a shared minimum and meeting the others at a
 * barrier, as a window-based (YAWNS-style) kernel does between windows.
 * No simulation work is done, so the time per window is the sync cost alone.
 *
 *   cc -O2 -std=c11 -pthread benches/perf/window_sync.c -o window_sync
 *   window_sync [THREADS [WINDOWS]]      (defaults: 2, 20000)
 *
 * Prints one line per barrier kind: a sense-reversing spin barrier on C11
 * atomics and pthread_barrier_t (which sleeps in the kernel). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int n_threads = 2;
static long n_windows = 20000;
static int use_spin;

static atomic_int spin_count;
static atomic_int spin_sense;
static pthread_barrier_t pbar;
static _Atomic int64_t next_min[2]; /* the minimum of window w lives in [w % 2] */

static void spin_wait(int *local_sense)
{
    *local_sense = !*local_sense;
    if (atomic_fetch_add(&spin_count, 1) == n_threads - 1) {
        atomic_store(&spin_count, 0);
        atomic_store(&spin_sense, *local_sense);
    } else {
        while (atomic_load(&spin_sense) != *local_sense)
            ;
    }
}

static void barrier(int *local_sense)
{
    if (use_spin)
        spin_wait(local_sense);
    else
        pthread_barrier_wait(&pbar);
}

static void *worker(void *arg)
{
    int64_t id = (int64_t)(intptr_t)arg;
    int local_sense = 0;
    for (long w = 0; w < n_windows; w++) {
        _Atomic int64_t *m = &next_min[w % 2];
        int64_t mine = w * 1000 + id, cur = atomic_load(m);
        while (mine < cur && !atomic_compare_exchange_weak(m, &cur, mine))
            ;
        barrier(&local_sense);
        if (id == 0) /* reset the other slot for the next window */
            atomic_store(&next_min[(w + 1) % 2], INT64_MAX);
        barrier(&local_sense);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double run(int spin)
{
    use_spin = spin;
    atomic_store(&next_min[0], INT64_MAX);
    atomic_store(&next_min[1], INT64_MAX);
    pthread_barrier_init(&pbar, NULL, (unsigned)n_threads);
    pthread_t th[256];
    double t0 = now_s();
    for (int i = 0; i < n_threads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < n_threads; i++)
        pthread_join(th[i], NULL);
    double dt = now_s() - t0;
    pthread_barrier_destroy(&pbar);
    return dt;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n_threads = atoi(argv[1]);
    if (argc > 2)
        n_windows = atol(argv[2]);
    if (n_threads < 1 || n_threads > 256 || n_windows < 1) {
        fprintf(stderr, "usage: window_sync [THREADS 1..256 [WINDOWS >= 1]]\n");
        return 2;
    }
    for (int spin = 1; spin >= 0; spin--) {
        double dt = run(spin);
        printf("window_sync: barrier=%s threads=%d windows=%ld wall_s=%.4f ns_per_window=%.1f\n",
               spin ? "spin" : "pthread", n_threads, n_windows, dt, dt * 1e9 / (double)n_windows);
    }
    return 0;
}
