/*
 * mpix_callbacks.c: the order of MPIX_CR_register_callback's callbacks around application
 * checkpoints (MPIX_Checkpoint) and transparent ones (ompi-checkpoint, ompi-restart), for
 * test_mpix.py.
 *
 * Every rank registers one callback per kind, each appending a line ("pre", "continue",
 * "restart") to CB_LOG_DIR/cb.<rank>, and after each MPIX_Checkpoint it appends "app SEQ".
 * Then:
 *   1. MPIX_Checkpoint;
 *   2. creates CR_READY_DIR/ready.<rank> and waits, its heap open, making no MPI call,
 *      until the file CR_GO exists: the test checkpoints the job meanwhile, transparently,
 *      and may restart it;
 *   3. calls MPIX_Checkpoint a second time;
 *   4. rank 0 prints "callbacks done".
 */
#include <fcntl.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crmpi/pheap.h>

static int rank;

/* One line at the end of this rank's log; opened and closed each time, so that no
 * descriptor of it is in a transparent checkpoint's image. */
static void log_line(const char *line)
{
    char path[4096];
    const char *dir = getenv("CB_LOG_DIR");
    int fd;

    snprintf(path, sizeof(path), "%s/cb.%d", dir ? dir : ".", rank);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) ||
        write(fd, "\n", 1) != 1) {
        perror(path);
        exit(1);
    }
    close(fd);
}

static void callback(int kind, void *arg)
{
    (void)kind;
    log_line(arg);
}

static void open_heap(void)
{
    char heap[4096], back[4096];
    const char *dir = getenv("CB_LOG_DIR");

    snprintf(heap, sizeof(heap), "%s/heap.%d", dir ? dir : ".", rank);
    snprintf(back, sizeof(back), "%s/back.%d", dir ? dir : ".", rank);
    if (mopen(heap, "w+", (size_t)1 << 22) != 0 || bopen(back, "w+") != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

static void app_checkpoint(void)
{
    MPIX_Checkpoint_info info;
    char line[64];

    if (MPIX_Checkpoint(MPI_COMM_WORLD, &info) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    snprintf(line, sizeof(line), "app %d", info.sequence);
    log_line(line);
}

int main(int argc, char **argv)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    char ready[4096];
    int fd;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPIX_CR_register_callback(MPIX_CR_PRE_CHECKPOINT, callback, "pre") != MPI_SUCCESS ||
        MPIX_CR_register_callback(MPIX_CR_CONTINUE, callback, "continue") != MPI_SUCCESS ||
        MPIX_CR_register_callback(MPIX_CR_RESTART, callback, "restart") != MPI_SUCCESS ||
        MPIX_CR_register_callback(7, callback, "bad") != MPI_ERR_ARG)
        MPI_Abort(MPI_COMM_WORLD, 1);
    open_heap();
    app_checkpoint();

    snprintf(ready, sizeof(ready), "%s/ready.%d", getenv("CR_READY_DIR"), rank);
    fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    close(fd);
    while (access(getenv("CR_GO"), F_OK) != 0)
        nanosleep(&tick, NULL);

    app_checkpoint();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("callbacks done\n");
    bclose();
    mclose();
    MPI_Finalize();
    return 0;
}
