/*
 * crs_target.c: the "rank" that test_crs_criu.c checkpoints and restores, in the style of
 * CRIU's zdtm programs: it builds state, then answers commands, one per line, on its
 * control socket (fd 3, as agent_ns.c gives it):
 *
 *   tick     counter += 1; rewrite the heap, seek and rewrite the file; a line on stdout;
 *            reply "n=<counter> sum=<heap hash> fpos=<file offset> file=<value in the file>
 *            pid=<getpid()> aff=<worker thread's CPUs>"
 *   recvfd   keep the descriptor that came with the command (SCM_RIGHTS); reply "ok"
 *   closefd  close it; reply "ok"
 *
 * A worker thread sleeps forever; its affinity, read here with pthread_getaffinity_np,
 * shows what a restore re-applied. argv[1] is the file to keep open.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TARGET_CTL_FD     3
#define TARGET_HEAP_BYTES (1u << 20)
#define TARGET_FILE_BYTES 4096

static pthread_t target_worker;

static void *target_worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(10000);
    }
    return NULL;
}

/* Read one command line; a descriptor passed with it lands in *fd_out. */
static int target_read_line(char *line, size_t len, int *fd_out)
{
    size_t used = 0;
    while (used + 1 < len) {
        char byte;
        char control[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = control,
                             .msg_controllen = sizeof(control)};
        if (recvmsg(TARGET_CTL_FD, &msg, 0) != 1) {
            return -1;
        }
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        if (cmsg && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
            memcpy(fd_out, CMSG_DATA(cmsg), sizeof(int));
        }
        if (byte == '\n') {
            break;
        }
        line[used++] = byte;
    }
    line[used] = '\0';
    return 0;
}

static void target_reply(const char *text)
{
    size_t len = strlen(text);
    if (write(TARGET_CTL_FD, text, len) != (ssize_t)len) {
        exit(3);
    }
}

int main(int argc, char **argv)
{
    unsigned counter = 0;
    uint8_t *heap = calloc(1, TARGET_HEAP_BYTES);
    int passed_fd = -1;
    char line[128], reply[256];

    if (argc < 2 || !heap) {
        return 2;
    }
    int file_fd = open(argv[1], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (file_fd < 0 || ftruncate(file_fd, TARGET_FILE_BYTES) < 0 ||
        pthread_create(&target_worker, NULL, target_worker_main, NULL) != 0) {
        return 2;
    }
    while (target_read_line(line, sizeof(line), &passed_fd) == 0) {
        if (strcmp(line, "tick") == 0) {
            counter++;
            uint32_t hash = 2166136261u;
            for (size_t i = 0; i < TARGET_HEAP_BYTES; i++) {
                heap[i] = (uint8_t)(counter * 7u + i);
                hash = (hash ^ heap[i]) * 16777619u;
            }
            unsigned in_file = 0;
            if (pwrite(file_fd, &counter, sizeof(counter), 0) != sizeof(counter) ||
                lseek(file_fd, (off_t)counter, SEEK_SET) < 0 ||
                pread(file_fd, &in_file, sizeof(in_file), 0) != sizeof(in_file)) {
                return 4;
            }
            cpu_set_t cpus;
            char aff[64] = "";
            size_t used = 0;
            pthread_getaffinity_np(target_worker, sizeof(cpus), &cpus);
            for (int cpu = 0; cpu < 64 && used + 4 < sizeof(aff); cpu++) {
                if (CPU_ISSET(cpu, &cpus)) {
                    used += (size_t)snprintf(aff + used, sizeof(aff) - used, "%s%d",
                                             used ? "," : "", cpu);
                }
            }
            printf("tick %u\n", counter);
            fflush(stdout);
            snprintf(reply, sizeof(reply), "n=%u sum=%08x fpos=%ld file=%u pid=%d aff=%s\n",
                     counter, hash, (long)lseek(file_fd, 0, SEEK_CUR), in_file, (int)getpid(), aff);
            target_reply(reply);
        } else if (strcmp(line, "recvfd") == 0) {
            target_reply(passed_fd >= 0 ? "ok\n" : "nofd\n");
        } else if (strcmp(line, "closefd") == 0) {
            if (passed_fd >= 0) {
                close(passed_fd);
            }
            passed_fd = -1;
            target_reply("ok\n");
        } else {
            target_reply("unknown\n");
        }
    }
    return 0;
}
