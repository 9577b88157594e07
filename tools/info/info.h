/*
 * info.h: the parts of crmpi_info, one per thing it can show.
 *
 *   crmpi_info.c   options, the build summary, the component list
 *   info_param.c   --param FRAMEWORK COMPONENT: parameters with value, source, level, help
 *
 * Each part prints to stdout and returns an exit status (0 success, 1 a failure already
 * reported on stderr), so main() only dispatches.
 */
#ifndef CRMPI_INFO_H
#define CRMPI_INFO_H

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

#endif /* CRMPI_INFO_H */
