/*
 * snapc_base.c: what the three coordinators share (snapc.h).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "snapc.h"

const char *crmpi_snapc_state_name(crmpi_snapc_state_t state)
{
    switch (state) {
    case CRMPI_SNAPC_IDLE: return "idle";
    case CRMPI_SNAPC_DRAINING: return "draining";
    case CRMPI_SNAPC_SUSPENDING: return "suspending";
    case CRMPI_SNAPC_DUMPING: return "dumping";
    case CRMPI_SNAPC_STORING: return "storing";
    case CRMPI_SNAPC_STOPPED: return "stopped";
    }
    return "?";
}

void crmpi_snapc_marks_put(crmpi_buf_t *buf, const crmpi_snapc_bookmark_t *marks, size_t count)
{
    crmpi_buf_put_u32(buf, (uint32_t)count);
    for (size_t i = 0; i < count; i++) {
        crmpi_buf_put_u32(buf, marks[i].peer);
        crmpi_buf_put_u32(buf, marks[i].count);
    }
}

int crmpi_snapc_marks_get(crmpi_buf_t *buf, uint32_t np, crmpi_snapc_bookmark_t **marks_out,
                          size_t *count_out)
{
    crmpi_snapc_bookmark_t *marks;
    uint32_t count = 0;

    if (crmpi_buf_get_u32(buf, &count) != CRMPI_OK || count > np)
        return CRMPI_ERR_PROTO;
    marks = calloc(count ? count : 1, sizeof(*marks));
    if (!marks)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    bool outside = false; /* a peer outside the job */
    for (uint32_t i = 0; i < count; i++) {
        crmpi_buf_get_u32(buf, &marks[i].peer);
        crmpi_buf_get_u32(buf, &marks[i].count);
        outside |= marks[i].peer >= np;
    }
    if (outside || crmpi_buf_get_done(buf) != CRMPI_OK) {
        free(marks);
        return CRMPI_ERR_PROTO;
    }
    *marks_out = marks;
    *count_out = count;
    return CRMPI_OK;
}
