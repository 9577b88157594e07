/*
 * crs_criu_watch.c: a dump whose rank dies under it.
 *
 * CRIU seizes every task of the rank's namespace with ptrace and waits for each task it
 * works on by its pid alone. A multi-threaded rank killed meanwhile (kill -9, the OOM
 * killer) becomes a zombie leader that the kernel reports only once its other threads were
 * reaped, and those are CRIU's tracees too: CRIU then waits forever, and the agent with it.
 *
 * So while CRIU runs, a thread watches every thread of the namespace through a pidfd;
 * when one ends, it kills the CRIU processes this process started (its children whose
 * name is "criu"). libcriu then returns an error, the seized tasks are released (what is
 * left of the rank ends with it), and the CRS says that the rank ended during its dump.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"

/* Threads of one namespace watched at most (its init, the rank's threads, what it forked). */
#define CRS_CRIU_WATCH_MAX 256

struct crs_criu_watch {
    pthread_t thread;
    bool running;                   /* the thread was started */
    int stop_fd;                    /* eventfd: the dump is over */
    int pidfds[CRS_CRIU_WATCH_MAX]; /* the namespace's processes */
    int num_pidfds;
    volatile bool tree_died; /* one of them ended while CRIU ran */
};

/* pidfd_open's flag for a pidfd of one thread (Linux 6.9), readable once that thread has
 * exited, even while it waits as a zombie for its tracer. */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* Watch every thread of `pid`, then its children, theirs, and so on. Where the kernel has no
 * pidfd of a thread, the process's own pidfd (readable only once all its threads are gone:
 * the CRIU hang above is then not caught, a rank that dies otherwise is). */
static void crs_criu_watch_add_tree(crs_criu_watch_t *watch, pid_t pid)
{
    char path[64];
    DIR *tasks;
    struct dirent *task;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(tasks = opendir(path)))
        return;
    while ((task = readdir(tasks)) && watch->num_pidfds < CRS_CRIU_WATCH_MAX) {
        char children_path[320];
        FILE *children;
        int child, tid = atoi(task->d_name);

        if (tid <= 0)
            continue;
        int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
        if (fd < 0 && tid == pid)
            fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (fd >= 0)
            watch->pidfds[watch->num_pidfds++] = fd;
        snprintf(children_path, sizeof(children_path), "/proc/%d/task/%d/children", (int)pid, tid);
        if (!(children = fopen(children_path, "re")))
            continue;
        while (fscanf(children, "%d", &child) == 1)
            crs_criu_watch_add_tree(watch, (pid_t)child);
        fclose(children);
    }
    closedir(tasks);
}

/* SIGKILL to every child of this process named "criu". */
static void crs_criu_watch_kill_criu(void)
{
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *task;

    if (!tasks)
        return;
    while ((task = readdir(tasks))) {
        char path[320];
        FILE *children;
        int child;

        if (task->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/children", task->d_name);
        if (!(children = fopen(path, "re")))
            continue;
        while (fscanf(children, "%d", &child) == 1) {
            char comm_path[64], comm[32] = "";
            FILE *f;

            snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", child);
            if ((f = fopen(comm_path, "re"))) {
                if (fgets(comm, sizeof(comm), f))
                    comm[strcspn(comm, "\n")] = '\0';
                fclose(f);
            }
            if (strcmp(comm, "criu") == 0)
                kill(child, SIGKILL);
        }
        fclose(children);
    }
    closedir(tasks);
}

static void *crs_criu_watch_main(void *arg)
{
    crs_criu_watch_t *watch = arg;
    struct pollfd fds[CRS_CRIU_WATCH_MAX + 1];

    fds[0] = (struct pollfd){.fd = watch->stop_fd, .events = POLLIN};
    for (int i = 0; i < watch->num_pidfds; i++)
        fds[i + 1] = (struct pollfd){.fd = watch->pidfds[i], .events = POLLIN};
    for (;;) {
        if (poll(fds, (nfds_t)watch->num_pidfds + 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        if (fds[0].revents)
            return NULL;
        watch->tree_died = true;
        crs_criu_watch_kill_criu();
        return NULL;
    }
}

int crs_criu_watch_start(pid_t init_pid, crs_criu_watch_t **watch_out)
{
    crs_criu_watch_t *watch = calloc(1, sizeof(*watch));
    sigset_t all, old;

    if (!watch)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    watch->stop_fd = eventfd(0, EFD_CLOEXEC);
    crs_criu_watch_add_tree(watch, init_pid);
    if (watch->stop_fd < 0 || watch->num_pidfds == 0) {
        crs_criu_watch_stop(watch);
        return CRMPI_ERR_NOT_FOUND;
    }
    /* The watcher takes no signal meant for the caller's loop. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    watch->running = pthread_create(&watch->thread, NULL, crs_criu_watch_main, watch) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!watch->running) {
        crs_criu_watch_stop(watch);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *watch_out = watch;
    return CRMPI_OK;
}

bool crs_criu_watch_stop(crs_criu_watch_t *watch)
{
    bool died;

    if (!watch)
        return false;
    if (watch->running) {
        uint64_t one = 1;
        /* An eventfd's counter takes a 1 unless it is at its maximum: it cannot fail here. */
        if (write(watch->stop_fd, &one, sizeof(one)) != sizeof(one))
            abort();
        pthread_join(watch->thread, NULL);
    }
    /* A thread that ended as CRIU failed on its own, before the watcher saw it. */
    for (int i = 0; i < watch->num_pidfds && !watch->tree_died; i++) {
        struct pollfd ended = {.fd = watch->pidfds[i], .events = POLLIN};
        watch->tree_died = poll(&ended, 1, 0) == 1;
    }
    if (watch->stop_fd >= 0)
        close(watch->stop_fd);
    for (int i = 0; i < watch->num_pidfds; i++)
        close(watch->pidfds[i]);
    died = watch->tree_died;
    free(watch);
    return died;
}
