/*
 * plm_ompi.h: the ompi component's files (plm_ompi.c: Open MPI's mpirun started, watched and
 * ended; plm_ompi_io.c: what it writes itself) and what they share, inside plm/ only.
 *
 * The agents run as the processes of one Open MPI job: Open MPI 4.1's mpirun (orterun)
 * starts its daemons (orted) on the job's hosts through its own launcher (rsh/ssh, or a
 * batch system's), and each daemon starts its node's agents and is their PMIx server. Rank
 * r of the crmpi job is app context r of that job (`-np 1 --host NODE AGENT ... : ...`), so
 * Open MPI's rank r is crmpi's rank r on the node crmpi's mpirun mapped it to.
 */
#ifndef PLM_OMPI_H
#define PLM_OMPI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "plm.h"

/* The component, for plm_base.c's table. */
extern const crmpi_component_t plm_ompi_component;

/* Text the launcher wrote that is not an agent's line, as much as is kept. */
#define PLM_OMPI_WORDS_MAX 8192

/* One of the launcher's output streams, read a line at a time. */
typedef struct plm_ompi_stream {
    int fd;          /* read end of its pipe (non-blocking); -1 at end of file */
    char line[4096]; /* the line being read, until its newline */
    size_t len;      /* bytes in line */
} plm_ompi_stream_t;

/* The component's state, from init to finalize (job->state). */
typedef struct plm_ompi_state {
    char *agent_path;               /* crmpi-agent to start on every node (plm_ompi_agent) */
    char *mpirun_path;              /* Open MPI's mpirun (plm_ompi_mpirun) */
    char *launch_agent;             /* "CRMPI-ORTED orted": how its daemons are started */
    pid_t pid;                      /* that mpirun; 0 before the launch and once reaped */
    bool reaped;                    /* it ended; status is its wait status */
    int status;                     /* its wait status, once reaped */
    bool terminating;               /* SIGTERM sent to it: its job is being ended */
    bool job_ending;                /* mpirun signals the agents: the job is being ended, and
                                     * Open MPI's mpirun may end with it, as it will */
    double terminate_at;            /* when (crmpi_clock_s), to escalate to SIGKILL */
    plm_ompi_stream_t out;          /* its stdout */
    plm_ompi_stream_t err;          /* its stderr */
    char words[PLM_OMPI_WORDS_MAX]; /* its own text (not the agents'), the first that came */
    size_t words_len;               /* bytes in words */
    unsigned agent_lines;           /* lines of the agents forwarded (their errors, mostly) */
} plm_ompi_state_t;

/** Read what the launcher wrote on `stream`, at most what is there now: the agents' lines
 *  to mpirun's stderr or stdout, its own words into state->words. At end of file, closes
 *  the stream's descriptor. */
void plm_ompi_io_read(plm_ompi_state_t *state, plm_ompi_stream_t *stream);

/** The first line of the launcher's own words that says something (not a rule of dashes),
 *  into `buf`; "" when it said nothing. */
void plm_ompi_io_first_words(const plm_ompi_state_t *state, char *buf, size_t len);

#endif /* PLM_OMPI_H */
