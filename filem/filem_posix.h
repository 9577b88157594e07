/*
 * filem_posix.h: the posix component of FileM (filem_posix.c): copies with read(2) and
 * write(2) to storage every node mounts. For the framework's table (filem_base.c) and the
 * unit tests; everything else reaches it through crmpi_filem_base_open()'s op table.
 */
#ifndef FILEM_POSIX_H
#define FILEM_POSIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component.h"

extern const crmpi_component_t filem_posix_component;

/* ---- filem_posix_zstd.c: compressed copies ---------------------------------------------- */

/* The suffix of a compressed file on stable storage. */
#define FILEM_POSIX_ZSTD_SUFFIX ".zst"

typedef struct filem_posix_zstd filem_posix_zstd_t;
/** Where a stream's output goes. @return CRMPI_OK, or an error that ends the copy */
typedef int (*filem_posix_emit_fn_t)(void *arg, const uint8_t *data, size_t len);

/**
 * A compressing (level, with `threads` workers when > 1) or decompressing stream.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE
 */
int filem_posix_zstd_open(bool compress, int level, int threads, filem_posix_zstd_t **z_out);
/**
 * Feed `len` bytes; the output goes to emit() in pieces. `end`: the input is complete (the
 * frame is finished; decompressing, a frame cut short is an error).
 * @return CRMPI_OK, CRMPI_ERR_IO (logged: damaged input), or emit's error
 */
int filem_posix_zstd_feed(filem_posix_zstd_t *z, const uint8_t *data, size_t len, bool end,
                          filem_posix_emit_fn_t emit, void *arg);
void filem_posix_zstd_close(filem_posix_zstd_t *z);
/** The ratio `len` bytes compress by at `level` (1.0: not at all), and how long it took. */
double filem_posix_zstd_ratio(const uint8_t *data, size_t len, int level, double *seconds_out);

#endif /* FILEM_POSIX_H */
