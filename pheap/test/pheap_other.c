/*
 * pheap_other.c: another program using the persistent heap, for test_pheap's checks of
 * files written by a different program and of a heap open in another process.
 *
 *   pheap_other backup HEAP BACKUP   make a heap and a backup of it (exit 0 when done)
 *   pheap_other open HEAP            try to open HEAP with "r+" (exit 0 opened, 1 refused)
 *
 * Its PERM globals differ from test_pheap's, and so does its build-id.
 */
#include <stdio.h>
#include <string.h>

#include <crmpi/pheap.h>

/* This program's persistent state: a counter and a block in the heap. */
PERM static long other_counter;
PERM static char *other_block;

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "backup") == 0) {
        if (perm(PERM_START, PERM_SIZE) != 0 || mopen(argv[2], "w+", 1 << 20) != 0 ||
            bopen(argv[3], "w+") != 0)
            return 1;
        other_counter = 12345;
        other_block = perm_malloc(100);
        if (!other_block)
            return 1;
        strcpy(other_block, "written by pheap_other");
        if (backup() != 0 || bclose() != 0 || mclose() != 0)
            return 1;
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "open") == 0) {
        if (mopen(argv[2], "r+", 0) != 0)
            return 1;
        return mclose() == 0 ? 0 : 2;
    }
    fprintf(stderr, "usage: pheap_other backup HEAP BACKUP | pheap_other open HEAP\n");
    return 2;
}
