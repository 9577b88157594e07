/*
 * tracker_cost.c: what tracking written pages costs the application, by the two methods the
 * incremental-checkpointing paper compares: write-bit (pages made read-only with mprotect;
 * the first write to each page faults into a SIGSEGV handler that records the page and
 * makes it writable again) and dirty-bit, here the kernel's asynchronous userfaultfd
 * write-protect, which crmpi uses (the first write to a protected page only clears its
 * protection in the page table; PAGEMAP_SCAN lists those pages later).
 *
 * For each method: MIB mebibytes are armed, then PERCENT of their pages are written once
 * (one byte each, evenly spread), ROUNDS times, re-arming in between; it prints the time
 * to arm, the time of the writes against untracked memory, and the pages each method found
 * written (which must equal the pages written).
 *
 * crmpi ships only the dirty-bit tracker: with write-bit, a system call that writes into a
 * protected page (read(2), recv(2) into an application buffer) fails with EFAULT instead of
 * faulting, which a transparent checkpointer cannot allow; and each page made writable
 * splits the mapping, so that past vm.max_map_count pieces (65530 by default: about 32000
 * scattered written pages) mprotect fails and the method cannot go on.
 *
 *   tracker_cost [MIB] [PERCENT] [ROUNDS]     (defaults 256 10 5)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uffd_wp.h" /* runtime/: the kernel interfaces, for older headers */

#define PAGE 4096

static uint8_t *area;
static size_t area_pages;
static uint8_t *dirty;                        /* write-bit: one byte per page */
static volatile sig_atomic_t writebit_failed; /* mprotect refused: too many mappings */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void write_pages(size_t stride, uint8_t value)
{
    for (size_t page = 0; page < area_pages; page += stride)
        area[page * PAGE] = value;
}

static void writebit_fault(int sig, siginfo_t *info, void *ctx)
{
    uint8_t *addr = info->si_addr;

    (void)ctx;
    if (addr < area || addr >= area + area_pages * PAGE) {
        signal(sig, SIG_DFL); /* not ours: crash as the program would have */
        return;
    }
    size_t page = (size_t)(addr - area) / PAGE;
    dirty[page] = 1;
    /* Each page made writable splits the mapping; past vm.max_map_count mappings the
     * kernel refuses, and the write would fault forever: the method gives up. */
    if (mprotect(area + page * PAGE, PAGE, PROT_READ | PROT_WRITE) != 0) {
        writebit_failed = 1;
        mprotect(area, area_pages * PAGE, PROT_READ | PROT_WRITE);
    }
}

static size_t writebit_collect_and_arm(void)
{
    size_t found = 0;

    for (size_t page = 0; page < area_pages; page++) {
        found += dirty[page];
        dirty[page] = 0;
    }
    mprotect(area, area_pages * PAGE, PROT_READ);
    return found;
}

static int uffd = -1, pagemap = -1;

static size_t dirtybit_collect_and_arm(void)
{
    struct page_region regions[512];
    size_t found = 0;
    uint64_t start = (uintptr_t)area, end = (uintptr_t)(area + area_pages * PAGE);

    while (start < end) {
        struct pm_scan_arg scan = {.size = sizeof(scan),
                                   .flags = PM_SCAN_WP_MATCHING,
                                   .start = start,
                                   .end = end,
                                   .vec = (uintptr_t)regions,
                                   .vec_len = 512,
                                   .category_mask = PAGE_IS_WRITTEN,
                                   .return_mask = PAGE_IS_WRITTEN};
        long n = ioctl(pagemap, PAGEMAP_SCAN, &scan);

        if (n < 0) {
            perror("PAGEMAP_SCAN");
            exit(1);
        }
        for (long i = 0; i < n; i++)
            found += (regions[i].end - regions[i].start) / PAGE;
        if (n < 512)
            break;
        start = scan.walk_end;
    }
    return found;
}

static void dirtybit_setup(void)
{
    struct uffdio_api api = {.api = UFFD_API,
                             .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED};
    struct uffdio_register reg = {.range = {.start = (uintptr_t)area, .len = area_pages * PAGE},
                                  .mode = UFFDIO_REGISTER_MODE_WP};

    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    pagemap = open("/proc/self/pagemap", O_RDONLY);
    if (uffd < 0 || pagemap < 0 || ioctl(uffd, UFFDIO_API, &api) < 0 ||
        ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
        fprintf(stderr, "tracker_cost: no asynchronous userfaultfd write-protect here: %s\n",
                strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    long percent = argc > 2 ? atol(argv[2]) : 10;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    size_t stride = percent > 0 && percent <= 100 ? (size_t)(100 / percent) : 1;
    struct sigaction sa = {.sa_sigaction = writebit_fault, .sa_flags = SA_SIGINFO};
    /* first-touch: no tracking, but every round starts from dropped pages (MADV_DONTNEED),
     * so each write takes an ordinary page fault: the yardstick for a fault here. */
    const char *names[] = {"untracked", "write-bit", "dirty-bit", "first-touch"};
    double arm_s[4] = {0}, write_s[4] = {0};
    size_t written = 0, found[4] = {0};

    area_pages = mib * 1024 * 1024 / PAGE;
    area =
        mmap(NULL, area_pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    dirty = calloc(area_pages, 1);
    if (area == MAP_FAILED || !dirty)
        return 1;
    memset(area, 1, area_pages * PAGE);
    for (size_t page = 0; page < area_pages; page += stride)
        written++;
    sigaction(SIGSEGV, &sa, NULL);
    for (int method = 0; method < 4; method++) {
        if (method == 2)
            dirtybit_setup();
        if (method == 3)
            close(uffd); /* the tracking ends with its userfaultfd */
        for (int round = 0; round <= rounds; round++) {
            double t0 = now();
            size_t got = method == 1   ? writebit_collect_and_arm()
                         : method == 2 ? dirtybit_collect_and_arm()
                                       : 0;
            if (method == 3)
                madvise(area, area_pages * PAGE, MADV_DONTNEED);
            double t1 = now();
            write_pages(stride, (uint8_t)round);
            double t2 = now();
            if (round == 0)
                continue; /* the first arm starts the tracking */
            arm_s[method] += t1 - t0;
            write_s[method] += t2 - t1;
            if (round > 1)
                found[method] = got;
        }
        if (method == 1)
            writebit_collect_and_arm(), mprotect(area, area_pages * PAGE, PROT_READ | PROT_WRITE);
    }
    printf("%zu MiB, %ld%% of the pages written once per round (%zu pages), %d rounds\n", mib,
           percent, written, rounds);
    printf("%-10s %14s %16s %12s %14s\n", "tracker", "arm+collect ms", "writes ms/round",
           "vs untracked", "pages found");
    if (writebit_failed)
        printf("write-bit failed: mprotect refused to split the area further (vm.max_map_count); "
               "its figures are not meaningful\n");
    found[3] = written;
    for (int method = 0; method < 4; method++)
        printf("%-10s %14.2f %16.3f %11.2fx %14zu\n", names[method], arm_s[method] / rounds * 1e3,
               write_s[method] / rounds * 1e3, write_s[method] / write_s[0],
               method ? found[method] : written);
    return 0;
}
