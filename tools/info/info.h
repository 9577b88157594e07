/*
 * info.h: the parts of crmpi_info, one per thing it can show.
 *
 *   crmpi_info.c   options, the build summary, the component list
 *   info_param.c   --param FRAMEWORK COMPONENT: parameters with value, source, level, help
 *   info_snapshot.c --snapshot HANDLE: a snapshot's sequences, ranks, sizes, checksums
 *
 * Each part prints to stdout and returns an exit status (0 success, 1 a failure already
 * reported on stderr), so main() only dispatches.
 */
#ifndef CRMPI_INFO_H
#define CRMPI_INFO_H

#include <stdbool.h>

/* Exit statuses of crmpi_info. */
enum {
    INFO_EXIT_OK = 0,    /* everything asked for was printed */
    INFO_EXIT_ERROR = 1, /* a request could not be met (unknown framework, ...) */
    INFO_EXIT_USAGE = 2, /* the command line is wrong */
};

/* Width of the right-aligned label column ("MCA plm local") before ": ". */
#define INFO_LABEL_WIDTH 24
/* Lines are wrapped to this many columns. */
#define INFO_LINE_WIDTH 100

/**
 * List the parameters of `framework` (a framework, a core prefix such as "mpi", or "all")
 * and `component` (a component name, "base", or "all") whose level is at most
 * `max_level`. Parameters must already be declared (crmpi_catalog_register_all).
 * @return INFO_EXIT_OK, or INFO_EXIT_ERROR after naming the unknown framework/component.
 */
int info_param_list(const char *framework, const char *component, int max_level);

/**
 * Decode the snapshot `handle` (a <jobid>.ckpt directory, or a jobid looked up in
 * snapc_base_global_snapshot_dir): commit record, every sequence with its state, ranks,
 * hosts, sizes, timings and rank facts; with `verify`, every file's checksum and the
 * sequence a restart would use; with `show_files`, every file's sha256, size and path.
 * @return INFO_EXIT_OK, or INFO_EXIT_ERROR when the handle does not exist, nothing is
 *         committed, or (with verify) a committed sequence is damaged
 */
int info_snapshot_print(const char *handle, bool verify, bool show_files);

#endif /* CRMPI_INFO_H */
