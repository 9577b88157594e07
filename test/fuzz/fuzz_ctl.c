/*
 * fuzz_ctl.c: the control protocol's decoding (runtime/ctl.h): a byte stream as a peer
 * would send it, read message by message with crmpi_ctl_recv, each payload decoded with
 * the crmpi_buf_get_* readers the way its type says (ctl.h's list of messages), the job
 * facts by crmpi_rte_job_info_unpack and the bookmarks by crmpi_snapc_marks_get.
 *
 * Properties: a payload that decodes whole encodes back to the same bytes (every field has
 * one encoding: strings carry exactly one NUL, byte runs their length).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "fuzz_common.h"
#include "rte.h"
#include "snapc.h"

/* Field kinds of a message's payload, one letter each: u32, i32, u64, string, bytes. */
static const struct {
    uint16_t type;      /* crmpi_ctl_type_t */
    const char *fields; /* its payload, in order */
} fuzz_ctl_layouts[] = {
    {CRMPI_CTL_HELLO, "u"},
    {CRMPI_CTL_MODEX_PUT, "sb"},
    {CRMPI_CTL_FENCE, "u"},
    {CRMPI_CTL_MODEX_GET, "us"},
    {CRMPI_CTL_ABORT, "is"},
    {CRMPI_CTL_INIT_EXIT, "i"},
    {CRMPI_CTL_CR_APP_CKPT, "s"},
    {CRMPI_CTL_AGENT_HELLO, "uuuss"},
    {CRMPI_CTL_AGENT_EXIT, "ui"},
    {CRMPI_CTL_AGENT_ABORT, "uis"},
    {CRMPI_CTL_AGENT_OUTPUT, "ub"},
    {CRMPI_CTL_AGENT_SIGNAL, "i"},
    {CRMPI_CTL_AGENT_APP_CKPT, "u"},
    {CRMPI_CTL_CKPT_BEGIN, "u"},
    {CRMPI_CTL_CKPT_DRAINED, "UUUU"},
    {CRMPI_CTL_CKPT_READY, "U"},
    {CRMPI_CTL_CKPT_DUMP, "uus"},
    {CRMPI_CTL_CKPT_DUMPED, "UU"},
    {CRMPI_CTL_CKPT_CONTINUED, "U"},
    {CRMPI_CTL_CKPT_STORE, "s"},
    {CRMPI_CTL_CKPT_STORED, "s"},
    {CRMPI_CTL_CKPT_APP_WANTED, ""},
    {CRMPI_CTL_CKPT_APP_DONE, "is"},
    {CRMPI_CTL_CKPT_PRUNE, "u"},
    {CRMPI_CTL_TOOL_CKPT, "u"},
    {CRMPI_CTL_TOOL_PROGRESS, "s"},
    {CRMPI_CTL_REPLY, "uuuuussUuUuSu"}, /* TOOL_STATUS's reply, the longest */
};

/* Decode `fields` from `in` and encode what was read into `out`; CRMPI_OK when whole. */
static int fuzz_ctl_fields(crmpi_buf_t *in, const char *fields, crmpi_buf_t *out)
{
    for (const char *kind = fields; *kind; kind++) {
        uint32_t u32;
        int32_t i32;
        uint64_t u64;
        const char *text;
        const void *bytes;
        size_t len;

        switch (*kind) {
        case 'u':
            if (crmpi_buf_get_u32(in, &u32) == CRMPI_OK)
                crmpi_buf_put_u32(out, u32);
            break;
        case 'i':
            if (crmpi_buf_get_i32(in, &i32) == CRMPI_OK)
                crmpi_buf_put_i32(out, i32);
            break;
        case 'U':
            if (crmpi_buf_get_u64(in, &u64) == CRMPI_OK)
                crmpi_buf_put_u64(out, u64);
            break;
        case 's':
        case 'S':
            if (crmpi_buf_get_str(in, &text) == CRMPI_OK) {
                fuzz_check((const uint8_t *)text >= in->data &&
                           (const uint8_t *)text + strlen(text) < in->data + in->len);
                crmpi_buf_put_str(out, text);
            }
            break;
        case 'b':
            if (crmpi_buf_get_bytes(in, &bytes, &len) == CRMPI_OK) {
                fuzz_check((const uint8_t *)bytes + len <= in->data + in->len);
                crmpi_buf_put_bytes(out, bytes, len);
            }
            break;
        }
    }
    return crmpi_buf_get_done(in);
}

/* A payload read whole encodes back to itself. */
static void fuzz_ctl_same(const crmpi_buf_t *out, const crmpi_ctl_msg_t *msg)
{
    fuzz_check(!out->failed);
    fuzz_check(out->len == msg->hdr.len);
    fuzz_check(out->len == 0 || memcmp(out->data, msg->payload, out->len) == 0);
}

/* JOB_INFO, and the job facts at the end of CKPT_RESTART (after u32 n, n strings). */
static void fuzz_ctl_job_info(const crmpi_ctl_msg_t *msg, bool restart)
{
    crmpi_buf_t in, out;
    crmpi_rte_job_info_t info;
    uint32_t count = 0;
    const char *entry;

    crmpi_buf_init_read(&in, msg->payload, msg->hdr.len);
    crmpi_buf_init(&out);
    if (restart) {
        if (crmpi_buf_get_u32(&in, &count) != CRMPI_OK || count > 65536)
            return;
        crmpi_buf_put_u32(&out, count);
        for (uint32_t i = 0; i < count; i++) {
            if (crmpi_buf_get_str(&in, &entry) != CRMPI_OK) {
                crmpi_buf_free(&out);
                return;
            }
            crmpi_buf_put_str(&out, entry);
        }
    }
    if (crmpi_rte_job_info_unpack(&in, &info) == CRMPI_OK) {
        fuzz_check(info.rank < info.size && info.local_rank < info.local_size &&
                   info.node_id < info.num_nodes);
        fuzz_check(info.job_key_len == 0 || info.job_key_len == CRMPI_RTE_KEY_LEN);
        fuzz_check(memchr(info.nodename, '\0', sizeof(info.nodename)) != NULL);
        fuzz_check(memchr(info.session_dir, '\0', sizeof(info.session_dir)) != NULL);
        /* Every rank's node is read: the array has `size` entries. */
        uint64_t nodes = 0;
        for (uint32_t r = 0; r < info.size; r++)
            nodes += info.node_of_rank[r];
        (void)nodes;
        crmpi_rte_job_info_pack(&info, &out);
        fuzz_ctl_same(&out, msg);
        crmpi_rte_job_info_free(&info);
    }
    crmpi_buf_free(&out);
}

/* CKPT_BOOKMARKS and CKPT_EXPECT, for a job of `np` ranks. */
static void fuzz_ctl_marks(const crmpi_ctl_msg_t *msg, uint32_t np)
{
    crmpi_snapc_bookmark_t *marks;
    crmpi_buf_t in, out;
    size_t count;

    crmpi_buf_init_read(&in, msg->payload, msg->hdr.len);
    if (crmpi_snapc_marks_get(&in, np, &marks, &count) != CRMPI_OK)
        return;
    fuzz_check(count <= np);
    for (size_t i = 0; i < count; i++)
        fuzz_check(marks[i].peer < np);
    crmpi_buf_init(&out);
    crmpi_snapc_marks_put(&out, marks, count);
    fuzz_ctl_same(&out, msg);
    crmpi_buf_free(&out);
    free(marks);
}

static void fuzz_ctl_decode(const crmpi_ctl_msg_t *msg)
{
    fuzz_check(msg->hdr.magic == CRMPI_CTL_MAGIC && msg->hdr.version == CRMPI_CTL_VERSION);
    fuzz_check(msg->hdr.len <= CRMPI_CTL_MAX_PAYLOAD && (msg->hdr.len == 0) == !msg->payload);
    (void)crmpi_ctl_type_name(msg->hdr.type);
    switch (msg->hdr.type) {
    case CRMPI_CTL_JOB_INFO: fuzz_ctl_job_info(msg, false); return;
    case CRMPI_CTL_CKPT_RESTART: fuzz_ctl_job_info(msg, true); return;
    case CRMPI_CTL_CKPT_BOOKMARKS:
    case CRMPI_CTL_CKPT_EXPECT:
        /* The job's size comes from mpirun, not the peer: the sequence number stands in. */
        fuzz_ctl_marks(msg, msg->hdr.seq % 4097);
        return;
    }
    for (size_t i = 0; i < sizeof(fuzz_ctl_layouts) / sizeof(fuzz_ctl_layouts[0]); i++) {
        crmpi_buf_t in, out;

        if (fuzz_ctl_layouts[i].type != msg->hdr.type)
            continue;
        crmpi_buf_init_read(&in, msg->payload, msg->hdr.len);
        crmpi_buf_init(&out);
        if (fuzz_ctl_fields(&in, fuzz_ctl_layouts[i].fields, &out) == CRMPI_OK)
            fuzz_ctl_same(&out, msg);
        crmpi_buf_free(&out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    crmpi_ctl_msg_t msg;
    /* A descriptor with the stream behind it, as a socket would deliver it. */
    int fd = memfd_create("crmpi-fuzz-ctl", MFD_CLOEXEC);

    if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size) ||
        lseek(fd, 0, SEEK_SET) != 0)
        abort();
    while (crmpi_ctl_recv(fd, &msg) == CRMPI_OK) {
        fuzz_ctl_decode(&msg);
        crmpi_ctl_msg_free(&msg);
    }
    close(fd);
    return 0;
}
