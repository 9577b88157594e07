/*
 * threads: MPI_THREAD_MULTIPLE, two threads per rank sending at once when the checkpoint
 * lands. Thread t of each rank exchanges with its right and left neighbours on tag t
 * (thread 0 eager, thread 1 rendezvous). Each thread posts one more send (tag 10 + t)
 * that is received only at the end, then: 20 rounds; the rank says it is ready; 300 rounds
 * paced by 5 ms sleeps while the go file is missing (so the checkpoint falls among them:
 * sends held during it, receives waiting in MPI_Recv); the go; 20 rounds; the message of
 * tag 10 + t.
 */
#include <pthread.h>

#include "cr_common.h"

#define ROUNDS       20
#define PACED_ROUNDS 300

static pthread_barrier_t threads_gate;

typedef struct thread_arg {
    int tag;
    uint64_t sum; /* this thread's checksum, combined in thread order */
    int errors;
} thread_arg_t;

static void threads_round(thread_arg_t *arg, size_t len, char *sbuf, char *rbuf, int index)
{
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    MPI_Request req;

    cr_fill(sbuf, len, cr_rank, right, arg->tag, index);
    MPI_Isend(sbuf, (int)len, MPI_BYTE, right, arg->tag, MPI_COMM_WORLD, &req);
    MPI_Recv(rbuf, (int)len, MPI_BYTE, left, arg->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    char *want = malloc(len);
    cr_fill(want, len, left, cr_rank, arg->tag, index);
    if (memcmp(want, rbuf, len) != 0)
        arg->errors++;
    free(want);
    for (size_t i = 0; i < len; i++) {
        arg->sum ^= (unsigned char)rbuf[i];
        arg->sum *= 1099511628211ull;
    }
}

static void *threads_main(void *p)
{
    thread_arg_t *arg = p;
    size_t len = arg->tag == 0 ? CR_EAGER_BYTES : CR_RNDV_BYTES;
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    char *sbuf = malloc(len), *rbuf = malloc(len), *late = malloc(len);
    const struct timespec tick = {0, 5 * 1000 * 1000};
    MPI_Request req;
    int index = 0;

    cr_fill(late, len, cr_rank, right, 10 + arg->tag, 0);
    MPI_Isend(late, (int)len, MPI_BYTE, right, 10 + arg->tag, MPI_COMM_WORLD, &req);
    for (int round = 0; round < ROUNDS; round++)
        threads_round(arg, len, sbuf, rbuf, index++);
    pthread_barrier_wait(&threads_gate); /* both threads are here: the rank is ready */
    for (int round = 0; round < PACED_ROUNDS; round++) {
        threads_round(arg, len, sbuf, rbuf, index++);
        if (!cr_go_now())
            nanosleep(&tick, NULL);
    }
    cr_wait_go();
    for (int round = 0; round < ROUNDS; round++)
        threads_round(arg, len, sbuf, rbuf, index++);
    MPI_Recv(rbuf, (int)len, MPI_BYTE, left, 10 + arg->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    char *want = malloc(len);
    cr_fill(want, len, left, cr_rank, 10 + arg->tag, 0);
    if (memcmp(want, rbuf, len) != 0)
        arg->errors++;
    free(want);
    for (size_t i = 0; i < len; i++) {
        arg->sum ^= (unsigned char)rbuf[i];
        arg->sum *= 1099511628211ull;
    }
    free(sbuf);
    free(rbuf);
    free(late);
    return NULL;
}

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    thread_arg_t args[2] = {{.tag = 0, .sum = 1}, {.tag = 1, .sum = 2}};
    pthread_t tid[2];

    pthread_barrier_init(&threads_gate, NULL, 3);
    for (int t = 0; t < 2; t++)
        pthread_create(&tid[t], NULL, threads_main, &args[t]);
    pthread_barrier_wait(&threads_gate);
    cr_ready();
    for (int t = 0; t < 2; t++) {
        pthread_join(tid[t], NULL);
        if (args[t].errors)
            cr_fail("thread %d: %d damaged messages", t, args[t].errors);
        cr_sum_bytes(&args[t].sum, sizeof(args[t].sum));
    }
    pthread_barrier_destroy(&threads_gate);
    return cr_finish("threads");
}
