/*
 * ring.c: the job bench/migration moves from layout to layout. A message of NBYTES goes
 * round the ring of ranks (0 -> 1 -> ... -> size-1 -> 0) once per step; every rank mixes
 * its rank and the step into each 64-bit word before passing it on, so the message is the
 * ring's state and any step lost, repeated or damaged across a restart changes every later
 * checksum. Rank 0 times each step and appends "step latency_us checksum" to DATAFILE,
 * where checksum folds the message after the step into a running value.
 *
 * DATAFILE is opened once, for appending, and stays open: a checkpoint records its size and
 * a restart gives the restored rank 0 the same descriptor, cut back to that size if it grew
 * (docs/design.md, "Files"), so the file holds every step exactly once however many
 * restarts the job went through. At the end rank 0 prints the step count and the final
 * running checksum.
 *
 *   mpirun -np N ring STEPS NBYTES DATAFILE [PAUSE_US]
 *
 * PAUSE_US: rank 0 sleeps that long between steps (default 0), to leave a measuring script
 * time to act between steps on a shared machine.
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One rank's change to the message: every word mixed with the rank and the step. */
static void ring_mix(uint64_t *words, size_t num_words, int rank, long step)
{
    uint64_t salt = ((uint64_t)step << 8) ^ (uint64_t)(rank + 1);

    for (size_t i = 0; i < num_words; i++)
        words[i] = (words[i] ^ salt) * 0x9e3779b97f4a7c15ull + i;
}

/* FNV-1a over the message's words, continuing from `running`. */
static uint64_t ring_fold(uint64_t running, const uint64_t *words, size_t num_words)
{
    for (size_t i = 0; i < num_words; i++)
        running = (running ^ words[i]) * 0x100000001b3ull;
    return running;
}

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: ring STEPS NBYTES DATAFILE [PAUSE_US]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long steps = atol(argv[1]);
    size_t num_words = ((size_t)atol(argv[2]) + 7) / 8;
    useconds_t pause_us = argc > 4 ? (useconds_t)atol(argv[4]) : 0;
    uint64_t *words = calloc(num_words ? num_words : 1, sizeof(uint64_t));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    uint64_t running = 0xcbf29ce484222325ull; /* FNV offset basis */
    int data_fd = -1;
    char line[128];

    if (!words)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        data_fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (data_fd < 0) {
            perror(argv[3]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long step = 0; step < steps; step++) {
        if (rank == 0) {
            double start = MPI_Wtime();

            ring_mix(words, num_words, rank, step);
            MPI_Send(words, (int)num_words, MPI_UINT64_T, next, 0, MPI_COMM_WORLD);
            MPI_Recv(words, (int)num_words, MPI_UINT64_T, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            double took_us = (MPI_Wtime() - start) * 1e6;

            running = ring_fold(running, words, num_words);
            int len = snprintf(line, sizeof(line), "%ld %.1f %016llx\n", step, took_us,
                               (unsigned long long)running);
            /* One write per step: a checkpoint sees whole lines only. */
            if (write(data_fd, line, (size_t)len) != len) {
                perror("ring: write");
                MPI_Abort(MPI_COMM_WORLD, 4);
            }
            if (pause_us)
                usleep(pause_us);
        } else {
            MPI_Recv(words, (int)num_words, MPI_UINT64_T, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            ring_mix(words, num_words, rank, step);
            MPI_Send(words, (int)num_words, MPI_UINT64_T, next, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        close(data_fd);
        printf("ring: %ld steps, %d ranks, %zu bytes, checksum %016llx\n", steps, size,
               num_words * 8, (unsigned long long)running);
    }
    free(words);
    MPI_Finalize();
    return 0;
}
