/*
 * mpirun_session.c: mpirun's session directory on this node, "<runtime_session_dir_base
 * parent>/<jobid>" (mpirun.h): the control socket the agents connect to, the PMIx
 * rendezvous, the agents' node-local images; removed on every exit path, with the job's
 * leftover shared-memory segments. What killed mpiruns left is removed at the next start.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "filem_fs.h"
#include "log.h"
#include "mpirun.h"
#include "session.h"

static void mpirun_tree_remove(const char *path)
{
    if (crmpi_filem_tree_remove(path) != CRMPI_OK)
        crmpi_log_warn("cannot remove the session directory %s: %s", path, strerror(errno));
}

/*
 * Session directories of mpiruns that were killed before they could remove them (SIGKILL,
 * a crash): a directory is named after its mpirun's pid, so one whose pid no process has
 * any more, or that has this mpirun's pid, is left over.
 */
static void mpirun_session_sweep(const char *parent, uint64_t own_jobid)
{
    struct dirent *entry;
    DIR *dir = opendir(parent);

    while (dir && (entry = readdir(dir)) != NULL) {
        char *end, path[PATH_MAX];
        unsigned long long jobid = strtoull(entry->d_name, &end, 10);

        if (*end || jobid == 0 || jobid > INT_MAX ||
            (jobid != own_jobid && (kill((pid_t)jobid, 0) == 0 || errno != ESRCH)))
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent, entry->d_name) < sizeof(path))
            mpirun_tree_remove(path);
    }
    if (dir)
        closedir(dir);
}

/* How old a dead job's segment must be before a later mpirun removes it: the sm BTL names
 * segments after the jobid, which is the pid of an mpirun that may run on another node, so
 * a segment of a live job of another node can exist here for the moment its peers take to
 * map it (then it is unlinked). */
#define MPIRUN_SHM_STALE_S 60

/*
 * Shared-memory segments of the job's ranks live in /dev/shm as "crmpi-<jobid>-*" (the sm
 * BTL's naming); ranks unlink theirs once every peer has mapped it, or at MPI_Finalize. A
 * rank that crashed or was killed before cannot, and its mpirun removes them at its end
 * (`jobid`: this job's). An mpirun that was killed cannot either: each mpirun removes, at
 * its start (`jobid` 0), this user's segments of jobs whose mpirun is no process here any
 * more and that nobody touched for MPIRUN_SHM_STALE_S.
 */
static void mpirun_shm_remove(uint64_t jobid)
{
    char prefix[64];
    size_t prefix_len;
    struct dirent *entry;
    DIR *dir = opendir("/dev/shm");
    time_t now = time(NULL);

    if (!dir)
        return;
    prefix_len = (size_t)snprintf(prefix, sizeof(prefix), "crmpi-%llu-", (unsigned long long)jobid);
    if (jobid == 0)
        prefix_len = strlen("crmpi-");
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, prefix, prefix_len) != 0)
            continue;
        if (jobid == 0) {
            char *end;
            unsigned long long owner = strtoull(entry->d_name + prefix_len, &end, 10);
            struct stat st;

            if (*end != '-' || owner == 0 || owner > INT_MAX || kill((pid_t)owner, 0) == 0 ||
                errno != ESRCH ||
                fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                st.st_uid != getuid() || now - st.st_mtime < MPIRUN_SHM_STALE_S)
                continue;
        }
        if (unlinkat(dirfd(dir), entry->d_name, 0) < 0 && errno != ENOENT)
            crmpi_log_warn("cannot remove the shared-memory segment /dev/shm/%s: %s", entry->d_name,
                           strerror(errno));
    }
    closedir(dir);
}

int mpirun_session_create(mpirun_state_t *st)
{
    char parent[PATH_MAX];

    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK) {
        crmpi_log_error("runtime_session_dir_base is too long");
        return CRMPI_ERR_BAD_PARAM;
    }
    if (mkdir(parent, 0700) < 0 && errno != EEXIST) {
        crmpi_log_error("cannot create %s: %s", parent, strerror(errno));
        return CRMPI_ERR_IO;
    }
    if (crmpi_session_parent_check(parent) != CRMPI_OK)
        return CRMPI_ERR_ACCESS;
    mpirun_session_sweep(parent, st->job.jobid);
    mpirun_shm_remove(0);
    if ((size_t)snprintf(st->session_dir, sizeof(st->session_dir), "%s/%llu", parent,
                         (unsigned long long)st->job.jobid) >= sizeof(st->session_dir)) {
        crmpi_log_error("session directory path under %s is too long", parent);
        st->session_dir[0] = '\0';
        return CRMPI_ERR_BAD_PARAM;
    }
    if (mkdir(st->session_dir, 0700) < 0) {
        crmpi_log_error("cannot create the session directory %s: %s", st->session_dir,
                        strerror(errno));
        st->session_dir[0] = '\0';
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

int mpirun_listen(mpirun_state_t *st)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd;

    if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/hnp.sock", st->session_dir) >=
        sizeof(addr.sun_path)) {
        crmpi_log_error("session directory %s is too long for a socket path", st->session_dir);
        return CRMPI_ERR_BAD_PARAM;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 128) < 0) {
        crmpi_log_error("cannot listen on %s: %s", addr.sun_path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return CRMPI_ERR_IO;
    }
    st->listen_fd = fd;
    snprintf(st->hnp_uri, sizeof(st->hnp_uri), "unix:%s", addr.sun_path);
    return CRMPI_OK;
}

void mpirun_session_remove(mpirun_state_t *st)
{
    if (st->session_dir[0])
        mpirun_tree_remove(st->session_dir);
    /* The per-user parent stays: other jobs of the same user may be using it. */
    mpirun_shm_remove(st->job.jobid);
}
