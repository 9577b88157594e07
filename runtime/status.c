/*
 * status.c: text of crmpi's status codes (crmpi_status.h).
 */
#include "crmpi_status.h"

const char *crmpi_strerror(int status)
{
    switch (status) {
    case CRMPI_OK: return "success";
    case CRMPI_ERROR: return "unspecified error";
    case CRMPI_ERR_OUT_OF_RESOURCE: return "out of resources";
    case CRMPI_ERR_BAD_PARAM: return "invalid argument";
    case CRMPI_ERR_NOT_FOUND: return "not found";
    case CRMPI_ERR_UNREACH: return "peer unreachable";
    case CRMPI_ERR_RESOURCE_BUSY: return "resource busy, try again";
    case CRMPI_ERR_TIMEOUT: return "timed out";
    case CRMPI_ERR_IO: return "input/output error";
    case CRMPI_ERR_PROTO: return "protocol error";
    case CRMPI_ERR_NOT_SUPPORTED: return "not supported";
    case CRMPI_ERR_CKPT_ABORTED: return "checkpoint aborted";
    case CRMPI_ERR_EXISTS: return "already exists";
    case CRMPI_ERR_PEER_GONE: return "peer closed the connection";
    case CRMPI_ERR_ACCESS: return "not allowed (owner or permissions)";
    }
    /* Never NULL: a caller prints this straight into a message. */
    return "unknown status";
}
