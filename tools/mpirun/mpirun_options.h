/*
 * mpirun_options.h: mpirun's command line.
 *
 * Parsing is a pure function of argv (no I/O, no environment, no exit), so that every
 * option and every bad input is unit-tested (tools/mpirun/test/test_options.c).
 */
#ifndef MPIRUN_OPTIONS_H
#define MPIRUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    MPIRUN_MAP_BY_SLOT, /* fill each host's slots in order (the default) */
    MPIRUN_MAP_BY_CORE, /* round-robin over cores */
    MPIRUN_MAP_BY_SOCKET,
    MPIRUN_MAP_BY_NUMA,
    MPIRUN_MAP_BY_NODE, /* round-robin over hosts */
    MPIRUN_MAP_BY_PPR,  /* ppr:N:node|socket|numa (and -N N): N ranks per object of each host */
} mpirun_map_by_t;

typedef enum {
    MPIRUN_BIND_TO_NONE, /* the default: ranks may run anywhere */
    MPIRUN_BIND_TO_CORE,
    MPIRUN_BIND_TO_SOCKET,
    MPIRUN_BIND_TO_NUMA,
    MPIRUN_BIND_TO_HWTHREAD,
} mpirun_bind_to_t;

/* The object of --map-by ppr:N:OBJECT. */
typedef enum {
    MPIRUN_PPR_NODE,
    MPIRUN_PPR_SOCKET,
    MPIRUN_PPR_NUMA,
} mpirun_ppr_object_t;

/* --launcher: which plm component starts the agents. */
typedef enum {
    MPIRUN_LAUNCHER_DEFAULT, /* the plm parameter, else ompi when a host is another node */
    MPIRUN_LAUNCHER_LOCAL,
    MPIRUN_LAUNCHER_OMPI,
} mpirun_launcher_t;

typedef struct mpirun_host {
    char *name; /* as given by the user */
    int slots;  /* slots on that host; 0 means "as many cores as it has" */
} mpirun_host_t;

typedef struct mpirun_env_var {
    char *name;  /* variable name */
    char *value; /* value to set; NULL means "forward mpirun's own value" */
} mpirun_env_var_t;

/* Where a rank's copies of the sequence to restore are, when the sequence is held only on
 * the nodes' own storage: its own node and its partner's (NULL: none). */
typedef struct mpirun_copy_nodes {
    char *host;
    char *partner;
} mpirun_copy_nodes_t;

typedef struct mpirun_options {
    int np;               /* -np/-n; 0 when not given (then one rank per slot) */
    mpirun_host_t *hosts; /* --host entries, then --hostfile entries */
    size_t num_hosts;
    char *hostfile;                 /* --hostfile path (entries are read by mpirun_hostfile_read) */
    mpirun_map_by_t map_by;         /* --map-by */
    int ppr_count;                  /* --map-by ppr:N:OBJECT, -N N: N (0 unless MAP_BY_PPR) */
    mpirun_ppr_object_t ppr_object; /* its OBJECT */
    mpirun_bind_to_t bind_to;       /* --bind-to */
    bool report_bindings;           /* --report-bindings: each rank's binding on stderr */
    bool display_map;               /* --display-map: the job's map on stdout before it starts */
    mpirun_launcher_t launcher;     /* --launcher */
    bool oversubscribe;             /* --oversubscribe: more ranks than slots/cores is allowed */
    mpirun_env_var_t *env;          /* -x entries, in order */
    size_t num_env;
    char **mca_names; /* --mca NAME VALUE pairs, in order */
    char **mca_values;
    size_t num_mca;
    bool tag_output;        /* --tag-output: prefix each line with [jobid,rank]<stream>: */
    bool with_ft_cr;        /* --with-ft cr */
    int timeout_s;          /* --timeout N; 0 means none */
    double ckpt_interval_s; /* --ckpt-interval DURATION; 0: none (or auto) */
    bool ckpt_auto;         /* --ckpt-interval auto: Daly's interval for mtbf_s */
    double mtbf_s;          /* --mtbf DURATION (with --ckpt-interval auto) */
    char *report_pid;       /* --report-pid -|+|FILE; NULL when not asked */
    char *restore;          /* --restore SEQDIR: the snapshot sequence to restore; NULL: launch */
    mpirun_copy_nodes_t *restore_copies; /* its ranks' copies on the nodes (np entries), when
                                          * not held globally; NULL otherwise */
    int verbose;                         /* -v/--verbose count */
    bool help;                           /* -h/--help */
    bool version;                        /* -V/--version */
    char **argv; /* the program and its arguments (borrowed from the caller) */
    int argc;
} mpirun_options_t;

/**
 * Parse mpirun's argv.
 * @param err_out  on failure, a one-line message for the user ("-np: '0' is not a positive
 *                 number of ranks"); size err_len
 * @return CRMPI_OK (opts_out filled; free it with mpirun_options_free) or
 *         CRMPI_ERR_BAD_PARAM (nothing to free).
 */
int mpirun_options_parse(int argc, char **argv, mpirun_options_t *opts_out, char *err_out,
                         size_t err_len);

/**
 * Append the entries of a hostfile ("name [slots=N]" per line, '#' comments) to opts.
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (cannot read), CRMPI_ERR_BAD_PARAM (bad line);
 *         err_out says which line and why.
 */
int mpirun_hostfile_read(mpirun_options_t *opts, const char *path, char *err_out, size_t err_len);

void mpirun_options_free(mpirun_options_t *opts);

/** Format a one-line user error into err_out; @return CRMPI_ERR_BAD_PARAM, for `return`. */
int mpirun_options_fail(char *err_out, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** --map-by's text ("slot", "ppr:2:node"), for the snapshot's manifest; static or in
 *  `buf`. */
const char *mpirun_options_map_by_text(const mpirun_options_t *opts, char *buf, size_t len);
/** --bind-to's text ("none", "core", ...). */
const char *mpirun_options_bind_to_text(mpirun_bind_to_t bind_to);

/** The --help text. */
extern const char mpirun_options_usage[];

#endif /* MPIRUN_OPTIONS_H */
