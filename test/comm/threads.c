/*
 * threads.c: communicators made concurrently by two threads of every rank
 * (MPI_THREAD_MULTIPLE), each on its own parent communicator: the context ids agreed at
 * the same time in one process must differ, so the messages of each thread's new
 * communicators stay on them.
 */
#include <pthread.h>

#include "comm_common.h"

enum { ROUNDS = 40 };

typedef struct worker {
    MPI_Comm parent; /* this thread's own duplicate of the world */
    int id;          /* 0 or 1 */
    int failures;    /* checks that failed in this thread */
} worker_t;

static void *worker_run(void *arg)
{
    worker_t *w = arg;
    int next = (comm_rank + 1) % comm_size, prev = (comm_rank + comm_size - 1) % comm_size;

    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm c;
        int out = comm_rank * 1000 + w->id * 100 + round % 100, in = -1;

        if (round % 2)
            MPI_Comm_dup(w->parent, &c);
        else
            MPI_Comm_split(w->parent, 0, comm_rank, &c);
        /* The same tag in both threads: only the communicator tells them apart. */
        MPI_Sendrecv(&out, 1, MPI_INT, next, 0, &in, 1, MPI_INT, prev, 0, c, MPI_STATUS_IGNORE);
        if (in != prev * 1000 + w->id * 100 + round % 100) {
            printf("FAIL threads: rank %d: thread %d round %d got %d\n", comm_rank, w->id, round,
                   in);
            w->failures++;
        }
        MPI_Comm_free(&c);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    worker_t workers[2];
    pthread_t threads[2];

    comm_program = "threads";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &comm_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &comm_size);
    signal(SIGALRM, comm_on_alarm);
    alarm(COMM_HANG_SECONDS);
    comm_begin("concurrent_creation");
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    if (provided == MPI_THREAD_MULTIPLE) {
        for (int i = 0; i < 2; i++) {
            workers[i] = (worker_t){.id = i};
            MPI_Comm_dup(MPI_COMM_WORLD, &workers[i].parent);
        }
        for (int i = 0; i < 2; i++)
            pthread_create(&threads[i], NULL, worker_run, &workers[i]);
        for (int i = 0; i < 2; i++) {
            pthread_join(threads[i], NULL);
            comm_checks += ROUNDS;
            comm_failures += workers[i].failures;
            MPI_Comm_free(&workers[i].parent);
        }
    }
    return comm_finish();
}
