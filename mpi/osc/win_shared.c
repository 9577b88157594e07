/*
 * win_shared.c: shared-memory windows (MPI-3.1 section 11.2.3, 11.2.4 for the query):
 * MPI_Win_allocate_shared's segment and MPI_Win_shared_query, and the checkpoint veto they
 * need.
 *
 * One segment for all ranks of the window, each rank's part at its offset (contiguous by
 * rank, or each part padded to a page with the info key alloc_shared_noncontig), mapped
 * MAP_SHARED in every rank. Rank 0 creates it as a named file in /dev/shm, every other
 * rank maps it by that name, and rank 0 removes the name as soon as every rank has mapped
 * it (an AND over the ranks): from then on the memory has no name and lives exactly as
 * long as the last mapping. A job killed in between leaves the name behind under the
 * job's prefix ("crmpi-<jobid>-"), which mpirun and the agents remove at the job's end as
 * they do the sm BTL's segments. The window is otherwise an ordinary window over its
 * part: every RMA call goes through osc like any other window's, and its target writes
 * into the segment.
 *
 * Checkpoints: each rank is dumped on its own while application threads outside MPI may
 * still store into the segment, so its contents cannot be captured consistently (and a
 * restored job would have one private copy per rank). While a rank has a shared window
 * (from the start of MPI_Win_allocate_shared to the end of its MPI_Win_free), its veto
 * refuses every checkpoint (inc.h): the checkpoint is aborted everywhere and the job goes
 * on. The count is changed with the library lock held, before the first and after the
 * last collective step, so a checkpoint, which runs with the lock held, never meets a
 * segment this rank does not count.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"
#include "rte.h"
#include "win_internal.h"

#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
#pragma weak MPI_Win_allocate_shared_c = PMPI_Win_allocate_shared_c
#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
#pragma weak MPI_Win_shared_query_c = PMPI_Win_shared_query_c

/* The /dev/shm name of a segment: the job's prefix (see above), the creator, a count. */
enum { WIN_SHM_NAME_MAX = 80 };

/* What each rank tells the others of its part. */
typedef struct win_shm_part {
    uint64_t size;      /* bytes asked for */
    uint64_t disp_unit; /* its displacement unit */
} win_shm_part_t;

/* Rank 0's word on the segment, to every rank. */
typedef struct win_shm_made {
    int32_t status;              /* CRMPI_OK: created and mapped at rank 0 */
    char name[WIN_SHM_NAME_MAX]; /* its shm_open name */
} win_shm_made_t;

struct crmpi_win_shm_s {
    char *map;             /* the whole segment, mapped in this process */
    size_t map_len;        /* its mapped length (a whole number of pages, never 0) */
    int nranks;            /* ranks of the window */
    win_shm_part_t *parts; /* per rank: as it asked */
    size_t *offsets;       /* per rank: where its part starts in the segment */
};

static int win_shm_live;          /* shared windows of this process, made or being made */
static unsigned win_shm_made_num; /* segments this process created (names them) */

const char *crmpi_win_shared_refusal(void)
{
    return win_shm_live ? "a shared-memory window (MPI_Win_allocate_shared) is live: its memory, "
                          "which ranks store into directly, cannot be checkpointed consistently; "
                          "checkpoint after MPI_Win_free"
                        : NULL;
}

static void win_shm_destroy(struct crmpi_win_shm_s *shm)
{
    if (shm->map)
        munmap(shm->map, shm->map_len);
    free(shm->parts);
    free(shm->offsets);
    free(shm);
}

void crmpi_win_shm_free(struct crmpi_win_shm_s *shm)
{
    win_shm_destroy(shm);
    win_shm_live--;
}

/* Rank 0: create the named segment and map it; *made says how that went. */
static void win_shm_create(struct crmpi_win_shm_s *shm, MPI_Comm comm, win_shm_made_t *made)
{
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    int fd, err;

    snprintf(made->name, sizeof(made->name), "/crmpi-%" PRIu64 "-win-%u-%u", crmpi_rte_job()->jobid,
             comm->world_ranks[0], win_shm_made_num++);
    fd = shm_open(made->name, flags, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* A crashed job of the same id left it; its ranks may map it still: a new file. */
        shm_unlink(made->name);
        fd = shm_open(made->name, flags, 0600);
    }
    if (fd < 0) {
        crmpi_log_error("MPI_Win_allocate_shared: cannot create /dev/shm%s: %s", made->name,
                        strerror(errno));
        made->status = errno == EMFILE || errno == ENFILE || errno == ENOSPC
                           ? CRMPI_ERR_OUT_OF_RESOURCE
                           : CRMPI_ERR_IO;
        return;
    }
    /* Every page now: a full /dev/shm fails here, not with SIGBUS at a store later. */
    err = posix_fallocate(fd, 0, (off_t)shm->map_len);
    if (err == 0) {
        shm->map = mmap(NULL, shm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (shm->map == MAP_FAILED) {
            err = errno;
            shm->map = NULL;
        }
    }
    close(fd);
    if (err != 0) {
        crmpi_log_error("MPI_Win_allocate_shared: cannot allocate %zu bytes in /dev/shm%s: %s",
                        shm->map_len, made->name, strerror(err));
        shm_unlink(made->name);
        made->status = err == ENOSPC || err == ENOMEM ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
        return;
    }
    made->status = CRMPI_OK;
}

/* Another rank: map rank 0's segment by its name. */
static int win_shm_map(struct crmpi_win_shm_s *shm, const char *name)
{
    struct stat st;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    int rc = CRMPI_OK;

    if (fd < 0) {
        crmpi_log_error("MPI_Win_allocate_shared: cannot open /dev/shm%s: %s", name,
                        strerror(errno));
        return CRMPI_ERR_IO;
    }
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < shm->map_len) {
        crmpi_log_error("MPI_Win_allocate_shared: /dev/shm%s is not the %zu bytes rank 0 made",
                        name, shm->map_len);
        rc = CRMPI_ERR_PROTO;
    } else {
        shm->map = mmap(NULL, shm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (shm->map == MAP_FAILED) {
            crmpi_log_error("MPI_Win_allocate_shared: cannot map /dev/shm%s (%zu bytes): %s", name,
                            shm->map_len, strerror(errno));
            shm->map = NULL;
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    close(fd);
    return rc;
}

/* Every rank's offset, and the segment's length, from the parts (the same at every rank).
 * @return false when the sum does not fit in memory */
static bool win_shm_layout(struct crmpi_win_shm_s *shm, bool noncontig)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t end = 0;

    for (int i = 0; i < shm->nranks; i++) {
        uint64_t len = shm->parts[i].size;

        if (noncontig)
            len = (len + page - 1) / page * page;
        if (len > (uint64_t)PTRDIFF_MAX - page || end > (size_t)PTRDIFF_MAX - page - len)
            return false;
        shm->offsets[i] = end;
        end += (size_t)len;
    }
    shm->map_len = end ? (end + page - 1) / page * page : page;
    return true;
}

int crmpi_win_shm_alloc(MPI_Comm comm, MPI_Aint size, MPI_Aint disp_unit, bool noncontig,
                        struct crmpi_win_shm_s **shm_out, void **base_out)
{
    crmpi_comm_xchg_set_t set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_WIN_SHARED);
    win_shm_part_t mine = {.size = (uint64_t)size, .disp_unit = (uint64_t)disp_unit};
    win_shm_made_t made = {.status = CRMPI_OK};
    struct crmpi_win_shm_s *shm;
    uint64_t all_mapped;
    int rc;

    shm = calloc(1, sizeof(*shm));
    if (!shm)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    shm->nranks = comm->size;
    shm->parts = calloc((size_t)comm->size, sizeof(shm->parts[0]));
    shm->offsets = calloc((size_t)comm->size, sizeof(shm->offsets[0]));
    if (!shm->parts || !shm->offsets) {
        win_shm_destroy(shm);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    win_shm_live++; /* from here on a checkpoint is refused (see above) */
    rc = crmpi_comm_xchg_allgather(&set, &mine, sizeof(mine), shm->parts);
    if (rc != CRMPI_OK)
        goto err;
    if (!win_shm_layout(shm, noncontig)) {
        crmpi_log_error("MPI_Win_allocate_shared: the ranks' sizes add up to more than memory");
        rc = CRMPI_ERR_OUT_OF_RESOURCE; /* the same at every rank: no exchange needed */
        goto err;
    }
    if (comm->rank == 0)
        win_shm_create(shm, comm, &made);
    rc = crmpi_comm_xchg_bcast(&set, &made, sizeof(made));
    if (rc != CRMPI_OK)
        goto err_unlink;
    made.name[sizeof(made.name) - 1] = '\0';
    rc = made.status;
    if (rc == CRMPI_OK && comm->rank != 0)
        rc = win_shm_map(shm, made.name);
    /* Everyone agrees whether everyone mapped it; then its name can go. */
    all_mapped = rc == CRMPI_OK;
    if (made.status == CRMPI_OK) {
        int xrc = crmpi_comm_xchg_allreduce_band(&set, &all_mapped, 1);

        if (xrc != CRMPI_OK)
            rc = xrc;
        else if (!all_mapped && rc == CRMPI_OK)
            rc = CRMPI_ERR_IO; /* another rank could not map it (it said why) */
    }
    if (rc != CRMPI_OK)
        goto err_unlink;
    if (comm->rank == 0 && shm_unlink(made.name) != 0)
        crmpi_log_warn("MPI_Win_allocate_shared: cannot remove the name /dev/shm%s: %s", made.name,
                       strerror(errno));
    *shm_out = shm;
    /* An empty part is at NULL, as MPI_Win_shared_query says (below). */
    *base_out = size > 0 ? shm->map + shm->offsets[comm->rank] : NULL;
    return CRMPI_OK;

err_unlink:
    if (comm->rank == 0 && made.status == CRMPI_OK)
        shm_unlink(made.name);
err:
    crmpi_win_shm_free(shm);
    return rc;
}

/* Are the ranks of comm all on this node (MPI_Comm_split_type's MPI_COMM_TYPE_SHARED)? */
static bool win_shm_local(MPI_Comm comm)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();
    uint32_t node = job->node_of_rank[job->rank];

    for (int i = 0; i < comm->size; i++) {
        if (job->node_of_rank[comm->world_ranks[i]] != node)
            return false;
    }
    return true;
}

/* MPI_Win_allocate_shared and its large-count form: the int form widens its disp_unit. */
static int win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win, const char *func_name)
{
    char value[MPI_MAX_INFO_VAL + 1] = "";
    bool noncontig = false;
    int flag = 0, err;

    /* Read before the lock: MPI_Info_get takes it. */
    if (info != MPI_INFO_NULL &&
        PMPI_Info_get(info, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, value, &flag) ==
            MPI_SUCCESS &&
        flag)
        noncontig = strcmp(value, "true") == 0;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (baseptr == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "baseptr is NULL");
    /* The same answer at every rank (the job's facts): no rank waits for another. */
    if (!comm->inter && !win_shm_local(comm))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_RMA_SHARED, func_name,
                                           "the ranks of comm are not all on one node");
    err = crmpi_win_create(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, noncontig, win,
                           func_name);
    if (err == MPI_SUCCESS)
        *(void **)baseptr = (*win)->base;
    return err;
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return win_allocate_shared(size, disp_unit, info, comm, baseptr, win,
                               "MPI_Win_allocate_shared");
}

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    return win_allocate_shared(size, disp_unit, info, comm, baseptr, win,
                               "MPI_Win_allocate_shared_c");
}

/* The body of MPI_Win_shared_query (int_unit: disp_unit is an int *, which the unit must
 * fit) and of its large-count form (an MPI_Aint *). */
static int win_shared_query(MPI_Win win, int rank, MPI_Aint *size, void *disp_unit, bool int_unit,
                            void *baseptr, const char *func_name)
{
    const struct crmpi_win_shm_s *shm;
    MPI_Aint part_size = 0, unit;
    void *part_base;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    /* MPI-3.1 and MPI-4.0 section 12.2.3 (MPI-4.1 admits windows of MPI_Win_create and
     * MPI_Win_allocate, whose memory crmpi never shares). */
    if (win->flavor != MPI_WIN_FLAVOR_SHARED)
        return crmpi_win_raise(win, MPI_ERR_RMA_FLAVOR, func_name,
                               "not a window of MPI_Win_allocate_shared");
    shm = win->shm;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= shm->nranks))
        return crmpi_win_raise(win, MPI_ERR_RANK, func_name, NULL);
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "size, disp_unit or baseptr is NULL");
    if (rank == MPI_PROC_NULL) {
        /* The lowest rank with memory; when none has any, size 0 at an address that is not
         * NULL, as MPI_Alloc_mem's of 0 bytes (section 11.2.3). */
        for (int i = 0; i < shm->nranks; i++) {
            if (shm->parts[i].size > 0) {
                rank = i;
                break;
            }
        }
    }
    if (rank == MPI_PROC_NULL) {
        unit = (MPI_Aint)shm->parts[0].disp_unit;
        part_base = shm->map;
    } else {
        part_size = (MPI_Aint)shm->parts[rank].size;
        unit = (MPI_Aint)shm->parts[rank].disp_unit;
        /* An empty part is at NULL (what MPICH gives, and its test win_shared_noncontig_put
         * checks): its address would be the next part's. */
        part_base = part_size > 0 ? shm->map + shm->offsets[rank] : NULL;
    }
    /* A unit given to MPI_Win_allocate_shared_c may not fit the int form's output. */
    if (int_unit && unit > INT_MAX)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name,
                               "the disp_unit does not fit an int; use MPI_Win_shared_query_c");
    *size = part_size;
    if (int_unit)
        *(int *)disp_unit = (int)unit;
    else
        *(MPI_Aint *)disp_unit = unit;
    *(void **)baseptr = part_base;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    return win_shared_query(win, rank, size, disp_unit, true, baseptr, "MPI_Win_shared_query");
}

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    return win_shared_query(win, rank, size, disp_unit, false, baseptr, "MPI_Win_shared_query_c");
}
