/*
 * software.h: the software image a rank's checkpoint depends on. A
 * restored rank maps the same program and shared objects, at the same paths, that it had
 * mapped when it was dumped; CRIU refuses a file that changed, late and per rank. So each
 * rank's rank.json lists them (section "software": path -> size and ELF build-id), and
 * ompi-restart checks the list before it launches anything.
 */
#ifndef CRMPI_FILEM_SOFTWARE_H
#define CRMPI_FILEM_SOFTWARE_H

#include <stddef.h>
#include <sys/types.h>

#include "snapshot_rank_info.h"

/**
 * Record in `info` every regular file process `pid` maps (program, libraries, locale data),
 * with its size and, for ELF files that have one, its build-id.
 * @return CRMPI_OK, CRMPI_ERR_IO (the process's maps cannot be read) or an error of
 *         crmpi_filem_rank_info_set_json
 */
int crmpi_filem_software_record(crmpi_filem_rank_info_t *info, pid_t pid);

/**
 * Check that every file `info` records is here, unchanged (the same build-id, when one was
 * recorded, and the same size). @return CRMPI_OK, or CRMPI_ERR_NOT_FOUND (a file is
 * missing) or CRMPI_ERR_BAD_PARAM (a file differs), with `problem` saying which and how.
 */
int crmpi_filem_software_check(const crmpi_filem_rank_info_t *info, char *problem, size_t len);

#endif /* CRMPI_FILEM_SOFTWARE_H */
