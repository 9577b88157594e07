/*
 * random.h: bytes from the kernel's random source, for keys and nonces.
 */
#ifndef CRMPI_RANDOM_H
#define CRMPI_RANDOM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>

#include "crmpi_status.h"

/** Fill `buf` with `len` bytes of getrandom(2), across interruptions and short reads.
 *  @return CRMPI_OK, or CRMPI_ERR_IO with errno saying why (not logged) */
static inline int crmpi_random_bytes(void *buf, size_t len)
{
    uint8_t *next = buf;

    while (len) {
        ssize_t got = getrandom(next, len, 0);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return CRMPI_ERR_IO;
        next += got;
        len -= (size_t)got;
    }
    return CRMPI_OK;
}

#endif /* CRMPI_RANDOM_H */
