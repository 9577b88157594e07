/*
 * agent_crs.c: the agent's checkpointer through the crs framework (agent_crs.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_crs.h"
#include "crmpi_status.h"
#include "crs.h"
#include "session.h"

static const crs_ops_t *agent_crs_ops;

static int agent_crs_dump_locked(pid_t init_pid, const char *dir,
                                 crmpi_snapc_dump_result_t *result);

/*
 * One dump at a time on a node: CRIU's parasite, finding the rank's /proc to be of another
 * pid namespace, mounts a proc of its own on a fixed directory name in the task's working
 * directory, and two ranks dumped at once in one directory collide there ("Can't create a
 * directory (-17)"). A lock file in this user's session parent serialises the dumps.
 */
static int agent_crs_lock(void)
{
    char path[4200], parent[4096];
    int fd;

    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK)
        return -1;
    snprintf(path, sizeof(path), "%s/crs.lock", parent);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && flock(fd, LOCK_EX) < 0) {
        close(fd);
        fd = -1;
    }
    return fd; /* -1: no lock, the dump runs anyway */
}

static int agent_crs_dump(pid_t init_pid, const char *dir, crmpi_snapc_dump_result_t *result)
{
    int lock_fd = agent_crs_lock();
    int rc = agent_crs_dump_locked(init_pid, dir, result);

    if (lock_fd >= 0)
        close(lock_fd); /* releases the lock */
    return rc;
}

static int agent_crs_dump_locked(pid_t init_pid, const char *dir, crmpi_snapc_dump_result_t *result)
{
    crs_ckpt_result_t ckpt = {0};
    crs_ckpt_opts_t opts = {
        .init_pid = init_pid,
        .images_dir = dir,
        .terminate = 0, /* --term ends the job after the commit, not here */
        .errbuf = result->error,
        .errbuf_len = sizeof(result->error),
    };
    int rc = agent_crs_ops->checkpoint(&opts, &ckpt);

    if (rc == CRMPI_OK) {
        result->image_bytes = ckpt.image_bytes;
        result->dump_seconds = ckpt.dump_seconds;
    }
    return rc;
}

void agent_crs_init(crmpi_snapc_local_t *local)
{
    const crmpi_component_t *component;

    if (crmpi_framework_open(&crmpi_crs_framework) != CRMPI_OK)
        return;
    if (crmpi_framework_select_one(&crmpi_crs_framework, &component) != CRMPI_OK) {
        crmpi_framework_close(&crmpi_crs_framework);
        return; /* the component said why */
    }
    agent_crs_ops = component->ops;
    local->dump = agent_crs_dump;
}

int agent_crs_restore(const char *images_dir, const char *cpuset, agent_ns_child_t *child_out,
                      char *err, size_t err_len)
{
    int in_pipe[2], out_pipe[2], err_pipe[2], ctl[2];
    pid_t init_pid;
    int rc = CRMPI_ERR_IO;

    if (!agent_crs_ops) {
        snprintf(err, err_len, "CRIU cannot run here (crs_base_verbose 10 says why)");
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (pipe2(in_pipe, O_CLOEXEC) < 0)
        goto err_none;
    if (pipe2(out_pipe, O_CLOEXEC) < 0)
        goto err_close_in;
    if (pipe2(err_pipe, O_CLOEXEC) < 0)
        goto err_close_out;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0)
        goto err_close_err;
    crs_inherit_t inherit[CRS_NUM_FDS] = {
        {.rank_fd = 0, .fd = in_pipe[0]},
        {.rank_fd = 1, .fd = out_pipe[1]},
        {.rank_fd = 2, .fd = err_pipe[1]},
        {.rank_fd = 3, .fd = ctl[1]},
    };
    crs_restart_opts_t opts = {
        .images_dir = images_dir,
        .inherit = inherit,
        .num_inherit = CRS_NUM_FDS,
        .cpuset = cpuset,
        .errbuf = err,
        .errbuf_len = err_len,
    };
    rc = agent_crs_ops->restart(&opts, &init_pid);
    /* The rank's ends are the restored tree's now (crs passed copies); stdin reads EOF. */
    close(in_pipe[0]);
    close(in_pipe[1]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    close(ctl[1]);
    if (rc != CRMPI_OK) {
        close(ctl[0]);
        close(err_pipe[0]);
        close(out_pipe[0]);
        return rc;
    }
    *child_out = (agent_ns_child_t){
        .init_pid = init_pid,
        .ctl_fd = ctl[0],
        .out_fd = out_pipe[0],
        .err_fd = err_pipe[0],
    };
    return CRMPI_OK;

err_close_err:
    close(err_pipe[0]);
    close(err_pipe[1]);
err_close_out:
    close(out_pipe[0]);
    close(out_pipe[1]);
err_close_in:
    close(in_pipe[0]);
    close(in_pipe[1]);
err_none:
    snprintf(err, err_len, "cannot create the rank's pipes and socket: %s", strerror(errno));
    return rc;
}

void agent_crs_finalize(void)
{
    if (agent_crs_ops)
        crmpi_framework_close(&crmpi_crs_framework);
    agent_crs_ops = NULL;
}
