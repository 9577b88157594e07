/*
 * filem_posix.h: the posix component of FileM (filem_posix.c): copies with read(2) and
 * write(2) to storage every node mounts. For the framework's table (filem_base.c) and the
 * unit tests; everything else reaches it through crmpi_filem_base_open()'s op table.
 */
#ifndef FILEM_POSIX_H
#define FILEM_POSIX_H

#include "component.h"

extern const crmpi_component_t filem_posix_component;

#endif /* FILEM_POSIX_H */
