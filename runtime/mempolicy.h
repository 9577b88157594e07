/*
 * mempolicy.h: memory policies of address ranges (mbind(2)), as a restart hands them to a
 * restored rank (docs/design.md, "Memory placement").
 *
 *   agent (crs: numa_maps recorded at checkpoint, nodes mapped onto the new layout)
 *      |  CKPT_RESTART: one entry "CRMPI_MEMPOLICY=<areas>" among the CRMPI_MCA_ entries
 *      v
 *   rank (snapc app, before INC's restart): mbind() over each of its own areas
 *
 * Only the process an area belongs to can set its policy: Linux has no call that changes
 * another process's mappings' policies, and CRIU restores none. So the agent records them
 * from /proc/<pid>/numa_maps and the restored rank sets them on itself.
 *
 * Text form (one line, areas separated by ','):
 *   <pid>:<start hex>-<end hex>:<mode>:<flags hex>:<node mask hex>
 * pid is the process's pid as it sees itself (getpid() in the rank's namespace), mode an
 * MPOL_* value of linux/mempolicy.h, flags its MPOL_F_STATIC_NODES/RELATIVE_NODES, and the
 * mask OS node numbers below CRMPI_MEMPOLICY_MAX_NODES. Ranks that know no such entry skip it:
 * it does not start with CRMPI_MCA_.
 *
 * Thread safety: the functions keep no state.
 */
#ifndef CRMPI_MEMPOLICY_H
#define CRMPI_MEMPOLICY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Name of the entry in the restart message. */
#define CRMPI_MEMPOLICY_ENV "CRMPI_MEMPOLICY"
/* Node numbers a mask can name. */
#define CRMPI_MEMPOLICY_MAX_NODES 64

/* One address range's policy. */
typedef struct crmpi_mempolicy_area {
    pid_t pid;      /* the process it belongs to, as that process sees its own pid */
    uint64_t start; /* first byte, page aligned */
    uint64_t end;   /* one past the last byte */
    int mode;       /* MPOL_DEFAULT, MPOL_BIND, ... */
    unsigned flags; /* MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES */
    uint64_t nodes; /* bit n: OS node n */
} crmpi_mempolicy_area_t;

/**
 * The text form of `areas` (malloc'ed into *text_out; the caller frees).
 * @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_mempolicy_format(const crmpi_mempolicy_area_t *areas, size_t num_areas, char **text_out);

/**
 * Parse the text form. @return CRMPI_OK (*areas_out malloc'ed, NULL when empty),
 * CRMPI_ERR_PROTO (malformed), CRMPI_ERR_OUT_OF_RESOURCE.
 */
int crmpi_mempolicy_parse(const char *text, crmpi_mempolicy_area_t **areas_out,
                          size_t *num_areas_out);

/**
 * Give each area of this process (pid == getpid()) its policy with mbind(2), without
 * moving pages (the agent placed them already). An area that cannot be given its policy
 * (gone since, a node not allowed here) is logged once as a warning and skipped.
 * @param applied_out  how many areas got their policy
 * @return CRMPI_OK (also when some were skipped)
 */
int crmpi_mempolicy_apply(const crmpi_mempolicy_area_t *areas, size_t num_areas,
                          size_t *applied_out);

#endif /* CRMPI_MEMPOLICY_H */
