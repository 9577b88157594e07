/*
 * mpiio: the ranks write one shared file through MPI-IO (ROMIO) before a checkpoint and
 * after it, with the file open across it: a collective write at explicit offsets, a file
 * view interleaving the ranks' records (a vector type) written collectively and
 * independently through the individual file pointers, then more of each after the go.
 * CRIU restores the open file by path and offset; ROMIO's state (the view, the file
 * pointers, its cached info) is memory of the rank and comes back with it. The file must
 * end up as an uninterrupted run writes it: every rank reads all of it back and sums it.
 *
 * The file is $CR_READY_DIR/../mpiio.dat (beside the test's other files), ./mpiio.dat
 * without CR_READY_DIR.
 */
#include <libgen.h>

#include "cr_common.h"

#define HEADER_INTS 64 /* each rank's block of the header, written with write_at_all */
#define RECORD_INTS 16 /* one record of the interleaved part */
#define RECORDS     8  /* records per rank: half before the checkpoint, half after */

static MPI_File mpiio_file;

/* The value rank `rank` writes at position `i` of its record `record` (or header: -1). */
static int mpiio_value(int rank, int record, int i)
{
    return rank * 1000003 + (record + 1) * 1009 + i;
}

/* Records [first, first + count) of this rank through the view: the even ones
 * collectively, the odd ones independently, all through the individual file pointer. */
static void mpiio_write_records(int first, int count)
{
    int buf[RECORD_INTS];

    for (int record = first; record < first + count; record++) {
        for (int i = 0; i < RECORD_INTS; i++)
            buf[i] = mpiio_value(cr_rank, record, i);
        if (record % 2 == 0)
            MPI_File_write_all(mpiio_file, buf, RECORD_INTS, MPI_INT, MPI_STATUS_IGNORE);
        else
            MPI_File_write(mpiio_file, buf, RECORD_INTS, MPI_INT, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    char path[4096], dir[4096];
    const char *ready = getenv("CR_READY_DIR");
    int header[HEADER_INTS];
    MPI_Datatype record_type, view_type;
    MPI_Offset view_disp = (MPI_Offset)HEADER_INTS * sizeof(int);

    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    snprintf(dir, sizeof(dir), "%s", ready ? ready : "./.");
    snprintf(path, sizeof(path), "%s/mpiio.dat", dirname(dir));
    /* A file left by an earlier run goes; none there is no error (MPI_ERRORS_RETURN). */
    if (cr_rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                  &mpiio_file);

    /* The header: each rank's block at its offset, collectively. */
    for (int i = 0; i < HEADER_INTS; i++)
        header[i] = mpiio_value(cr_rank, -1, i);
    MPI_File_write_at_all(mpiio_file, (MPI_Offset)cr_rank * sizeof(header), header, HEADER_INTS,
                          MPI_INT, MPI_STATUS_IGNORE);

    /* The view: after every rank's header, record r of rank k at (r * size + k). */
    view_disp = (MPI_Offset)cr_size * sizeof(header);
    MPI_Type_contiguous(RECORD_INTS, MPI_INT, &record_type);
    MPI_Type_vector(RECORDS, 1, cr_size, record_type, &view_type);
    MPI_Type_commit(&view_type);
    MPI_File_set_view(mpiio_file, view_disp + (MPI_Offset)cr_rank * RECORD_INTS * sizeof(int),
                      record_type, view_type, "native", MPI_INFO_NULL);
    mpiio_write_records(0, RECORDS / 2);

    cr_ready();
    cr_wait_go();

    mpiio_write_records(RECORDS / 2, RECORDS / 2);
    MPI_File_sync(mpiio_file);
    MPI_File_close(&mpiio_file);
    MPI_Type_free(&view_type);
    MPI_Type_free(&record_type);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every rank reads the whole file back, checks each int and sums it. */
    MPI_File in;
    MPI_Offset size, expected_ints = (MPI_Offset)cr_size * (HEADER_INTS + RECORDS * RECORD_INTS);
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &in);
    MPI_File_get_size(in, &size);
    if (size != expected_ints * (MPI_Offset)sizeof(int)) {
        cr_fail("%s has %lld bytes, expected %lld", path, (long long)size,
                (long long)(expected_ints * sizeof(int)));
    } else {
        int *all = malloc(size);
        MPI_Status status;
        int got = 0;

        MPI_File_read_at(in, 0, all, (int)expected_ints, MPI_INT, &status);
        MPI_Get_count(&status, MPI_INT, &got);
        if (got != expected_ints)
            cr_fail("read %d ints of %lld", got, (long long)expected_ints);
        for (int k = 0; k < cr_size; k++)
            for (int i = 0; i < HEADER_INTS; i++)
                if (all[k * HEADER_INTS + i] != mpiio_value(k, -1, i))
                    cr_fail("header of rank %d, int %d: %d", k, i, all[k * HEADER_INTS + i]);
        int *records = all + cr_size * HEADER_INTS;
        for (int r = 0; r < RECORDS; r++)
            for (int k = 0; k < cr_size; k++)
                for (int i = 0; i < RECORD_INTS; i++) {
                    int at = (r * cr_size + k) * RECORD_INTS + i;
                    if (records[at] != mpiio_value(k, r, i)) {
                        cr_fail("record %d of rank %d, int %d: %d", r, k, i, records[at]);
                        r = RECORDS;
                        k = cr_size;
                        break;
                    }
                }
        /* Each rank's sum differs (cr_finish combines them with xor). */
        cr_sum_bytes(&cr_rank, sizeof(cr_rank));
        cr_sum_bytes(all, size);
        free(all);
    }
    MPI_File_close(&in);
    return cr_finish("mpiio");
}
