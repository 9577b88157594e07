/*
 * crmpi_info.c: what this crmpi installation is made of, modelled on ompi_info.
 *
 *   crmpi_info                          package, version, configuration, components
 *   crmpi_info --param FW COMPONENT     parameters (either may be "all")
 *   crmpi_info --all                    both, every parameter at every level
 *   crmpi_info --snapshot HANDLE        decode a snapshot (--verify: check every file)
 *
 * Options are parsed into an info_request_t first and acted on afterwards, so that a bad
 * command line prints nothing but its one-line error.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component.h"
#include "crmpi_status.h"
#include "info.h"
#include "log.h"
#include "param.h"

/* ompi_info's default level is 1; ours shows everything, as --param is asked for on
 * purpose and a parameter the listing hides is one the user cannot find. */
#define INFO_DEFAULT_LEVEL 9

/* What the command line asks for. */
typedef struct info_request {
    bool help;                   /* --help: usage only */
    bool version;                /* --version: one line only */
    bool summary;                /* the build summary and component list */
    const char *param_fw;        /* --param's framework, or NULL when not asked */
    const char *param_component; /* --param's component */
    int level;                   /* --level, or INFO_DEFAULT_LEVEL */
    const char *snapshot;        /* --snapshot's handle, or NULL when not asked */
    bool verify;                 /* --verify: read every file of the snapshot */
    bool show_files;             /* --files: list every file of the snapshot */
} info_request_t;

static void info_usage_print(void)
{
    printf("Usage: crmpi_info [OPTION]...\n"
           "Show how crmpi was built, its frameworks and components, and its parameters.\n"
           "\n"
           "      --param FRAMEWORK COMPONENT\n"
           "                       list the parameters of a component with their current\n"
           "                       value, where it comes from, type, level and help; either\n"
           "                       may be 'all', COMPONENT may be 'base' (the framework's own\n"
           "                       parameters); FRAMEWORK may also be 'mpi' or 'runtime'\n"
           "      --level N        only parameters of level N and below: 1-3 user, 4-6 tuner,\n"
           "                       7-9 developer (default %d: all of them; ompi_info's\n"
           "                       default is 1)\n"
           "  -a, --all            everything: the summary and every parameter at level 9\n"
           "      --snapshot HANDLE\n"
           "                       decode a snapshot: HANDLE is the directory ompi-checkpoint\n"
           "                       printed (<dir>/<jobid>.ckpt), or a jobid looked up in\n"
           "                       snapc_base_global_snapshot_dir; shows the committed\n"
           "                       sequences, each sequence's state, ranks, hosts, sizes,\n"
           "                       launch options, BTLs, CRS, timings and rank facts\n"
           "      --verify         with --snapshot: read every file and check its sha256,\n"
           "                       and say which sequence a restart would use\n"
           "      --files          with --snapshot: list every file with its sha256 and size\n"
           "  -V, --version        print the version and exit\n"
           "  -h, --help           print this help and exit\n"
           "\n"
           "Without options, prints the package, its configuration and one line per\n"
           "component. Values come from --mca (mpirun), CRMPI_MCA_<name> in the environment,\n"
           "the parameter file ($CRMPI_PARAM_FILE, else ~/.crmpi/mca-params.conf), or the\n"
           "default, in that order. Exit status: 0 success, 1 failure (with --snapshot: the\n"
           "handle does not exist, nothing is committed, or --verify found damage), 2 bad\n"
           "usage.\n",
           INFO_DEFAULT_LEVEL);
}

/* Fill `request` from the command line; on a mistake, say which in one line. */
static int info_request_parse(int argc, char **argv, info_request_t *request)
{
    *request = (info_request_t){.level = INFO_DEFAULT_LEVEL};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            request->help = true;
        } else if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
            request->version = true;
        } else if (strcmp(arg, "-a") == 0 || strcmp(arg, "--all") == 0) {
            request->summary = true;
            request->param_fw = "all";
            request->param_component = "all";
            request->level = 9;
        } else if (strcmp(arg, "--param") == 0) {
            if (i + 2 >= argc) {
                crmpi_log_error("--param needs a FRAMEWORK and a COMPONENT (either may be "
                                "'all'); see 'crmpi_info --help'");
                return INFO_EXIT_USAGE;
            }
            request->param_fw = argv[++i];
            request->param_component = argv[++i];
        } else if (strcmp(arg, "--snapshot") == 0) {
            if (i + 1 >= argc) {
                crmpi_log_error("--snapshot needs a HANDLE (a <jobid>.ckpt directory or a "
                                "jobid); see 'crmpi_info --help'");
                return INFO_EXIT_USAGE;
            }
            request->snapshot = argv[++i];
        } else if (strcmp(arg, "--verify") == 0) {
            request->verify = true;
        } else if (strcmp(arg, "--files") == 0) {
            request->show_files = true;
        } else if (strcmp(arg, "--level") == 0 || strncmp(arg, "--level=", 8) == 0) {
            const char *text = arg[7] == '=' ? arg + 8 : (i + 1 < argc ? argv[++i] : NULL);
            int64_t level;

            if (!text || crmpi_param_parse_int(text, &level) != CRMPI_OK || level < 1 ||
                level > 9) {
                crmpi_log_error("--level needs a number from 1 to 9; see 'crmpi_info --help'");
                return INFO_EXIT_USAGE;
            }
            request->level = (int)level;
        } else if (arg[0] == '-') {
            crmpi_log_error("unknown option '%s'; see 'crmpi_info --help'", arg);
            return INFO_EXIT_USAGE;
        } else {
            crmpi_log_error("unexpected argument '%s'; see 'crmpi_info --help'", arg);
            return INFO_EXIT_USAGE;
        }
    }
    if ((request->verify || request->show_files) && !request->snapshot) {
        crmpi_log_error("--verify and --files go with --snapshot HANDLE; see 'crmpi_info --help'");
        return INFO_EXIT_USAGE;
    }
    if (!request->param_fw && !request->snapshot)
        request->summary = true;
    return INFO_EXIT_OK;
}

static void info_summary_line(const char *label, const char *value)
{
    printf("%*s: %s\n", INFO_LABEL_WIDTH, label, value);
}

/* Package, configuration, and one line per component of every framework. */
static void info_summary_print(void)
{
    char label[INFO_LABEL_WIDTH + 64];
    char text[1024];

    info_summary_line("Package", PACKAGE_STRING);
    info_summary_line("crmpi", PACKAGE_VERSION);
    /* configure's own variable starts with a blank. */
    info_summary_line("Configure command line",
                      CRMPI_CONFIGURE_ARGS + strspn(CRMPI_CONFIGURE_ARGS, " "));
    info_summary_line("C compiler", CRMPI_BUILD_CC);
    info_summary_line("CRIU binary",
                      CRMPI_CRIU_BIN[0] ? CRMPI_CRIU_BIN : "none (configured without CRIU)");
    if (CRMPI_CRIU_BIN[0])
        info_summary_line("CRIU binary, installed copy", CRMPI_CRIU_INSTALLED);
    for (size_t i = 0; crmpi_catalog[i]; i++) {
        const crmpi_framework_info_t *fw = crmpi_catalog[i];

        snprintf(label, sizeof(label), "MCA %s", fw->name);
        if (!fw->components || !fw->components[0])
            info_summary_line(label, "(no component)");
        for (const crmpi_component_info_t *const *c = fw->components; c && *c; c++) {
            snprintf(text, sizeof(text), "%s (%s)", (*c)->name, (*c)->description);
            info_summary_line(label, text);
        }
    }
}

int main(int argc, char **argv)
{
    info_request_t request;
    int status;

    crmpi_log_set_who("crmpi_info");
    status = info_request_parse(argc, argv, &request);
    if (status != INFO_EXIT_OK)
        return status;
    if (request.help) {
        info_usage_print();
        return INFO_EXIT_OK;
    }
    if (request.version) {
        printf("crmpi_info (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return INFO_EXIT_OK;
    }

    if (crmpi_catalog_register_all() != CRMPI_OK)
        return INFO_EXIT_ERROR;
    /* The user may be here precisely to check a parameter name: judge them all. */
    crmpi_param_warn_unknown(NULL);

    if (request.summary)
        info_summary_print();
    if (request.param_fw)
        status = info_param_list(request.param_fw, request.param_component, request.level);
    if (request.snapshot && status == INFO_EXIT_OK)
        status = info_snapshot_print(request.snapshot, request.verify, request.show_files);
    crmpi_param_finalize();
    return status;
}
