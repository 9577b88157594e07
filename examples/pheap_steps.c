/*
 * pheap_steps.c: application-level checkpoints with libcrmpi-pheap (no MPI needed).
 *
 *   mpicc pheap_steps.c -o pheap_steps -lcrmpi-pheap      (or: cc ... -lcrmpi-pheap)
 *   ./pheap_steps -n 20 -k 12     runs steps 1..20, killing itself after step 12's backup
 *   ./pheap_steps -r -n 20        restores the backup of step 12 and runs 13..20
 *
 * The program's state is a PERM pointer to a struct in the persistent heap, holding a list
 * that grows by one node per step. Each step ends with backup(); with -r, the program
 * starts from the last backup instead of from scratch. The last line, "steps N sum S", is
 * the same whether the run was interrupted and restored or not. The files are app.mmap
 * (the heap) and app.back (the backup) in the current directory, or in -d DIR.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crmpi/pheap.h>

/* One step's record, in the heap. */
struct record {
    struct record *prev; /* the record of the step before, or NULL */
    long step;           /* the step that made it */
    long value;          /* what the step computed */
};

/* Everything the program needs to go on, in the heap. */
typedef struct {
    long steps_done;     /* steps completed and backed up */
    struct record *last; /* the newest record */
} home_st;

PERM home_st *home; /* mark home persistent */

/* One step of "work": the next value from the previous one. */
static long compute(long step, long prev_value)
{
    return (prev_value * 31 + step * step) % 1000003;
}

int main(int argc, char *argv[])
{
    const char *dir = ".";
    long steps = 10, kill_after = 0;
    int do_restore = 0, opt;
    char heap[4096], back[4096];

    while ((opt = getopt(argc, argv, "rn:k:d:")) != -1) {
        switch (opt) {
        case 'r': do_restore = 1; break;
        case 'n': steps = atol(optarg); break;
        case 'k': kill_after = atol(optarg); break;
        case 'd': dir = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-r] [-n STEPS] [-k STEP] [-d DIR]\n", argv[0]);
            return 2;
        }
    }
    snprintf(heap, sizeof(heap), "%s/app.mmap", dir);
    snprintf(back, sizeof(back), "%s/app.back", dir);

    const char *mode = do_restore ? "r+" : "w+";
    if (perm(PERM_START, PERM_SIZE) != 0 || mopen(heap, mode, (size_t)1 << 30) != 0 ||
        bopen(back, mode) != 0)
        return 1; /* the library said why */
    if (do_restore) {
        if (restore() != 0)
            return 1;
        printf("restored after step %ld\n", home->steps_done);
    } else {
        home = perm_malloc(sizeof(home_st));
        if (!home)
            return 1;
        memset(home, 0, sizeof(*home));
        if (backup() != 0)
            return 1;
    }
    while (home->steps_done < steps) {
        struct record *r = perm_malloc(sizeof(*r));

        if (!r)
            return 1;
        r->prev = home->last;
        r->step = home->steps_done + 1;
        r->value = compute(r->step, home->last ? home->last->value : 1);
        home->last = r;
        home->steps_done = r->step;
        if (backup() != 0)
            return 1;
        printf("step %ld: value %ld\n", r->step, r->value);
        if (r->step == kill_after) {
            fflush(stdout);
            raise(SIGKILL); /* a crash: no mclose(), no cleanup */
        }
    }

    long sum = 0;
    for (struct record *r = home->last; r; r = r->prev)
        sum += r->value;
    printf("steps %ld sum %ld\n", home->steps_done, sum);

    while (home->last) {
        struct record *prev = home->last->prev;

        perm_free(home->last);
        home->last = prev;
    }
    perm_free(home);
    home = NULL;
    bclose();
    mclose();
    return 0;
}
