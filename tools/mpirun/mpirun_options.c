/*
 * mpirun_options.c: parse mpirun's command line (see mpirun_options.h).
 *
 * Open MPI's spellings are accepted where crmpi has the feature: -np and -n, --host and -H,
 * single or double dashes for long options (Open MPI's own habit), "--opt=value" or
 * "--opt value". Parsing stops at the first non-option word: the program.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "mpirun_options.h"

const char mpirun_options_usage[] =
    "Usage: mpirun [OPTION]... PROGRAM [ARG]...\n"
    "Start an MPI job of PROGRAM on this node, or on the hosts given (through Open MPI's\n"
    "mpirun and its daemons).\n"
    "\n"
    "  -np, -n N                 number of ranks (default: one per slot)\n"
    "  -H, --host LIST           hosts, comma-separated, each NAME or NAME:SLOTS\n"
    "      --hostfile FILE       hosts, one per line: NAME [slots=N]\n"
    "  -N, --npernode N          N ranks on each host (--map-by ppr:N:node)\n"
    "      --map-by WHAT         slot (default), core, socket, numa, node, or\n"
    "                            ppr:N:node|socket|numa (N ranks per object of each host)\n"
    "      --bind-to WHAT        none (default), hwthread, core, socket or numa\n"
    "      --report-bindings     say each rank's binding on stderr\n"
    "      --display-map         print the job's map (hosts and ranks) before it starts\n"
    "      --oversubscribe       allow more ranks than slots or cores\n"
    "      --launcher WHAT       local (this node only) or ompi (Open MPI's mpirun and\n"
    "                            daemons); default: ompi when a host is another node\n"
    "      --allow-run-as-root   accepted (crmpi runs as root, or with its capabilities)\n"
    "  -x VAR[=VALUE]            set VAR (or pass mpirun's own VAR) in every rank\n"
    "      --mca NAME VALUE      set an MCA parameter (crmpi_info --param all all lists them)\n"
    "      --tag-output          prefix each output line with [jobid,rank]<stdout|stderr>:\n"
    "      --with-ft cr          enable checkpoint/restart for this job (ompi-checkpoint)\n"
    "      --restore SEQDIR      restore the job from a snapshot's sequence directory\n"
    "                            instead of starting it (ompi-restart uses it)\n"
    "      --ckpt-interval DURATION  with --with-ft cr: a checkpoint every DURATION (90,\n"
    "                            90s, 15m, 2h, 1d), counted from the end of the last one\n"
    "      --ckpt-interval auto --mtbf DURATION  the interval that minimises the run time\n"
    "                            for that mean time between failures (Daly's formula,\n"
    "                            re-estimated from each checkpoint's measured cost)\n"
    "      --timeout SECONDS     end the job, with an error, after SECONDS\n"
    "      --report-pid WHERE    print the jobid (mpirun's pid) to - (stdout), + (stderr)\n"
    "                            or a file\n"
    "  -v, --verbose             say what mpirun does (also prints the jobid)\n"
    "  -V, --version             print the version and exit\n"
    "  -h, --help                print this help and exit\n"
    "\n"
    "Exit status: 0 when every rank exits 0; otherwise the first non-zero exit code of a\n"
    "rank, 128+N when a rank is killed by signal N, or 1 for mpirun's own errors.\n";

int mpirun_options_fail(char *err_out, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_out, err_len, fmt, ap);
    va_end(ap);
    return CRMPI_ERR_BAD_PARAM;
}

/* A duration: a positive number with an optional unit s, m, h or d ("90", "1.5h"). */
static int mpirun_options_parse_duration(const char *text, double *seconds_out)
{
    static const struct {
        char unit;
        double seconds;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
    char *end;
    double value;

    errno = 0;
    value = strtod(text, &end);
    if (errno || end == text || !(value > 0) || value > 1e9)
        return CRMPI_ERR_BAD_PARAM;
    if (*end == '\0') {
        *seconds_out = value;
        return CRMPI_OK;
    }
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
        if (end[0] == units[u].unit && end[1] == '\0') {
            *seconds_out = value * units[u].seconds;
            return CRMPI_OK;
        }
    }
    return CRMPI_ERR_BAD_PARAM;
}

/* A whole decimal number in [min, max]; nothing else. */
static int mpirun_options_parse_int(const char *text, long min, long max, int *value_out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < min || value > max) {
        return CRMPI_ERR_BAD_PARAM;
    }
    *value_out = (int)value;
    return CRMPI_OK;
}

static int mpirun_options_grow(void **array, size_t count, size_t elem_size)
{
    void *grown = realloc(*array, (count + 1) * elem_size);
    if (!grown) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *array = grown;
    return CRMPI_OK;
}

static int mpirun_options_add_host(mpirun_options_t *opts, const char *name, size_t name_len,
                                   int slots)
{
    if (mpirun_options_grow((void **)&opts->hosts, opts->num_hosts, sizeof(*opts->hosts))) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    char *copy = strndup(name, name_len);
    if (!copy) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    opts->hosts[opts->num_hosts++] = (mpirun_host_t){.name = copy, .slots = slots};
    return CRMPI_OK;
}

/* "a,b:2,c" */
static int mpirun_options_parse_hosts(mpirun_options_t *opts, const char *list, char *err_out,
                                      size_t err_len)
{
    const char *entry = list;
    for (;;) {
        size_t len = strcspn(entry, ",");
        const char *colon = memchr(entry, ':', len);
        size_t name_len = colon ? (size_t)(colon - entry) : len;
        int slots = 0;
        if (name_len == 0) {
            return mpirun_options_fail(err_out, err_len, "--host: empty host name in '%s'", list);
        }
        if (colon) {
            char text[32];
            size_t slots_len = len - name_len - 1;
            if (slots_len == 0 || slots_len >= sizeof(text)) {
                return mpirun_options_fail(err_out, err_len, "--host: bad slot count in '%.*s'",
                                           (int)len, entry);
            }
            memcpy(text, colon + 1, slots_len);
            text[slots_len] = '\0';
            if (mpirun_options_parse_int(text, 1, 1 << 20, &slots) != CRMPI_OK) {
                return mpirun_options_fail(err_out, err_len,
                                           "--host: '%s' is not a positive slot count", text);
            }
        }
        if (mpirun_options_add_host(opts, entry, name_len, slots) != CRMPI_OK) {
            return mpirun_options_fail(err_out, err_len, "out of memory");
        }
        if (entry[len] == '\0') {
            return CRMPI_OK;
        }
        entry += len + 1;
    }
}

static int mpirun_options_parse_env(mpirun_options_t *opts, const char *spec, char *err_out,
                                    size_t err_len)
{
    const char *eq = strchr(spec, '=');
    size_t name_len = eq ? (size_t)(eq - spec) : strlen(spec);
    if (name_len == 0) {
        return mpirun_options_fail(err_out, err_len, "-x: '%s' has no variable name", spec);
    }
    if (mpirun_options_grow((void **)&opts->env, opts->num_env, sizeof(*opts->env))) {
        return mpirun_options_fail(err_out, err_len, "out of memory");
    }
    mpirun_env_var_t *var = &opts->env[opts->num_env];
    var->name = strndup(spec, name_len);
    var->value = eq ? strdup(eq + 1) : NULL;
    if (!var->name || (eq && !var->value)) {
        free(var->name);
        free(var->value);
        return mpirun_options_fail(err_out, err_len, "out of memory");
    }
    opts->num_env++;
    return CRMPI_OK;
}

static int mpirun_options_add_mca(mpirun_options_t *opts, const char *name, const char *value,
                                  char *err_out, size_t err_len)
{
    if (!*name) {
        return mpirun_options_fail(err_out, err_len, "--mca: empty parameter name");
    }
    if (mpirun_options_grow((void **)&opts->mca_names, opts->num_mca, sizeof(char *)) ||
        mpirun_options_grow((void **)&opts->mca_values, opts->num_mca, sizeof(char *))) {
        return mpirun_options_fail(err_out, err_len, "out of memory");
    }
    opts->mca_names[opts->num_mca] = strdup(name);
    opts->mca_values[opts->num_mca] = strdup(value);
    opts->num_mca++;
    if (!opts->mca_names[opts->num_mca - 1] || !opts->mca_values[opts->num_mca - 1]) {
        return mpirun_options_fail(err_out, err_len, "out of memory");
    }
    return CRMPI_OK;
}

typedef struct mpirun_keyword {
    const char *word; /* as typed by the user */
    int value;        /* the enum value */
} mpirun_keyword_t;

static const mpirun_keyword_t mpirun_map_by_words[] = {
    {"slot", MPIRUN_MAP_BY_SLOT},
    {"core", MPIRUN_MAP_BY_CORE},
    {"socket", MPIRUN_MAP_BY_SOCKET},
    {"package", MPIRUN_MAP_BY_SOCKET},
    {"numa", MPIRUN_MAP_BY_NUMA},
    {"node", MPIRUN_MAP_BY_NODE},
    {NULL, 0},
};

static const mpirun_keyword_t mpirun_bind_to_words[] = {
    {"none", MPIRUN_BIND_TO_NONE},
    {"core", MPIRUN_BIND_TO_CORE},
    {"socket", MPIRUN_BIND_TO_SOCKET},
    {"package", MPIRUN_BIND_TO_SOCKET},
    {"numa", MPIRUN_BIND_TO_NUMA},
    {"hwthread", MPIRUN_BIND_TO_HWTHREAD},
    {NULL, 0},
};

static int mpirun_options_keyword(const mpirun_keyword_t *words, const char *text, int *value_out);

static const mpirun_keyword_t mpirun_ppr_words[] = {
    {"node", MPIRUN_PPR_NODE},
    {"socket", MPIRUN_PPR_SOCKET},
    {"package", MPIRUN_PPR_SOCKET},
    {"numa", MPIRUN_PPR_NUMA},
    {NULL, 0},
};

const char *mpirun_options_map_by_text(const mpirun_options_t *opts, char *buf, size_t len)
{
    static const char *const names[] = {"slot", "core", "socket", "numa", "node"};
    static const char *const objects[] = {"node", "socket", "numa"};

    if (opts->map_by != MPIRUN_MAP_BY_PPR)
        return names[opts->map_by];
    snprintf(buf, len, "ppr:%d:%s", opts->ppr_count, objects[opts->ppr_object]);
    return buf;
}

const char *mpirun_options_bind_to_text(mpirun_bind_to_t bind_to)
{
    static const char *const names[] = {"none", "core", "socket", "numa", "hwthread"};

    return names[bind_to];
}

/* "ppr:N:OBJECT" */
static int mpirun_options_parse_ppr(mpirun_options_t *opts, const char *value, char *err_out,
                                    size_t err_len)
{
    char count[16];
    const char *object = strchr(value + 4, ':');
    size_t count_len = object ? (size_t)(object - value - 4) : 0;
    int word = 0;

    if (!object || count_len == 0 || count_len >= sizeof(count))
        return mpirun_options_fail(err_out, err_len,
                                   "--map-by %s: expected ppr:N:node, ppr:N:socket or ppr:N:numa",
                                   value);
    memcpy(count, value + 4, count_len);
    count[count_len] = '\0';
    if (mpirun_options_parse_int(count, 1, 1 << 20, &opts->ppr_count) != CRMPI_OK)
        return mpirun_options_fail(
            err_out, err_len, "--map-by %s: '%s' is not a positive number of ranks", value, count);
    if (mpirun_options_keyword(mpirun_ppr_words, object + 1, &word) != CRMPI_OK)
        return mpirun_options_fail(err_out, err_len,
                                   "--map-by %s: unknown object '%s' (node, socket, numa)", value,
                                   object + 1);
    opts->map_by = MPIRUN_MAP_BY_PPR;
    opts->ppr_object = (mpirun_ppr_object_t)word;
    return CRMPI_OK;
}

static int mpirun_options_keyword(const mpirun_keyword_t *words, const char *text, int *value_out)
{
    for (const mpirun_keyword_t *w = words; w->word; w++) {
        if (strcmp(w->word, text) == 0) {
            *value_out = w->value;
            return CRMPI_OK;
        }
    }
    return CRMPI_ERR_NOT_FOUND;
}

/*
 * Match argv[*index] against a long option that takes a value, spelled -name, --name,
 * -name=value or --name=value. On a match, *value_out is the value (from the same word or
 * the next) and *index is advanced past it.
 * @return 1 matched, 0 not this option, CRMPI_ERR_BAD_PARAM when the value is missing.
 */
static int mpirun_options_take(int argc, char **argv, int *index, const char *name,
                               const char **value_out)
{
    const char *arg = argv[*index];
    if (arg[0] != '-') {
        return 0;
    }
    arg += (arg[1] == '-') ? 2 : 1;
    size_t name_len = strlen(name);
    if (strncmp(arg, name, name_len) != 0) {
        return 0;
    }
    if (arg[name_len] == '=') {
        *value_out = arg + name_len + 1;
        return 1;
    }
    if (arg[name_len] != '\0') {
        return 0;
    }
    if (*index + 1 >= argc) {
        return CRMPI_ERR_BAD_PARAM;
    }
    *index += 1;
    *value_out = argv[*index];
    return 1;
}

/* A flag spelled -name or --name. */
static int mpirun_options_flag(const char *arg, const char *name)
{
    if (arg[0] != '-') {
        return 0;
    }
    arg += (arg[1] == '-') ? 2 : 1;
    return strcmp(arg, name) == 0;
}

int mpirun_options_parse(int argc, char **argv, mpirun_options_t *opts_out, char *err_out,
                         size_t err_len)
{
    mpirun_options_t opts;
    const char *value;
    int rc = CRMPI_OK;
    int i;

    memset(&opts, 0, sizeof(opts));
    for (i = 1; i < argc && rc == CRMPI_OK; i++) {
        const char *arg = argv[i];
        int took;
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            break; /* the program */
        }
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
/* A missing value ends parsing at once (the rest of the else-if chain must not run and
 * overwrite the message with "unknown option"). */
#define TAKE(name)                                                                                 \
    ({                                                                                             \
        took = mpirun_options_take(argc, argv, &i, (name), &value);                                \
        if (took < 0) {                                                                            \
            rc = mpirun_options_fail(err_out, err_len, "%s: missing value", arg);                  \
            break;                                                                                 \
        }                                                                                          \
        took;                                                                                      \
    })
        if (TAKE("np") || TAKE("n")) {
            if (mpirun_options_parse_int(value, 1, 1 << 20, &opts.np) != CRMPI_OK) {
                rc = mpirun_options_fail(err_out, err_len,
                                         "-np: '%s' is not a positive number of ranks", value);
            }
        } else if (TAKE("host") || TAKE("H")) {
            rc = mpirun_options_parse_hosts(&opts, value, err_out, err_len);
        } else if (TAKE("hostfile") || TAKE("machinefile")) {
            free(opts.hostfile);
            opts.hostfile = strdup(value);
        } else if (TAKE("map-by")) {
            int word = 0;
            if (strncmp(value, "ppr:", 4) == 0) {
                rc = mpirun_options_parse_ppr(&opts, value, err_out, err_len);
            } else if (mpirun_options_keyword(mpirun_map_by_words, value, &word) != CRMPI_OK) {
                rc = mpirun_options_fail(err_out, err_len,
                                         "--map-by: unknown '%s' (slot, core, socket, numa, node, "
                                         "ppr:N:node|socket|numa)",
                                         value);
            } else {
                opts.map_by = (mpirun_map_by_t)word;
                opts.ppr_count = 0;
            }
        } else if (TAKE("N") || TAKE("npernode")) {
            if (mpirun_options_parse_int(value, 1, 1 << 20, &opts.ppr_count) != CRMPI_OK) {
                rc = mpirun_options_fail(
                    err_out, err_len, "-N: '%s' is not a positive number of ranks per host", value);
            }
            opts.map_by = MPIRUN_MAP_BY_PPR;
            opts.ppr_object = MPIRUN_PPR_NODE;
        } else if (TAKE("bind-to")) {
            int word = 0;
            if (mpirun_options_keyword(mpirun_bind_to_words, value, &word) != CRMPI_OK) {
                rc = mpirun_options_fail(
                    err_out, err_len,
                    "--bind-to: unknown '%s' (none, hwthread, core, socket, numa)", value);
            }
            opts.bind_to = (mpirun_bind_to_t)word;
        } else if (TAKE("launcher")) {
            if (strcmp(value, "local") == 0) {
                opts.launcher = MPIRUN_LAUNCHER_LOCAL;
            } else if (strcmp(value, "ompi") == 0) {
                opts.launcher = MPIRUN_LAUNCHER_OMPI;
            } else {
                rc = mpirun_options_fail(err_out, err_len,
                                         "--launcher: unknown '%s' (local or ompi)", value);
            }
        } else if (TAKE("x")) {
            rc = mpirun_options_parse_env(&opts, value, err_out, err_len);
        } else if (mpirun_options_flag(arg, "mca") || mpirun_options_flag(arg, "gmca")) {
            if (i + 2 >= argc) {
                rc = mpirun_options_fail(err_out, err_len, "%s: needs NAME and VALUE", arg);
            } else {
                rc = mpirun_options_add_mca(&opts, argv[i + 1], argv[i + 2], err_out, err_len);
                i += 2;
            }
        } else if (TAKE("with-ft")) {
            if (strcmp(value, "cr") == 0) {
                opts.with_ft_cr = true;
            } else if (strcmp(value, "none") != 0) {
                rc = mpirun_options_fail(err_out, err_len, "--with-ft: unknown '%s' (cr or none)",
                                         value);
            }
        } else if (TAKE("timeout")) {
            if (mpirun_options_parse_int(value, 1, 1 << 30, &opts.timeout_s) != CRMPI_OK) {
                rc = mpirun_options_fail(
                    err_out, err_len, "--timeout: '%s' is not a positive number of seconds", value);
            }
        } else if (TAKE("ckpt-interval")) {
            opts.ckpt_auto = strcmp(value, "auto") == 0;
            if (!opts.ckpt_auto &&
                mpirun_options_parse_duration(value, &opts.ckpt_interval_s) != CRMPI_OK) {
                rc = mpirun_options_fail(err_out, err_len,
                                         "--ckpt-interval: '%s' is neither 'auto' nor a duration "
                                         "(90, 90s, 15m, 2h, 1d)",
                                         value);
            }
        } else if (TAKE("mtbf")) {
            if (mpirun_options_parse_duration(value, &opts.mtbf_s) != CRMPI_OK) {
                rc = mpirun_options_fail(err_out, err_len,
                                         "--mtbf: '%s' is not a duration (90, 90s, 15m, 2h, 1d)",
                                         value);
            }
        } else if (TAKE("report-pid")) {
            free(opts.report_pid);
            opts.report_pid = strdup(value);
        } else if (TAKE("restore")) {
            free(opts.restore);
            opts.restore = strdup(value);
            opts.with_ft_cr = true; /* a restored job can be checkpointed again */
        } else if (mpirun_options_flag(arg, "tag-output")) {
            opts.tag_output = true;
        } else if (mpirun_options_flag(arg, "oversubscribe")) {
            opts.oversubscribe = true;
        } else if (mpirun_options_flag(arg, "report-bindings")) {
            opts.report_bindings = true;
        } else if (mpirun_options_flag(arg, "display-map")) {
            opts.display_map = true;
        } else if (mpirun_options_flag(arg, "allow-run-as-root")) {
            /* Open MPI's guard; crmpi runs as root or with its capabilities anyway. */
        } else if (mpirun_options_flag(arg, "v") || mpirun_options_flag(arg, "verbose")) {
            opts.verbose++;
        } else if (mpirun_options_flag(arg, "h") || mpirun_options_flag(arg, "help")) {
            opts.help = true;
        } else if (mpirun_options_flag(arg, "V") || mpirun_options_flag(arg, "version")) {
            opts.version = true;
        } else {
            rc = mpirun_options_fail(err_out, err_len,
                                     "unknown option '%s' (mpirun --help lists the options)", arg);
        }
#undef TAKE
    }
    if (rc == CRMPI_OK && !opts.help && !opts.version && i >= argc) {
        rc = mpirun_options_fail(err_out, err_len, "no program to run (mpirun --help)");
    }
    if (rc == CRMPI_OK && (opts.ckpt_interval_s > 0 || opts.ckpt_auto) && !opts.with_ft_cr) {
        rc = mpirun_options_fail(err_out, err_len,
                                 "--ckpt-interval needs --with-ft cr (periodic checkpoints are "
                                 "checkpoints)");
    } else if (rc == CRMPI_OK && opts.ckpt_auto && opts.mtbf_s <= 0) {
        rc = mpirun_options_fail(err_out, err_len,
                                 "--ckpt-interval auto needs --mtbf DURATION, the mean time "
                                 "between failures it optimises for");
    } else if (rc == CRMPI_OK && opts.mtbf_s > 0 && !opts.ckpt_auto) {
        rc = mpirun_options_fail(err_out, err_len,
                                 "--mtbf is for --ckpt-interval auto (a fixed interval needs "
                                 "no MTBF)");
    }
    if (rc != CRMPI_OK) {
        mpirun_options_free(&opts);
        return rc;
    }
    opts.argv = argv + i;
    opts.argc = argc - i;
    *opts_out = opts;
    return CRMPI_OK;
}

int mpirun_hostfile_read(mpirun_options_t *opts, const char *path, char *err_out, size_t err_len)
{
    FILE *file = fopen(path, "r");
    char line[1024];
    int line_no = 0;
    int rc = CRMPI_OK;

    if (!file) {
        snprintf(err_out, err_len, "--hostfile: cannot read %s: %s", path, strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    while (rc == CRMPI_OK && fgets(line, sizeof(line), file)) {
        char name[256], extra[64];
        int slots = 0;
        line_no++;
        char *hash = strchr(line, '#');
        if (hash) {
            *hash = '\0';
        }
        int fields = sscanf(line, "%255s %63s", name, extra);
        if (fields <= 0) {
            continue; /* blank or comment-only line */
        }
        if (fields == 2) {
            char *eq = strchr(extra, '=');
            if (!eq || (strncmp(extra, "slots", 5) != 0 && strncmp(extra, "max_slots", 9) != 0) ||
                mpirun_options_parse_int(eq + 1, 1, 1 << 20, &slots) != CRMPI_OK) {
                rc = mpirun_options_fail(err_out, err_len,
                                         "--hostfile %s:%d: expected 'NAME [slots=N]', got '%s'",
                                         path, line_no, extra);
                break;
            }
        }
        if (mpirun_options_add_host(opts, name, strlen(name), slots) != CRMPI_OK) {
            rc = mpirun_options_fail(err_out, err_len, "out of memory");
        }
    }
    fclose(file);
    return rc;
}

void mpirun_options_free(mpirun_options_t *opts)
{
    for (size_t h = 0; h < opts->num_hosts; h++) {
        free(opts->hosts[h].name);
    }
    free(opts->hosts);
    for (size_t e = 0; e < opts->num_env; e++) {
        free(opts->env[e].name);
        free(opts->env[e].value);
    }
    free(opts->env);
    for (size_t m = 0; m < opts->num_mca; m++) {
        free(opts->mca_names[m]);
        free(opts->mca_values[m]);
    }
    free(opts->mca_names);
    free(opts->mca_values);
    free(opts->hostfile);
    free(opts->report_pid);
    for (int r = 0; opts->restore_copies && r < opts->np; r++) {
        free(opts->restore_copies[r].host);
        free(opts->restore_copies[r].partner);
    }
    free(opts->restore_copies);
    free(opts->restore);
    memset(opts, 0, sizeof(*opts));
}
