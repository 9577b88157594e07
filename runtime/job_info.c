/*
 * job_info.c: the job facts an agent gives its rank (CRMPI_CTL_JOB_INFO payload).
 */
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "rte.h"

void crmpi_rte_job_info_pack(const crmpi_rte_job_info_t *info, crmpi_buf_t *buf)
{
    crmpi_buf_put_u64(buf, info->jobid);
    crmpi_buf_put_u32(buf, info->rank);
    crmpi_buf_put_u32(buf, info->size);
    crmpi_buf_put_u32(buf, info->local_rank);
    crmpi_buf_put_u32(buf, info->local_size);
    crmpi_buf_put_u32(buf, info->node_id);
    crmpi_buf_put_u32(buf, info->num_nodes);
    crmpi_buf_put_bytes(buf, info->node_of_rank, sizeof(uint32_t) * info->size);
    crmpi_buf_put_str(buf, info->nodename);
    crmpi_buf_put_str(buf, info->session_dir);
    crmpi_buf_put_bytes(buf, info->job_key, info->job_key_len);
}

static int crmpi_rte_copy_name(char *dst, const char *src)
{
    size_t len = strlen(src);
    if (len >= CRMPI_RTE_NAME_MAX) {
        return CRMPI_ERR_PROTO;
    }
    memcpy(dst, src, len + 1);
    return CRMPI_OK;
}

int crmpi_rte_job_info_unpack(crmpi_buf_t *buf, crmpi_rte_job_info_t *info_out)
{
    crmpi_rte_job_info_t info;
    const void *map, *key;
    size_t map_len, key_len;
    const char *nodename, *session_dir;

    memset(&info, 0, sizeof(info));
    crmpi_buf_get_u64(buf, &info.jobid);
    crmpi_buf_get_u32(buf, &info.rank);
    crmpi_buf_get_u32(buf, &info.size);
    crmpi_buf_get_u32(buf, &info.local_rank);
    crmpi_buf_get_u32(buf, &info.local_size);
    crmpi_buf_get_u32(buf, &info.node_id);
    crmpi_buf_get_u32(buf, &info.num_nodes);
    crmpi_buf_get_bytes(buf, &map, &map_len);
    crmpi_buf_get_str(buf, &nodename);
    crmpi_buf_get_str(buf, &session_dir);
    crmpi_buf_get_bytes(buf, &key, &key_len);
    /* Getters are sticky on failure, so one check covers all of them. */
    if (crmpi_buf_get_done(buf) != CRMPI_OK || info.size == 0 || info.rank >= info.size ||
        map_len != sizeof(uint32_t) * info.size || info.local_rank >= info.local_size ||
        info.node_id >= info.num_nodes || (key_len != 0 && key_len != CRMPI_RTE_KEY_LEN)) {
        return CRMPI_ERR_PROTO;
    }
    if (key_len)
        memcpy(info.job_key, key, key_len);
    info.job_key_len = (uint32_t)key_len;
    if (crmpi_rte_copy_name(info.nodename, nodename) != CRMPI_OK ||
        crmpi_rte_copy_name(info.session_dir, session_dir) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    info.node_of_rank = malloc(map_len);
    if (!info.node_of_rank) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(info.node_of_rank, map, map_len);
    *info_out = info;
    return CRMPI_OK;
}

void crmpi_rte_job_info_free(crmpi_rte_job_info_t *info)
{
    free(info->node_of_rank);
    info->node_of_rank = NULL;
}
