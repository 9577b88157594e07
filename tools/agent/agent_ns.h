/*
 * agent_ns.h: start the rank in its own pid namespace.
 *
 *   agent --clone(CLONE_NEWPID)--> init (pid 1: setsid, reap, forward signals)
 *                                    --clone3(set_tid = node-unique pid)--> rank (exec)
 *
 * The rank holds nothing external but what the agent gives it: stdin, stdout and stderr
 * pipes and one control socket (fd 3, named by CRMPI_CTL_FD). Every other descriptor is
 * closed in the init. The init shares the control socket and, once the rank has exited,
 * reports its raw wait status there (CRMPI_CTL_INIT_EXIT), then exits; the kernel then
 * kills whatever else is left in the namespace.
 *
 * The init dies with the agent (PR_SET_PDEATHSIG), and the namespace with the init.
 *
 * An ordinary user may not create a pid namespace: then the init and the rank live in the
 * node's, the rank has whatever pid the kernel gives, the init reaps the rank's orphans as
 * a subreaper, the rank dies with the init (PR_SET_PDEATHSIG), and the tree runs with
 * PR_SET_NO_NEW_PRIVS (CRIU without privilege can restore it only so). A restart then
 * needs the rank's old pids free on its node.
 */
#ifndef CRMPI_AGENT_NS_H
#define CRMPI_AGENT_NS_H

#include <sys/types.h>

/* Descriptor the rank finds its control socket on. */
#define CRMPI_AGENT_NS_CTL_FD 3

typedef struct crmpi_agent_ns_child {
    pid_t init_pid; /* the namespace's init, as the agent sees it */
    pid_t rank_pid; /* the rank's pid inside its namespace (what getpid() returns there), or 0
                     * when it shares the node's (unknown to the agent) */
    int ctl_fd;     /* agent's end of the control socket */
    int out_fd;     /* read end of the rank's stdout */
    int err_fd;     /* read end of the rank's stderr */
} crmpi_agent_ns_child_t;

/*
 * The rank's descriptors: pipes for its stdin, stdout and stderr and the control
 * socketpair, every one close-on-exec. The rank's ends become its 0, 1, 2 and 3 (at start,
 * or through CRIU's inherit-fd at a restore); the agent keeps the other ends.
 */
typedef struct crmpi_agent_ns_fds {
    int rank_end[4]; /* stdin read end, stdout and stderr write ends, control socket end */
    int stdin_write; /* closed once the rank has its copy: the rank reads end-of-file */
    int out_fd;      /* agent's read end of stdout */
    int err_fd;      /* agent's read end of stderr */
    int ctl_fd;      /* agent's end of the control socket */
} crmpi_agent_ns_fds_t;

/** Make them. @return CRMPI_OK, or CRMPI_ERR_IO / CRMPI_ERR_OUT_OF_RESOURCE (logged;
 *  nothing left open). */
int crmpi_agent_ns_fds_open(crmpi_agent_ns_fds_t *fds);
/** The rank has its copies: close the rank's ends and stdin's write end, and give the
 *  agent's ends to `child`. */
void crmpi_agent_ns_fds_handover(crmpi_agent_ns_fds_t *fds, crmpi_agent_ns_child_t *child);
/** Nothing came of it: close every descriptor. */
void crmpi_agent_ns_fds_close(crmpi_agent_ns_fds_t *fds);

/**
 * Start `program` (argv, envp prepared by the caller) as the rank.
 * @param wanted_pid  pid to give the rank inside its namespace (unique on this node); if
 *                    the kernel refuses it, the rank gets the next free pid and a warning
 *                    says so
 * @return CRMPI_OK (child_out filled) or CRMPI_ERR_IO / CRMPI_ERR_OUT_OF_RESOURCE (logged).
 */
int crmpi_agent_ns_start(const char *program, char *const argv[], char *const envp[],
                         pid_t wanted_pid, crmpi_agent_ns_child_t *child_out);

/**
 * The init's own life, after crmpi_agent_ns_start's init has executed the agent's program again
 * as "crmpi-agent --ns-init PID -- PROGRAM [ARG]...": create the rank with pid PID, forward
 * signals to it, reap, and report its wait status on the control socket. Never returns.
 * Called by main() before anything else when argv[1] is "--ns-init".
 */
__attribute__((noreturn)) void crmpi_agent_ns_init_run(int argc, char **argv);

#endif /* CRMPI_AGENT_NS_H */
