/*
 * bsend.c: buffered sends (MPI-3.1 section 3.6): the buffer the application attaches, the
 * allocator of its blocks, MPI_Bsend, MPI_Ibsend and the start of MPI_Bsend_init requests.
 *
 * A buffered send copies the message into a block of the attached buffer and sends it from
 * there, so that it completes at once whatever the receiver does:
 *
 *   MPI_Bsend(buf) --pack--> [header | packed message]      a block of the attached buffer
 *                                       |  crmpi_pml_isend(MPI_BYTE, CRMPI_PML_SEND_BUFFERED)
 *                                       v  an internal request, freed by the PML when done
 *                            done_fn: the block goes back to the free list
 *
 * The packed message is the convertor's byte stream, which is also what MPI_BYTE carries,
 * so the receiver unpacks it into its own datatype as if the original had been sent.
 *
 * Allocator: the attached buffer is a row of blocks, each starting with a header; the free
 * ones are also on a list sorted by address. Allocation is first fit, splitting a block when
 * the rest can hold a header; freeing merges a block with free neighbours. Per message the
 * overhead is the header plus alignment padding, within MPI_BSEND_OVERHEAD.
 *
 * Lifetime: a block belongs to its message from MPI_Bsend until the PML completes the
 * internal request; MPI_Buffer_detach waits for every block to come back (section 3.6.1).
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "p2p_internal.h"

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
#pragma weak MPI_Buffer_attach_c = PMPI_Buffer_attach_c
#pragma weak MPI_Buffer_detach_c = PMPI_Buffer_detach_c
#pragma weak MPI_Bsend = PMPI_Bsend
#pragma weak MPI_Ibsend = PMPI_Ibsend
#pragma weak MPI_Bsend_c = PMPI_Bsend_c
#pragma weak MPI_Ibsend_c = PMPI_Ibsend_c

/* Blocks and their data start at this alignment, which suits any type (and memcpy). */
#define BSEND_ALIGN ((size_t) _Alignof(max_align_t))

/* A block of the attached buffer: the header, then the packed message. */
typedef struct bsend_block {
    size_t size;                   /* bytes of the block: header, data and padding */
    struct bsend_block *next_free; /* free blocks: the next free block by address, or NULL */
} bsend_block_t;

static size_t bsend_align_up(size_t nbytes)
{
    return (nbytes + BSEND_ALIGN - 1) & ~(BSEND_ALIGN - 1);
}

/* Header bytes, rounded so that the data after it is aligned too. */
#define BSEND_HEADER_SIZE ((sizeof(bsend_block_t) + BSEND_ALIGN - 1) & ~(BSEND_ALIGN - 1))

/* What MPI_BSEND_OVERHEAD promises: a message needs at most this much beyond its data, the
 * header plus the padding of its end, of the buffer's start and of the buffer's end. */
_Static_assert(BSEND_HEADER_SIZE + 3 * (_Alignof(max_align_t) - 1) <= MPI_BSEND_OVERHEAD,
               "MPI_BSEND_OVERHEAD is too small for a block header and its padding");

/* The attached buffer (one per process, MPI-3.1 section 3.6.1). */
static struct bsend_state {
    bool attached;            /* MPI_Buffer_attach was called, without detach since */
    void *user_addr;          /* the buffer as attached; MPI_Buffer_detach gives it back */
    MPI_Count user_size;      /* its size as attached (MPI_Buffer_attach_c's may exceed INT_MAX) */
    bsend_block_t *free_list; /* free blocks by increasing address */
    size_t blocks_in_use;     /* blocks of messages the PML has not finished sending */
} bsend;

/* A block with room for nbytes of data, first fit; NULL when none is large enough. */
static void *bsend_block_alloc(size_t nbytes)
{
    bsend_block_t **link = &bsend.free_list;
    size_t need;

    if (nbytes > SIZE_MAX - BSEND_HEADER_SIZE - BSEND_ALIGN) {
        return NULL;
    }
    need = BSEND_HEADER_SIZE + bsend_align_up(nbytes);
    for (bsend_block_t *block = *link; block != NULL; link = &block->next_free, block = *link) {
        if (block->size < need) {
            continue;
        }
        if (block->size - need >= BSEND_HEADER_SIZE) {
            bsend_block_t *rest = (bsend_block_t *)((char *)block + need);

            rest->size = block->size - need;
            rest->next_free = block->next_free;
            *link = rest;
            block->size = need;
        } else {
            *link = block->next_free;
        }
        block->next_free = NULL;
        bsend.blocks_in_use++;
        return (char *)block + BSEND_HEADER_SIZE;
    }
    return NULL;
}

/* Give back the block of `data`, merged with the free blocks right before and after it. */
static void bsend_block_release(void *data)
{
    bsend_block_t *block = (bsend_block_t *)((char *)data - BSEND_HEADER_SIZE);
    bsend_block_t *prev = NULL;
    bsend_block_t *next = bsend.free_list;

    while (next != NULL && next < block) {
        prev = next;
        next = next->next_free;
    }
    if (next != NULL && (char *)block + block->size == (char *)next) {
        block->size += next->size;
        next = next->next_free;
    }
    block->next_free = next;
    if (prev != NULL && (char *)prev + prev->size == (char *)block) {
        prev->size += block->size;
        prev->next_free = next;
    } else if (prev != NULL) {
        prev->next_free = block;
    } else {
        bsend.free_list = block;
    }
    bsend.blocks_in_use--;
}

/* done_fn of the internal request of a buffered message: its data is out. */
static void bsend_block_done(crmpi_request_t *req)
{
    bsend_block_release(req->done_arg);
}

/* MPI_ERR_BUFFER for a message of nbytes that does not fit: say what is needed and free. */
CRMPI_P2P_COLD static int bsend_raise_no_room(MPI_Comm comm, size_t nbytes, const char *func_name)
{
    char detail[512];
    size_t free_total = 0;
    size_t free_largest = 0;

    if (!bsend.attached) {
        snprintf(detail, sizeof(detail),
                 "no buffer is attached; attach one with MPI_Buffer_attach, with room for each "
                 "pending message plus MPI_BSEND_OVERHEAD (%d bytes), before buffered sends "
                 "(this message has %zu bytes; MPI-3.1 section 3.6.1)",
                 MPI_BSEND_OVERHEAD, nbytes);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_BUFFER, func_name, detail);
    }
    for (const bsend_block_t *block = bsend.free_list; block != NULL; block = block->next_free) {
        size_t data_room = block->size - BSEND_HEADER_SIZE;

        free_total += data_room;
        if (data_room > free_largest) {
            free_largest = data_room;
        }
    }
    snprintf(detail, sizeof(detail),
             "the attached buffer (%lld bytes) has no room for a message of %zu bytes: %zu bytes "
             "are free, the largest free piece holds %zu, and %zu buffered messages are still "
             "being sent; attach a larger buffer (each message needs its size plus "
             "MPI_BSEND_OVERHEAD, %d bytes)",
             bsend.user_size, nbytes, free_total, free_largest, bsend.blocks_in_use,
             MPI_BSEND_OVERHEAD);
    return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_BUFFER, func_name, detail);
}

int crmpi_p2p_bsend_start(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, crmpi_request_t *proxy, const char *func_name)
{
    size_t nbytes = (size_t)count * type->size;
    crmpi_convertor_t conv;
    crmpi_request_t *req;
    void *data;
    int rc;

    /* Nothing is sent to MPI_PROC_NULL, so nothing is buffered (section 3.11). */
    if (dest == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    data = bsend_block_alloc(nbytes);
    if (data == NULL && bsend.blocks_in_use > 0) {
        /* Messages sent since the last progress give their blocks back there. */
        crmpi_progress();
        data = bsend_block_alloc(nbytes);
    }
    if (data == NULL) {
        return bsend_raise_no_room(comm, nbytes, func_name);
    }
    crmpi_convertor_init(&conv, buf, (size_t)count, type);
    crmpi_convertor_pack(&conv, data, nbytes);
    rc = crmpi_pml_isend(data, nbytes, MPI_BYTE, dest, tag, CRMPI_PML_SEND_BUFFERED, comm->pml,
                         &req);
    if (rc != CRMPI_OK) {
        bsend_block_release(data);
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot start the buffered send to rank %d",
                                   dest);
    }
    /* An eager send may have completed inside crmpi_pml_isend, before done_fn was set: then
     * the block is free now; otherwise the PML calls done_fn when it completes. */
    if (req->complete) {
        bsend_block_release(data);
    } else {
        req->done_fn = bsend_block_done;
        req->done_arg = data;
    }
    if (proxy) {
        /* The proxy frees it (at once, or at completion) when the application is done. */
        crmpi_pml_request_carry(proxy, req);
        return MPI_SUCCESS;
    }
    /* Nobody waits for it: the PML frees it at completion (or now, if complete). */
    crmpi_pml_request_free(req);
    return MPI_SUCCESS;
}

/* The body of both forms of MPI_Buffer_attach. */
static int bsend_buffer_attach(void *buffer, MPI_Count size, const char *func_name)
{
    char detail[256];
    uintptr_t start, end;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (size < 0) {
            snprintf(detail, sizeof(detail), "size %lld is negative", size);
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, detail);
        }
        if (buffer == NULL && size > 0) {
            snprintf(detail, sizeof(detail), "buffer is NULL with size %lld", size);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_BUFFER, func_name, detail);
        }
    }
    /* Checked even without mpi_param_check: a second buffer would lose the first's blocks. */
    if (bsend.attached) {
        snprintf(detail, sizeof(detail),
                 "a buffer of %lld bytes is attached already; MPI_Buffer_detach it first (one "
                 "buffer at a time, MPI-3.1 section 3.6.1)",
                 bsend.user_size);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_BUFFER, func_name, detail);
    }
    bsend = (struct bsend_state){.attached = true, .user_addr = buffer, .user_size = size};
    /* One free block over the aligned part of the buffer, if a header fits there. */
    start = ((uintptr_t)buffer + BSEND_ALIGN - 1) & ~(uintptr_t)(BSEND_ALIGN - 1);
    end = (uintptr_t)buffer + (size_t)size;
    if (end >= start + BSEND_HEADER_SIZE) {
        bsend.free_list = (bsend_block_t *)start;
        bsend.free_list->size = (end - start) & ~(uintptr_t)(BSEND_ALIGN - 1);
        bsend.free_list->next_free = NULL;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    return bsend_buffer_attach(buffer, size, "MPI_Buffer_attach");
}

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return bsend_buffer_attach(buffer, size, "MPI_Buffer_attach_c");
}

/*
 * The body of both forms of MPI_Buffer_detach; `max_size` is the largest size the form can
 * return. An int cannot say the size of a buffer MPI_Buffer_attach_c attached beyond
 * INT_MAX: the int form raises MPI_ERR_COUNT then and leaves the buffer attached, so that
 * MPI_Buffer_detach_c can still give it back. buffer_addr is really a void **, as in every
 * MPI implementation (MPI-3.1 section 3.6.1).
 */
static int bsend_buffer_detach(void *buffer_addr, bool size_null, MPI_Count max_size,
                               MPI_Count *size_out, const char *func_name)
{
    char detail[160];

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (buffer_addr == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "buffer_addr is NULL");
        }
        if (size_null) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "size is NULL");
        }
    }
    if (bsend.attached && bsend.user_size > max_size) {
        snprintf(detail, sizeof(detail),
                 "the attached buffer has %lld bytes, more than an int holds; it stays attached: "
                 "detach it with MPI_Buffer_detach_c",
                 bsend.user_size);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
    }
    /* Every buffered message must be out before the application gets its memory back. */
    while (bsend.attached && bsend.blocks_in_use > 0) {
        crmpi_p2p_wait_turn();
    }
    /* With none attached (MPI-3.1 leaves it open): no buffer, as MPICH does, not an error. */
    if (!bsend.attached) {
        *(void **)buffer_addr = NULL;
        *size_out = 0;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    *(void **)buffer_addr = bsend.user_addr;
    *size_out = bsend.user_size;
    bsend = (struct bsend_state){.attached = false};
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count wide_size;
    int err =
        bsend_buffer_detach(buffer_addr, size == NULL, INT_MAX, &wide_size, "MPI_Buffer_detach");

    if (err == MPI_SUCCESS) {
        *size = (int)wide_size;
    }
    return err;
}

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return bsend_buffer_detach(buffer_addr, size == NULL, LLONG_MAX, size, "MPI_Buffer_detach_c");
}

static int bsend_body(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, const char *func_name)
{
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        !crmpi_p2p_send_args_ok(buf, count, datatype, dest, tag, comm)) {
        return crmpi_p2p_raise_args(
            func_name,
            &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count, datatype, dest, tag, comm});
    }
    rc = crmpi_p2p_bsend_start(buf, count, datatype, dest, tag, comm, NULL, func_name);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * The message is buffered at once, so the request the application gets is already complete:
 * a send to MPI_PROC_NULL, the PML's own complete request. The internal request that moves
 * the data is the PML's to finish.
 */
static int ibsend_body(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_send_args_ok(buf, count, datatype, dest, tag, comm)) {
            return crmpi_p2p_raise_args(func_name,
                                        &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count,
                                                            datatype, dest, tag, comm});
        }
        if (request == NULL) {
            return crmpi_p2p_raise_arg(comm, func_name, "request is NULL");
        }
    }
    /* The request first, so that the message's send can be tied to it (for MPI_Cancel). */
    rc = crmpi_pml_isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, tag, CRMPI_PML_SEND_BUFFERED, comm->pml,
                         &req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name,
                                   "cannot make the request of a message to rank %d", dest);
    }
    rc = crmpi_p2p_bsend_start(buf, count, datatype, dest, tag, comm, req, func_name);
    if (rc != MPI_SUCCESS) {
        crmpi_lock();
        crmpi_pml_request_free(req);
        crmpi_unlock();
        return rc;
    }
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * MPI_Bsend_init requests
 *
 * The request is the PML's persistent send of the same (buf, count, datatype) to
 * MPI_PROC_NULL: each crmpi_pml_start completes it at once, and the PML's reference to the
 * datatype keeps it alive while the request lives (pml.h), however early the application
 * frees it. The real destination and the arguments to buffer are kept here, in done_arg;
 * done_fn marks the request as ours.
 */

/* The arguments MPI_Start buffers anew each time. */
typedef struct bsend_init_args {
    const void *buf;   /* the message; read at each MPI_Start (MPI-3.1 section 3.9) */
    MPI_Count count;   /* elements */
    MPI_Datatype type; /* their datatype; the request holds a reference */
    int dest;          /* destination rank in comm */
    int tag;           /* tag */
    MPI_Comm comm;     /* communicator */
} bsend_init_args_t;

void crmpi_p2p_bsend_init_done(crmpi_request_t *req)
{
    /* A marker: the message left with its own internal request at MPI_Start. */
    (void)req;
}

int crmpi_p2p_bsend_init_create(const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, crmpi_request_t **req_out)
{
    bsend_init_args_t *args = malloc(sizeof(*args));
    crmpi_request_t *req;
    int rc;

    if (args == NULL) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *args = (bsend_init_args_t){buf, count, type, dest, tag, comm};
    rc = crmpi_pml_isend_init(buf, (size_t)count, type, MPI_PROC_NULL, tag, CRMPI_PML_SEND_BUFFERED,
                              comm->pml, &req);
    if (rc != CRMPI_OK) {
        free(args);
        return rc;
    }
    req->done_fn = crmpi_p2p_bsend_init_done;
    req->done_arg = args;
    *req_out = req;
    return CRMPI_OK;
}

int crmpi_p2p_bsend_init_start(crmpi_request_t *req, const char *func_name)
{
    const bsend_init_args_t *args = req->done_arg;
    int rc;

    rc = crmpi_p2p_bsend_start(args->buf, args->count, args->type, args->dest, args->tag,
                               args->comm, req, func_name);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = crmpi_pml_start(req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(args->comm, rc, func_name,
                                   "the message to rank %d is buffered, but its request cannot "
                                   "be started",
                                   args->dest);
    }
    return MPI_SUCCESS;
}

void crmpi_p2p_bsend_init_release(crmpi_request_t *req)
{
    free(req->done_arg);
    req->done_arg = NULL;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return bsend_body(buf, count, datatype, dest, tag, comm, "MPI_Bsend");
}

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return bsend_body(buf, count, datatype, dest, tag, comm, "MPI_Bsend_c");
}

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return ibsend_body(buf, count, datatype, dest, tag, comm, request, "MPI_Ibsend");
}

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return ibsend_body(buf, count, datatype, dest, tag, comm, request, "MPI_Ibsend_c");
}
