/*
 * crcp_bkmrk.c: the bookmark exchange's local half and the drain (crcp.h), on the PML's
 * checkpoint support (pml.h). The exchange itself goes through the coordinators (snapc.h).
 */
#include "config.h"

#include <sched.h>
#include <stdlib.h>

#include "crcp.h"
#include "clock.h"
#include "crmpi_status.h"
#include "log.h"
#include "pml.h"
#include "progress.h"
#include "rte.h"

static crmpi_crcp_stats_t crcp_bkmrk_stats;
static uint64_t crcp_bkmrk_begin_ns;

int crmpi_crcp_bookmarks(crmpi_snapc_bookmark_t **marks_out, size_t *count_out)
{
    uint32_t world_size = crmpi_rte_job()->size;
    crmpi_snapc_bookmark_t *marks;
    size_t count = 0;

    crcp_bkmrk_stats = (crmpi_crcp_stats_t){0};
    crcp_bkmrk_begin_ns = crmpi_clock_ns();
    marks = malloc((world_size ? world_size : 1) * sizeof(*marks));
    if (!marks) {
        crmpi_log_error("crcp: out of memory for %u bookmarks", world_size);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    crmpi_pml_cr_quiesce_begin();
    for (uint32_t peer = 0; peer < world_size; peer++) {
        uint32_t sent, arrived;

        crmpi_pml_cr_bookmark(peer, &sent, &arrived);
        if (sent > 0)
            marks[count++] = (crmpi_snapc_bookmark_t){.peer = peer, .count = sent};
    }
    crcp_bkmrk_stats.peers_sent = (uint32_t)count;
    crcp_bkmrk_stats.bookmark_ns = crmpi_clock_ns() - crcp_bkmrk_begin_ns;
    *marks_out = marks;
    *count_out = count;
    return CRMPI_OK;
}

/*
 * Compare what arrived with what the peers sent. @return 1 when every expected message
 * arrived, 0 when some are still missing, CRMPI_ERR_PROTO when more arrived than were sent
 * (the bookmarks are not from one cut: a bug, logged).
 */
static int crcp_bkmrk_all_arrived(const crmpi_snapc_bookmark_t *expected, size_t count,
                                  uint64_t *missing_out)
{
    uint64_t missing = 0;

    for (size_t i = 0; i < count; i++) {
        uint32_t sent, arrived;

        crmpi_pml_cr_bookmark(expected[i].peer, &sent, &arrived);
        if ((int32_t)(expected[i].count - arrived) < 0) {
            crmpi_log_error("crcp: %u messages arrived from rank %u, which sent %u", arrived,
                            expected[i].peer, expected[i].count);
            return CRMPI_ERR_PROTO;
        }
        missing += expected[i].count - arrived;
    }
    *missing_out = missing;
    return missing == 0;
}

int crmpi_crcp_drain(const crmpi_snapc_bookmark_t *expected, size_t count, int timeout_ms,
                     crmpi_crcp_interrupt_fn_t interrupt_fn, void *interrupt_arg)
{
    uint64_t start = crmpi_clock_ns();
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000000u;
    uint64_t missing_at_start = 0, missing = 0;
    int rc;

    crcp_bkmrk_stats.peers_expected = (uint32_t)count;
    rc = crcp_bkmrk_all_arrived(expected, count, &missing_at_start);
    missing = missing_at_start;
    while (rc == 0 || (rc == 1 && !crmpi_pml_cr_quiet())) {
        /* Other ranks' C/R threads drain too; on a crowded node, give them the core. */
        if (crmpi_progress() == 0)
            sched_yield();
        if (crmpi_clock_ns() > deadline) {
            crmpi_log_error("crcp: drain not finished after %d ms: %llu messages from %zu "
                            "peers still missing%s",
                            timeout_ms, (unsigned long long)missing, count,
                            crmpi_pml_cr_quiet() ? "" : ", transfers still moving");
            rc = CRMPI_ERR_TIMEOUT;
            break;
        }
        if (interrupt_fn && interrupt_fn(interrupt_arg)) {
            rc = CRMPI_ERR_CKPT_ABORTED;
            break;
        }
        rc = crcp_bkmrk_all_arrived(expected, count, &missing);
    }
    crcp_bkmrk_stats.messages_drained = missing_at_start - missing;
    crcp_bkmrk_stats.bytes_pulled = crmpi_pml_cr_stats()->pulled_bytes;
    crcp_bkmrk_stats.drain_ns = crmpi_clock_ns() - start;
    return rc == 1 ? CRMPI_OK : rc;
}

void crmpi_crcp_release(void)
{
    crmpi_pml_cr_quiesce_end();
}

const crmpi_crcp_stats_t *crmpi_crcp_last_stats(void)
{
    return &crcp_bkmrk_stats;
}
