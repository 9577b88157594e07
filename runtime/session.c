/*
 * session.c: session directory and control socket paths (session.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "param.h"
#include "session.h"

int crmpi_session_parent(char *buf, size_t len)
{
    const char *base = NULL;

    if (crmpi_param_get_string("runtime_session_dir_base", &base) != CRMPI_OK || !base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    if ((size_t)snprintf(buf, len, "%s/crmpi-%u", base, (unsigned)getuid()) >= len)
        return CRMPI_ERR_BAD_PARAM;
    return CRMPI_OK;
}

int crmpi_session_parent_check(const char *dir)
{
    struct stat st;

    if (lstat(dir, &st) < 0) {
        if (errno == ENOENT)
            return CRMPI_ERR_NOT_FOUND;
        crmpi_log_error("cannot check %s: %s", dir, strerror(errno));
        return CRMPI_ERR_IO;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        crmpi_log_error("%s is %s: another user could put their own control socket there; "
                        "remove it, or choose another place with runtime_session_dir_base",
                        dir,
                        !S_ISDIR(st.st_mode)    ? "not a directory"
                        : st.st_uid != getuid() ? "another user's"
                                                : "open to other users (mode not 0700)");
        return CRMPI_ERR_ACCESS;
    }
    return CRMPI_OK;
}

int crmpi_session_job_connect(uint64_t jobid, int *fd_out)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char parent[PATH_MAX];
    int fd, rc;

    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK ||
        crmpi_session_job_socket(jobid, addr.sun_path, sizeof(addr.sun_path)) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    rc = crmpi_session_parent_check(parent);
    if (rc == CRMPI_ERR_NOT_FOUND) /* no session of this user: as no such process */
        return kill((pid_t)jobid, 0) < 0 && errno == ESRCH ? CRMPI_ERR_NOT_FOUND
                                                           : CRMPI_ERR_PEER_GONE;
    if (rc != CRMPI_OK)
        return CRMPI_ERR_ACCESS;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return CRMPI_ERR_IO;
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
        struct ucred peer;
        socklen_t peer_len = sizeof(peer);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) < 0 || peer.uid != getuid()) {
            crmpi_log_error("the control socket of job %llu is served by uid %d, not by this "
                            "user: refusing to talk to it",
                            (unsigned long long)jobid, peer_len ? (int)peer.uid : -1);
            close(fd);
            return CRMPI_ERR_ACCESS;
        }
        *fd_out = fd;
        return CRMPI_OK;
    }
    close(fd);
    return kill((pid_t)jobid, 0) < 0 && errno == ESRCH ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_PEER_GONE;
}

int crmpi_session_job_status(uint64_t jobid, crmpi_job_status_t *status_out)
{
    crmpi_job_status_t status = {0};
    const char *jobdir = NULL, *program = NULL, *hosts = NULL;
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    int fd, rc;

    rc = crmpi_session_job_connect(jobid, &fd);
    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_ctl_send(fd, CRMPI_CTL_TOOL_STATUS, 0, CRMPI_OK, NULL, 0);
    if (rc == CRMPI_OK)
        rc = crmpi_ctl_recv(fd, &msg);
    close(fd);
    if (rc != CRMPI_OK)
        return rc;
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    crmpi_buf_get_u64(&buf, &status.jobid);
    crmpi_buf_get_u32(&buf, &status.np);
    crmpi_buf_get_u32(&buf, &status.cr);
    crmpi_buf_get_u32(&buf, &status.state);
    crmpi_buf_get_u32(&buf, &status.last_seq);
    crmpi_buf_get_str(&buf, &jobdir);
    crmpi_buf_get_str(&buf, &program);
    crmpi_buf_get_u64(&buf, &status.ckpt_interval_ms);
    crmpi_buf_get_u32(&buf, &status.ckpt_auto);
    crmpi_buf_get_u64(&buf, &status.mtbf_s);
    crmpi_buf_get_u32(&buf, &status.running);
    crmpi_buf_get_str(&buf, &hosts);
    rc = msg.hdr.type == CRMPI_CTL_REPLY && msg.hdr.status == CRMPI_OK ? crmpi_buf_get_done(&buf)
                                                                       : CRMPI_ERR_PROTO;
    if (rc == CRMPI_OK) {
        snprintf(status.jobdir, sizeof(status.jobdir), "%s", jobdir);
        snprintf(status.program, sizeof(status.program), "%s", program);
        snprintf(status.hosts, sizeof(status.hosts), "%s", hosts);
        *status_out = status;
    }
    crmpi_ctl_msg_free(&msg);
    return rc;
}

int crmpi_session_job_socket(uint64_t jobid, char *buf, size_t len)
{
    char parent[4096];

    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK ||
        (size_t)snprintf(buf, len, "%s/%llu/hnp.sock", parent, (unsigned long long)jobid) >= len)
        return CRMPI_ERR_BAD_PARAM;
    return CRMPI_OK;
}
