/*
 * crmpi_status.h: the one status type of crmpi.
 *
 * CRMPI_OK is 0; every error is negative and has one meaning everywhere. A function that
 * returns an error sets none of its output parameters and never calls its callback.
 * MPI error classes (mpi.h) are a separate, user-facing space; mpi/ translates.
 */
#ifndef CRMPI_STATUS_H
#define CRMPI_STATUS_H

enum {
    CRMPI_OK = 0,
    CRMPI_ERROR = -1,               /* unspecified failure; prefer a precise code */
    CRMPI_ERR_OUT_OF_RESOURCE = -2, /* memory, fds, or another local resource ran out */
    CRMPI_ERR_BAD_PARAM = -3,       /* the caller passed an invalid argument */
    CRMPI_ERR_NOT_FOUND = -4,       /* no such key, parameter, component, file or peer */
    CRMPI_ERR_UNREACH = -5,         /* the peer cannot be reached with the allowed transports */
    CRMPI_ERR_RESOURCE_BUSY = -6,   /* try again after progress */
    CRMPI_ERR_TIMEOUT = -7,         /* a bounded wait ran out */
    CRMPI_ERR_IO = -8,              /* a read, write or syscall on a file or socket failed */
    CRMPI_ERR_PROTO = -9,           /* a peer sent a malformed or unexpected message */
    CRMPI_ERR_NOT_SUPPORTED = -10,  /* the operation is not available in this build or here */
    CRMPI_ERR_CKPT_ABORTED = -11,   /* a checkpoint was aborted; the job goes on */
    CRMPI_ERR_EXISTS = -12,         /* the thing to create is already there */
    CRMPI_ERR_PEER_GONE = -13,      /* the other end of a control connection closed */
    CRMPI_ERR_ACCESS = -14,         /* not this user's, or open to others' changes */
};

/** A short, static description of a status ("peer unreachable"); never NULL. */
const char *crmpi_strerror(int status);

#endif /* CRMPI_STATUS_H */
