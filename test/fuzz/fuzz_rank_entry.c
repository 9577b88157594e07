/*
 * fuzz_rank_entry.c: one rank's entry as the agent reports it to mpirun, a line of JSON
 * (filem/snapshot_entry.h: crmpi_filem_rank_entry_decode); in a job across nodes it comes
 * over the network.
 *
 * Properties: a decoded entry has safe paths and valid checksums (a compressed file's of
 * what it decompresses to too), and its sizes add up to its bytes; encoded again, it
 * decodes to the same entry.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "fuzz_common.h"
#include "snapshot_entry.h"
#include "snapshot_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    crmpi_filem_rank_entry_t entry, again;
    char *text = malloc(size + 1), *json;
    uint64_t total = 0;

    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    if (crmpi_filem_rank_entry_decode(text, &entry) != CRMPI_OK) {
        free(text);
        return 0;
    }
    fuzz_check(entry.rank >= 0);
    for (size_t i = 0; i < entry.num_files; i++) {
        const crmpi_filem_file_t *file = &entry.files[i];
        size_t len = strlen(file->path);

        fuzz_check(filem_path_is_safe(file->path));
        fuzz_check(filem_sha256_is_valid(file->sha256));
        /* Compressed: the checksum of what it decompresses to, and a name that says so. */
        fuzz_check(!file->raw_sha256[0] || (filem_sha256_is_valid(file->raw_sha256) && len > 4 &&
                                            strcmp(file->path + len - 4, ".zst") == 0));
        total += file->size;
    }
    fuzz_check(total == entry.bytes);
    fuzz_check(crmpi_filem_rank_entry_encode(&entry, &json) == CRMPI_OK);
    fuzz_check(crmpi_filem_rank_entry_decode(json, &again) == CRMPI_OK);
    fuzz_check(again.rank == entry.rank && again.num_files == entry.num_files &&
               again.bytes == entry.bytes && again.parent == entry.parent);
    fuzz_check((!again.host && !entry.host) ||
               (again.host && entry.host && strcmp(again.host, entry.host) == 0));
    for (size_t i = 0; i < entry.num_files; i++) {
        fuzz_check(strcmp(again.files[i].path, entry.files[i].path) == 0);
        fuzz_check(again.files[i].size == entry.files[i].size);
        fuzz_check(strcmp(again.files[i].sha256, entry.files[i].sha256) == 0);
        fuzz_check(again.files[i].raw_size == entry.files[i].raw_size);
        fuzz_check(strcmp(again.files[i].raw_sha256, entry.files[i].raw_sha256) == 0);
    }
    crmpi_filem_rank_entry_clear(&again);
    crmpi_filem_rank_entry_clear(&entry);
    free(json);
    free(text);
    return 0;
}
