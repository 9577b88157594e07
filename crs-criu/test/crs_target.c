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
 *   track    create a userfaultfd with asynchronous write-protect (as libmpi does for its
 *            agent) and send it with the reply "ok" (SCM_RIGHTS), keeping no copy;
 *            "notrack" when the kernel refuses
 *   poke K   write the first K pages of the 16 MiB "big" area; reply "big=<hash of it>"
 *            (and of the "extra" area, once churn made it)
 *   churn    change the mappings under the tracking: a MiB of big unmapped and mapped
 *            afresh at the same address with other bytes, a MiB moved away and back
 *            (mremap), a MiB dropped (MADV_DONTNEED: zeros), and a new 2 MiB "extra" area;
 *            reply as poke
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uffd_wp.h"

#define TARGET_CTL_FD     3
#define TARGET_HEAP_BYTES (1u << 20)
#define TARGET_FILE_BYTES 4096

#define TARGET_BIG_BYTES (16u << 20)

static pthread_t target_worker;

static uint32_t target_hash(const uint8_t *data, size_t len)
{
    uint32_t hash = 2166136261u;

    for (size_t i = 0; i < len; i++)
        hash = (hash ^ data[i]) * 16777619u;
    return hash;
}

#define TARGET_MIB            (1u << 20)
#define TARGET_EXTRA          (2u << 20)
#define TARGET_RESERVED_BYTES (4ul << 30) /* "reserve" */

/* The "churn" command (see the top): @return the extra area, or NULL on failure. */
static uint8_t *target_churn(uint8_t *big)
{
    uint8_t *fresh = big + 4 * TARGET_MIB, *moved = big + 8 * TARGET_MIB;
    uint8_t *extra =
        mmap(NULL, TARGET_EXTRA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *away = mmap(NULL, TARGET_MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (extra == MAP_FAILED || away == MAP_FAILED || munmap(fresh, TARGET_MIB) != 0 ||
        mmap(fresh, TARGET_MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) != fresh ||
        mremap(moved, TARGET_MIB, TARGET_MIB, MREMAP_MAYMOVE | MREMAP_FIXED, away) != away ||
        mremap(away, TARGET_MIB, TARGET_MIB, MREMAP_MAYMOVE | MREMAP_FIXED, moved) != moved ||
        madvise(big + 12 * TARGET_MIB, TARGET_MIB, MADV_DONTNEED) != 0)
        return NULL;
    for (size_t i = 0; i < TARGET_MIB; i++)
        fresh[i] = (uint8_t)(i * 7u + 3u);
    for (size_t i = 0; i < TARGET_EXTRA; i++)
        extra[i] = (uint8_t)(i * 13u + 5u);
    return extra;
}

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

/* The "track" command: a userfaultfd for the test, sent with the reply. */
static void target_track(void)
{
    int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
    char control[CMSG_SPACE(sizeof(int))] = {0};
    char text[] = "ok\n";
    struct iovec iov = {.iov_base = text, .iov_len = 3};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control,
                         .msg_controllen = sizeof(control)};

    if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0) {
        if (uffd >= 0)
            close(uffd);
        target_reply("notrack\n");
        return;
    }
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &uffd, sizeof(int));
    if (sendmsg(TARGET_CTL_FD, &msg, 0) != 3)
        exit(3);
    close(uffd);
}

int main(int argc, char **argv)
{
    unsigned counter = 0;
    uint8_t *heap = calloc(1, TARGET_HEAP_BYTES);
    int passed_fd = -1;
    char line[128], reply[256];

    uint8_t *big =
        mmap(NULL, TARGET_BIG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *extra = NULL, *reserved = NULL;
    unsigned pokes = 0, reserve_rounds = 0;

    if (argc < 2 || !heap || big == MAP_FAILED) {
        return 2;
    }
    int file_fd = open(argv[1], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (file_fd < 0 || ftruncate(file_fd, TARGET_FILE_BYTES) < 0 ||
        pthread_create(&target_worker, NULL, target_worker_main, NULL) != 0) {
        return 2;
    }
    for (size_t i = 0; i < TARGET_BIG_BYTES; i++)
        big[i] = (uint8_t)(i * 31u);
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
        } else if (strcmp(line, "track") == 0) {
            target_track();
        } else if (strncmp(line, "poke ", 5) == 0) {
            unsigned pages = (unsigned)strtoul(line + 5, NULL, 10);
            pokes++;
            for (size_t page = 0; page < pages && page < TARGET_BIG_BYTES / 4096; page++)
                big[page * 4096 + 17] = (uint8_t)(pokes + page);
            snprintf(reply, sizeof(reply), "big=%08x\n",
                     target_hash(big, TARGET_BIG_BYTES) ^
                         (extra ? target_hash(extra, TARGET_EXTRA) : 0));
            target_reply(reply);
        } else if (strcmp(line, "reserve") == 0) {
            /* A huge area reserved and barely touched, as an AddressSanitizer build's
             * shadow memory is: one byte written per 256 MiB, again at each "reserve". */
            if (!reserved)
                reserved = mmap(NULL, TARGET_RESERVED_BYTES, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (reserved == MAP_FAILED) {
                reserved = NULL;
                target_reply("noreserve\n");
                continue;
            }
            reserve_rounds++;
            for (size_t off = 0; off < TARGET_RESERVED_BYTES; off += 256ul << 20)
                reserved[off] = (uint8_t)reserve_rounds;
            target_reply("ok\n");
        } else if (strcmp(line, "churn") == 0) {
            if (!(extra = target_churn(big)))
                return 5;
            snprintf(reply, sizeof(reply), "big=%08x\n",
                     target_hash(big, TARGET_BIG_BYTES) ^ target_hash(extra, TARGET_EXTRA));
            target_reply(reply);
        } else {
            target_reply("unknown\n");
        }
    }
    return 0;
}
