/*
 * snapc_base.c: what the three coordinators share (snapc.h).
 */
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
