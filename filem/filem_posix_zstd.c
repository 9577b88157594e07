/*
 * filem_posix_zstd.c: the zstd streams of the posix FileM (filem_posix.h): compression of a
 * rank's memory images on their way to stable storage, decompression on the way back.
 * libzstd does the work (streaming API, its own worker threads); this file only feeds it
 * the copy's chunks and hands its output on.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>
#include <zstd.h>

#include "crmpi_status.h"
#include "filem_posix.h"
#include "log.h"

struct filem_posix_zstd {
    bool compress;
    ZSTD_CCtx *cctx;  /* compress */
    ZSTD_DCtx *dctx;  /* decompress */
    uint8_t *out;     /* output chunk */
    size_t out_size;  /* its size */
    bool frame_ended; /* decompress: the last frame is complete */
};

int filem_posix_zstd_open(bool compress, int level, int threads, filem_posix_zstd_t **z_out)
{
    filem_posix_zstd_t *z = calloc(1, sizeof(*z));

    if (!z)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    z->compress = compress;
    z->out_size = compress ? ZSTD_CStreamOutSize() : ZSTD_DStreamOutSize();
    z->out = malloc(z->out_size);
    if (compress) {
        z->cctx = ZSTD_createCCtx();
        if (z->cctx) {
            ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
            ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1);
            /* Fails harmlessly where libzstd was built without threads. */
            if (threads > 1)
                ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_nbWorkers, threads);
        }
    } else {
        z->dctx = ZSTD_createDCtx();
    }
    if (!z->out || (compress ? !z->cctx : !z->dctx)) {
        filem_posix_zstd_close(z);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *z_out = z;
    return CRMPI_OK;
}

int filem_posix_zstd_feed(filem_posix_zstd_t *z, const uint8_t *data, size_t len, bool end,
                          filem_posix_emit_fn_t emit, void *arg)
{
    ZSTD_inBuffer in = {.src = data, .size = len, .pos = 0};
    int rc;

    for (;;) {
        ZSTD_outBuffer out = {.dst = z->out, .size = z->out_size, .pos = 0};
        size_t left;

        if (z->compress) {
            left = ZSTD_compressStream2(z->cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
        } else {
            size_t before = in.pos;

            left = ZSTD_decompressStream(z->dctx, &out, &in);
            /* 0: a frame is complete and flushed; input taken after that starts another */
            if (left == 0)
                z->frame_ended = true;
            else if (!ZSTD_isError(left) && in.pos > before)
                z->frame_ended = false;
        }
        if (ZSTD_isError(left)) {
            crmpi_log_error("filem:posix: zstd: %s", ZSTD_getErrorName(left));
            return CRMPI_ERR_IO;
        }
        if (out.pos > 0 && (rc = emit(arg, z->out, out.pos)) != CRMPI_OK)
            return rc;
        /* Done when the input is used up and, at the end, everything is flushed. */
        if (in.pos == in.size && (z->compress ? (!end || left == 0) : out.pos < out.size))
            break;
    }
    if (end && !z->compress && !z->frame_ended) {
        crmpi_log_error("filem:posix: zstd: the compressed file ends inside a frame");
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

double filem_posix_zstd_ratio(const uint8_t *data, size_t len, int level, double *seconds_out)
{
    size_t bound = ZSTD_compressBound(len);
    uint8_t *out = malloc(bound);
    struct timespec t0, t1;
    size_t got;

    if (!out)
        return 1.0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    got = ZSTD_compress(out, bound, data, len, level);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(out);
    *seconds_out = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return ZSTD_isError(got) || got == 0 ? 1.0 : (double)len / (double)got;
}

void filem_posix_zstd_close(filem_posix_zstd_t *z)
{
    if (!z)
        return;
    ZSTD_freeCCtx(z->cctx);
    ZSTD_freeDCtx(z->dctx);
    free(z->out);
    free(z);
}
