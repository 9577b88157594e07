/*
 * test_p2p_args.c: the point-to-point MPI calls of mpi/p2p/ in a singleton (one rank, so
 * every message goes to itself): the error class of each kind of bad argument, the message
 * a fatal one prints, and self-communication through every call: immediate and blocking
 * sends and receives, truncation, Sendrecv(_replace), MPI_PROC_NULL, persistent requests,
 * probes and matched probes, cancellation, the request-array calls, buffered sends (eager
 * and rendezvous) and the status calls.
 *
 * MPI can be initialised once per process: the group setup does it and sets
 * MPI_ERRORS_RETURN on both predefined communicators, so every error comes back as the
 * call's return value; the test of the fatal message runs in a forked child.
 *
 * Messages are small: a blocking standard send to oneself completes only if it is eager.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpi_internal.h"
#include "test_capture.h"

static int group_setup(void **state)
{
    (void)state;
    /* A singleton, judged only on the parameters a test sets. */
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        return -1;
    }
    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_RETURN;
    crmpi_mpi_comm_self.comm.errhandler = MPI_ERRORS_RETURN;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    capture_abandon();
    return 0;
}

/* MPI_Get_count of a status in ints. */
static int count_ints(const MPI_Status *status)
{
    int count = -1;

    assert_int_equal(MPI_Get_count(status, MPI_INT, &count), MPI_SUCCESS);
    return count;
}

/* The status MPI-3.1 section 3.11 gives a communication with MPI_PROC_NULL. */
static void assert_proc_null_status(const MPI_Status *status)
{
    assert_int_equal(status->MPI_SOURCE, MPI_PROC_NULL);
    assert_int_equal(status->MPI_TAG, MPI_ANY_TAG);
    assert_int_equal(count_ints(status), 0);
}

/* The empty status of MPI-3.1 section 3.7.3. */
static void assert_empty_status(const MPI_Status *status)
{
    int flag = -1;

    assert_int_equal(status->MPI_SOURCE, MPI_ANY_SOURCE);
    assert_int_equal(status->MPI_TAG, MPI_ANY_TAG);
    assert_int_equal(status->MPI_ERROR, MPI_SUCCESS);
    assert_int_equal(count_ints(status), 0);
    assert_int_equal(MPI_Test_cancelled(status, &flag), MPI_SUCCESS);
    assert_int_equal(flag, 0);
}

static void test_send_recv_arg_errors(void **state)
{
    struct crmpi_datatype_s uncommitted = crmpi_mpi_int.dt;
    int buf[4] = {0};
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status status;
    int flag;

    (void)state;
    uncommitted.name[0] = '\0';
    uncommitted.predefined = false;
    uncommitted.committed = false;

    /* Ranks: a singleton has rank 0 only. */
    assert_int_equal(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    assert_int_equal(MPI_Send(buf, 1, MPI_INT, -3, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    assert_int_equal(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    assert_int_equal(MPI_Ssend(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
    assert_int_equal(MPI_Isend(buf, 1, MPI_INT, 7, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    assert_int_equal(MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &status), MPI_ERR_RANK);
    assert_int_equal(MPI_Irecv(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    assert_int_equal(MPI_Probe(1, 0, MPI_COMM_WORLD, &status), MPI_ERR_RANK);
    assert_int_equal(MPI_Iprobe(2, 0, MPI_COMM_WORLD, &flag, &status), MPI_ERR_RANK);
    assert_null(req);

    /* Counts */
    assert_int_equal(MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    assert_int_equal(MPI_Recv(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &status), MPI_ERR_COUNT);
    assert_int_equal(MPI_Irecv(buf, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);

    /* Datatypes: null, and derived but never committed. */
    assert_int_equal(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    assert_int_equal(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &status),
                     MPI_ERR_TYPE);
    assert_int_equal(MPI_Send(buf, 1, &uncommitted, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    assert_int_equal(MPI_Isend(buf, 1, &uncommitted, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    assert_int_equal(MPI_Irecv(buf, 1, &uncommitted, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);

    /* Tags: a send's is in 0..MPI_TAG_UB; a receive's may also be MPI_ANY_TAG. */
    assert_int_equal(MPI_Send(buf, 1, MPI_INT, 0, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    assert_int_equal(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    assert_int_equal(MPI_Isend(buf, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    assert_int_equal(MPI_Recv(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &status), MPI_ERR_TAG);
    assert_int_equal(MPI_Probe(0, -3, MPI_COMM_WORLD, &status), MPI_ERR_TAG);

    /* Communicator */
    assert_int_equal(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    assert_int_equal(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &status), MPI_ERR_COMM);
    assert_int_equal(MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &status), MPI_ERR_COMM);

    /* Buffers: NULL holds nothing, but is fine for no data. */
    assert_int_equal(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Recv(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &status), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Send(NULL, 0, MPI_INT, 0, 90, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(NULL, 0, MPI_INT, 0, 90, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    assert_int_equal(count_ints(&status), 0);

    /* Output pointers */
    assert_int_equal(MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Iprobe(0, 0, MPI_COMM_WORLD, NULL, &status), MPI_ERR_ARG);

    /* MPI_Sendrecv checks both sides. */
    assert_int_equal(
        MPI_Sendrecv(buf, 1, MPI_INT, 0, 0, buf, 1, MPI_INT, 0, -9, MPI_COMM_WORLD, &status),
        MPI_ERR_TAG);
    assert_int_equal(
        MPI_Sendrecv(buf, 1, MPI_INT, 3, 0, buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &status),
        MPI_ERR_RANK);
    assert_null(req);
}

static void test_request_arg_errors(void **state)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request stale;
    MPI_Request reqs[2];
    MPI_Status status;
    int buf = 0;
    int flag, index, outcount, indices[2];

    (void)state;
    /* MPI_REQUEST_NULL cannot be started, freed or cancelled. */
    assert_int_equal(MPI_Start(&req), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Request_free(&req), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Cancel(&req), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Start(NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Request_free(NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Wait(NULL, &status), MPI_ERR_ARG);

    /* A freed request; checked before any new request can reuse its memory. */
    assert_int_equal(MPI_Send_init(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    stale = req;
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
    assert_null(req);
    assert_int_equal(MPI_Start(&stale), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Request_free(&stale), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Wait(&stale, &status), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Test(&stale, &flag, &status), MPI_ERR_REQUEST);
    reqs[0] = MPI_REQUEST_NULL;
    reqs[1] = stale;
    assert_int_equal(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Startall(2, reqs), MPI_ERR_REQUEST);

    /* A non-persistent request cannot be started. */
    assert_int_equal(MPI_Irecv(&buf, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Start(&req), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Cancel(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_null(req);

    /* Nor can an active one be started again. */
    assert_int_equal(MPI_Recv_init(&buf, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Start(&req), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Cancel(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_non_null(req);
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
    assert_null(req);

    /* Negative counts and missing outputs of the array calls. */
    assert_int_equal(MPI_Waitall(-1, reqs, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
    assert_int_equal(MPI_Testall(-1, reqs, &flag, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
    assert_int_equal(MPI_Waitany(-1, reqs, &index, &status), MPI_ERR_ARG);
    assert_int_equal(MPI_Testany(-1, reqs, &index, &flag, &status), MPI_ERR_ARG);
    assert_int_equal(MPI_Waitsome(-1, reqs, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
    assert_int_equal(MPI_Testsome(-1, reqs, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
    assert_int_equal(MPI_Startall(-1, reqs), MPI_ERR_ARG);
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    assert_int_equal(MPI_Waitany(2, reqs, NULL, &status), MPI_ERR_ARG);
    assert_int_equal(MPI_Testall(2, reqs, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
    assert_int_equal(MPI_Waitsome(2, reqs, NULL, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
}

/* Under MPI_ERRORS_ARE_FATAL a bad rank ends the process with a message naming it. */
static void body_fatal_bad_rank(void)
{
    int buf = 0;

    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_ARE_FATAL;
    MPI_Send(&buf, 1, MPI_INT, 7, 0, MPI_COMM_WORLD);
}

static void test_fatal_message(void **state)
{
    int status;
    char *text;

    (void)state;
    /* Buffered output would otherwise be written twice, once by the child's exit path. */
    fflush(NULL);
    capture_begin();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body_fatal_bad_rank();
        _exit(99);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    text = capture_end();
    if (strstr(text, "dest 7 is not a rank of MPI_COMM_WORLD (size 1)") == NULL) {
        print_error("the child wrote:\n%s", text);
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), MPI_ERR_RANK);
    assert_non_null(strstr(text, "MPI_Send: invalid rank: dest 7 is not a rank of "
                                 "MPI_COMM_WORLD (size 1) nor MPI_PROC_NULL (MPI_ERR_RANK)"));
    free(text);
}

static void test_isend_recv_self(void **state)
{
    int out[4] = {1, 2, 3, 4};
    int in[4] = {0};
    int in2[4] = {0};
    MPI_Request req, reqs[2];
    MPI_Status status, statuses[2];
    int flag = 0;

    (void)state;
    assert_int_equal(MPI_Isend(out, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(in, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    assert_memory_equal(in, out, sizeof(out));
    assert_int_equal(status.MPI_SOURCE, 0);
    assert_int_equal(status.MPI_TAG, 7);
    assert_int_equal(count_ints(&status), 4);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_null(req);
    /* Waiting on a null request returns the empty status at once. */
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_empty_status(&status);

    /* Irecv with wildcards, completed by Test. */
    memset(in, 0, sizeof(in));
    assert_int_equal(MPI_Irecv(in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Send(out, 3, MPI_INT, 0, 9, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int tries = 0; tries < 100000 && !flag; tries++) {
        assert_int_equal(MPI_Test(&req, &flag, &status), MPI_SUCCESS);
    }
    assert_true(flag);
    assert_null(req);
    assert_int_equal(status.MPI_SOURCE, 0);
    assert_int_equal(status.MPI_TAG, 9);
    assert_int_equal(count_ints(&status), 3);
    assert_memory_equal(in, out, 3 * sizeof(int));

    /* Truncation: raised by Recv and by Wait, the status still filled. */
    assert_int_equal(MPI_Isend(out, 4, MPI_INT, 0, 8, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(in, 2, MPI_INT, 0, 8, MPI_COMM_WORLD, &status), MPI_ERR_TRUNCATE);
    assert_int_equal(status.MPI_TAG, 8);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(in, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Send(out, 4, MPI_INT, 0, 10, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_ERR_TRUNCATE);
    assert_null(req);

    /* Waitall: MPI_ERR_IN_STATUS, and each status says how its request ended. */
    assert_int_equal(MPI_Irecv(in, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(in2, 4, MPI_INT, 0, 12, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Send(out, 4, MPI_INT, 0, 11, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Send(out, 4, MPI_INT, 0, 12, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, reqs, statuses), MPI_ERR_IN_STATUS);
    assert_int_equal(statuses[0].MPI_ERROR, MPI_ERR_TRUNCATE);
    assert_int_equal(statuses[1].MPI_ERROR, MPI_SUCCESS);
    assert_int_equal(statuses[1].MPI_TAG, 12);
    assert_memory_equal(in2, out, sizeof(out));
    assert_null(reqs[0]);
    assert_null(reqs[1]);

    /* A synchronous send to oneself completes once its receive is posted. */
    assert_int_equal(MPI_Irecv(in, 4, MPI_INT, 0, 13, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Ssend(out, 4, MPI_INT, 0, 13, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_int_equal(count_ints(&status), 4);
    /* And a ready send, whose receive is posted. */
    assert_int_equal(MPI_Irecv(in, 4, MPI_INT, 0, 14, MPI_COMM_SELF, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Rsend(out, 2, MPI_INT, 0, 14, MPI_COMM_SELF), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_int_equal(count_ints(&status), 2);
}

static void test_sendrecv_self(void **state)
{
    int out[4] = {5, 6, 7, 8};
    int other[4] = {50, 60, 70, 80};
    int in[4] = {0};
    int buf[4] = {1, 2, 3, 4};
    MPI_Request req;
    MPI_Status status;

    (void)state;
    assert_int_equal(
        MPI_Sendrecv(out, 4, MPI_INT, 0, 3, in, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, &status),
        MPI_SUCCESS);
    assert_memory_equal(in, out, sizeof(out));
    assert_int_equal(status.MPI_TAG, 3);
    assert_int_equal(count_ints(&status), 4);

    /* buf goes out with tag 6 while `other`, sent earlier with tag 5, replaces it. */
    assert_int_equal(MPI_Isend(other, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Sendrecv_replace(buf, 4, MPI_INT, 0, 6, 0, 5, MPI_COMM_WORLD, &status),
                     MPI_SUCCESS);
    assert_memory_equal(buf, other, sizeof(other));
    assert_int_equal(status.MPI_TAG, 5);
    assert_int_equal(MPI_Recv(in, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    assert_int_equal(in[0], 1);
    assert_int_equal(in[3], 4);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

static void test_proc_null(void **state)
{
    int buf[2] = {0};
    MPI_Request reqs[2];
    MPI_Status status, statuses[2];
    MPI_Message message;
    int flag = 0;

    (void)state;
    assert_int_equal(MPI_Send(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Ssend(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Rsend(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    /* Nothing is buffered for MPI_PROC_NULL: no attached buffer is needed. */
    assert_int_equal(MPI_Bsend(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status),
                     MPI_SUCCESS);
    assert_proc_null_status(&status);

    assert_int_equal(MPI_Isend(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[0]),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[1]),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, reqs, statuses), MPI_SUCCESS);
    assert_proc_null_status(&statuses[1]);

    assert_int_equal(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    assert_proc_null_status(&status);
    assert_int_equal(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status),
                     MPI_SUCCESS);
    assert_true(flag);
    assert_proc_null_status(&status);

    assert_int_equal(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &message, &status), MPI_SUCCESS);
    assert_ptr_equal(message, MPI_MESSAGE_NO_PROC);
    assert_int_equal(MPI_Mrecv(buf, 2, MPI_INT, &message, &status), MPI_SUCCESS);
    assert_ptr_equal(message, MPI_MESSAGE_NULL);
    assert_proc_null_status(&status);

    flag = 0;
    assert_int_equal(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &message, &status),
                     MPI_SUCCESS);
    assert_true(flag);
    assert_ptr_equal(message, MPI_MESSAGE_NO_PROC);
    assert_int_equal(MPI_Imrecv(buf, 2, MPI_INT, &message, &reqs[0]), MPI_SUCCESS);
    assert_ptr_equal(message, MPI_MESSAGE_NULL);
    assert_int_equal(MPI_Wait(&reqs[0], &status), MPI_SUCCESS);
    assert_proc_null_status(&status);

    assert_int_equal(MPI_Sendrecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, buf, 1, MPI_INT, MPI_PROC_NULL,
                                  0, MPI_COMM_WORLD, &status),
                     MPI_SUCCESS);
    assert_proc_null_status(&status);
    assert_int_equal(MPI_Sendrecv_replace(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0,
                                          MPI_COMM_WORLD, &status),
                     MPI_SUCCESS);
    assert_proc_null_status(&status);

    assert_int_equal(MPI_Send_init(buf, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[0]),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Start(&reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&reqs[0], &status), MPI_SUCCESS);
    assert_int_equal(MPI_Request_free(&reqs[0]), MPI_SUCCESS);
}

static void test_persistent_self(void **state)
{
    int out = 0, in = 0;
    MPI_Request reqs[2];
    MPI_Status status, statuses[2];
    int index, flag;

    (void)state;
    assert_int_equal(MPI_Send_init(&out, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Recv_init(&in, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    /* Not started: inactive, waited for at once with the empty status. */
    assert_int_equal(MPI_Wait(&reqs[1], &status), MPI_SUCCESS);
    assert_non_null(reqs[1]);
    assert_empty_status(&status);

    for (int round = 0; round < 3; round++) {
        out = 100 + round;
        in = -1;
        assert_int_equal(MPI_Startall(2, reqs), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(2, reqs, statuses), MPI_SUCCESS);
        assert_int_equal(in, 100 + round);
        assert_int_equal(statuses[1].MPI_TAG, 20);
        assert_int_equal(statuses[1].MPI_SOURCE, 0);
        assert_non_null(reqs[0]);
        assert_non_null(reqs[1]);
    }
    /* Started one by one, completed by Waitany and Testany. */
    for (int round = 0; round < 3; round++) {
        out = 200 + round;
        assert_int_equal(MPI_Start(&reqs[1]), MPI_SUCCESS);
        assert_int_equal(MPI_Start(&reqs[0]), MPI_SUCCESS);
        for (int done = 0; done < 2; done++) {
            assert_int_equal(MPI_Waitany(2, reqs, &index, &status), MPI_SUCCESS);
            assert_true(index == 0 || index == 1);
        }
        assert_int_equal(in, 200 + round);
        assert_int_equal(MPI_Testany(2, reqs, &index, &flag, &status), MPI_SUCCESS);
        assert_true(flag);
        assert_int_equal(index, MPI_UNDEFINED);
    }
    assert_int_equal(MPI_Request_free(&reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Request_free(&reqs[1]), MPI_SUCCESS);
    assert_null(reqs[0]);
    assert_null(reqs[1]);

    /* A synchronous persistent send. */
    assert_int_equal(MPI_Ssend_init(&out, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, &reqs[0]),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(&in, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    out = 300;
    assert_int_equal(MPI_Start(&reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_int_equal(in, 300);
    assert_int_equal(MPI_Request_free(&reqs[0]), MPI_SUCCESS);
}

static void test_probe_self(void **state)
{
    int out[4] = {9, 8, 7, 6};
    int in[4] = {0};
    MPI_Request send_req, recv_req;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int flag = 0;

    (void)state;
    assert_int_equal(MPI_Isend(out, 4, MPI_INT, 0, 40, MPI_COMM_WORLD, &send_req), MPI_SUCCESS);
    for (int tries = 0; tries < 100000 && !flag; tries++) {
        assert_int_equal(MPI_Iprobe(0, 40, MPI_COMM_WORLD, &flag, &status), MPI_SUCCESS);
    }
    assert_true(flag);
    assert_int_equal(status.MPI_SOURCE, 0);
    assert_int_equal(status.MPI_TAG, 40);
    assert_int_equal(count_ints(&status), 4);
    assert_int_equal(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    assert_int_equal(status.MPI_TAG, 40);

    /* A matched probe takes the message out of matching. */
    flag = 0;
    assert_int_equal(MPI_Improbe(0, 40, MPI_COMM_WORLD, &flag, &message, &status), MPI_SUCCESS);
    assert_true(flag);
    assert_ptr_not_equal(message, MPI_MESSAGE_NULL);
    assert_int_equal(MPI_Iprobe(0, 40, MPI_COMM_WORLD, &flag, &status), MPI_SUCCESS);
    assert_false(flag);
    assert_int_equal(MPI_Mrecv(in, 4, MPI_INT, &message, &status), MPI_SUCCESS);
    assert_ptr_equal(message, MPI_MESSAGE_NULL);
    assert_memory_equal(in, out, sizeof(out));
    assert_int_equal(status.MPI_TAG, 40);
    /* A message is received once. */
    assert_int_equal(MPI_Mrecv(in, 4, MPI_INT, &message, &status), MPI_ERR_REQUEST);
    assert_int_equal(MPI_Wait(&send_req, MPI_STATUS_IGNORE), MPI_SUCCESS);

    /* Blocking matched probe, immediate receive. */
    memset(in, 0, sizeof(in));
    assert_int_equal(MPI_Isend(out, 2, MPI_INT, 0, 41, MPI_COMM_WORLD, &send_req), MPI_SUCCESS);
    assert_int_equal(MPI_Mprobe(0, 41, MPI_COMM_WORLD, &message, &status), MPI_SUCCESS);
    assert_int_equal(count_ints(&status), 2);
    assert_int_equal(MPI_Imrecv(in, 4, MPI_INT, &message, &recv_req), MPI_SUCCESS);
    assert_ptr_equal(message, MPI_MESSAGE_NULL);
    assert_int_equal(MPI_Wait(&recv_req, &status), MPI_SUCCESS);
    assert_int_equal(count_ints(&status), 2);
    assert_memory_equal(in, out, 2 * sizeof(int));
    assert_int_equal(MPI_Wait(&send_req, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

static void test_cancel(void **state)
{
    int buf = 0, value = 51;
    MPI_Request req;
    MPI_Status status;
    int flag = -1;

    (void)state;
    /* A receive nobody sends to is cancelled. */
    assert_int_equal(MPI_Irecv(&buf, 1, MPI_INT, 0, 50, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Cancel(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_null(req);
    assert_int_equal(MPI_Test_cancelled(&status, &flag), MPI_SUCCESS);
    assert_int_equal(flag, 1);

    /* A send completes normally (MPI-3.1 section 3.8.4 allows it): not cancelled. */
    assert_int_equal(MPI_Isend(&value, 1, MPI_INT, 0, 51, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Cancel(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_int_equal(MPI_Test_cancelled(&status, &flag), MPI_SUCCESS);
    if (flag == 0) {
        assert_int_equal(MPI_Recv(&buf, 1, MPI_INT, 0, 51, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        assert_int_equal(buf, 51);
    }
}

static void test_request_arrays(void **state)
{
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status status, statuses[3];
    int in[2] = {0}, out = 70;
    int index, flag, outcount, indices[3];

    (void)state;
    /* Nothing live: MPI_UNDEFINED and empty statuses (MPI-3.1 section 3.7.5). */
    assert_int_equal(MPI_Waitany(3, reqs, &index, &status), MPI_SUCCESS);
    assert_int_equal(index, MPI_UNDEFINED);
    assert_empty_status(&status);
    flag = 0;
    assert_int_equal(MPI_Testany(3, reqs, &index, &flag, &status), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(index, MPI_UNDEFINED);
    assert_int_equal(MPI_Waitsome(3, reqs, &outcount, indices, statuses), MPI_SUCCESS);
    assert_int_equal(outcount, MPI_UNDEFINED);
    assert_int_equal(MPI_Testsome(3, reqs, &outcount, indices, statuses), MPI_SUCCESS);
    assert_int_equal(outcount, MPI_UNDEFINED);
    assert_int_equal(MPI_Waitall(3, reqs, statuses), MPI_SUCCESS);
    assert_empty_status(&statuses[2]);
    flag = 0;
    assert_int_equal(MPI_Testall(3, reqs, &flag, statuses), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Waitany(0, NULL, &index, &status), MPI_SUCCESS);
    assert_int_equal(index, MPI_UNDEFINED);

    /* Two receives: the later one is sent to first. */
    assert_int_equal(MPI_Irecv(&in[0], 1, MPI_INT, 0, 70, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(&in[1], 1, MPI_INT, 0, 71, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Testall(3, reqs, &flag, statuses), MPI_SUCCESS);
    assert_false(flag);
    assert_non_null(reqs[0]);
    assert_int_equal(MPI_Send(&out, 1, MPI_INT, 0, 71, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Waitany(3, reqs, &index, &status), MPI_SUCCESS);
    assert_int_equal(index, 1);
    assert_int_equal(status.MPI_TAG, 71);
    assert_null(reqs[1]);
    assert_int_equal(MPI_Testsome(3, reqs, &outcount, indices, statuses), MPI_SUCCESS);
    assert_int_equal(outcount, 0);
    assert_int_equal(MPI_Send(&out, 1, MPI_INT, 0, 70, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Waitsome(3, reqs, &outcount, indices, statuses), MPI_SUCCESS);
    assert_int_equal(outcount, 1);
    assert_int_equal(indices[0], 0);
    assert_int_equal(statuses[0].MPI_TAG, 70);
    assert_int_equal(statuses[0].MPI_ERROR, MPI_SUCCESS);
    assert_null(reqs[0]);
    assert_int_equal(in[0], 70);
    assert_int_equal(in[1], 70);

    /* Request_get_status neither frees nor deactivates. */
    assert_int_equal(MPI_Isend(&out, 1, MPI_INT, 0, 72, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Irecv(&in[0], 1, MPI_INT, 0, 72, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    flag = 0;
    for (int tries = 0; tries < 100000 && !flag; tries++) {
        assert_int_equal(MPI_Request_get_status(reqs[1], &flag, &status), MPI_SUCCESS);
    }
    assert_true(flag);
    assert_int_equal(status.MPI_TAG, 72);
    assert_non_null(reqs[1]);
    assert_int_equal(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_int_equal(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &status), MPI_SUCCESS);
    assert_true(flag);
    assert_empty_status(&status);
}

static void test_bsend(void **state)
{
    int out[4] = {1, 2, 3, 4};
    int in[4] = {0};
    int big[1000] = {0};
    int size = 3 * (int)(sizeof(out) + MPI_BSEND_OVERHEAD);
    char *buffer = malloc((size_t)size);
    void *detached = NULL;
    int detached_size = -1;
    MPI_Request req;
    MPI_Status status;

    (void)state;
    assert_non_null(buffer);
    /* No buffer attached yet. */
    assert_int_equal(MPI_Bsend(out, 4, MPI_INT, 0, 60, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Ibsend(out, 4, MPI_INT, 0, 60, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Buffer_attach(buffer, -1), MPI_ERR_ARG);
    assert_int_equal(MPI_Buffer_attach(NULL, 10), MPI_ERR_BUFFER);

    assert_int_equal(MPI_Buffer_attach(buffer, size), MPI_SUCCESS);
    assert_int_equal(MPI_Buffer_attach(buffer, size), MPI_ERR_BUFFER);

    /* The message is copied: changing out after MPI_Bsend does not change it. */
    assert_int_equal(MPI_Bsend(out, 4, MPI_INT, 0, 60, MPI_COMM_WORLD), MPI_SUCCESS);
    out[0] = 11;
    assert_int_equal(MPI_Bsend(out, 4, MPI_INT, 0, 61, MPI_COMM_WORLD), MPI_SUCCESS);
    out[0] = 21;
    assert_int_equal(MPI_Ibsend(out, 4, MPI_INT, 0, 62, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    assert_null(req);
    out[0] = 31;
    /* Too large for the buffer. */
    assert_int_equal(MPI_Bsend(big, 1000, MPI_INT, 0, 63, MPI_COMM_WORLD), MPI_ERR_BUFFER);

    for (int tag = 60; tag <= 62; tag++) {
        assert_int_equal(MPI_Recv(in, 4, MPI_INT, 0, tag, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        assert_int_equal(count_ints(&status), 4);
        assert_int_equal(in[0], 1 + 10 * (tag - 60));
        assert_int_equal(in[3], 4);
    }

    /* A persistent buffered send, started three times. */
    assert_int_equal(MPI_Bsend_init(out, 4, MPI_INT, 0, 64, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        out[0] = 400 + round;
        assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
        out[0] = -1;
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_non_null(req);
        assert_int_equal(MPI_Recv(in, 4, MPI_INT, 0, 64, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        assert_int_equal(in[0], 400 + round);
    }
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);

    /* Detach waits for the messages, then gives the buffer back. */
    assert_int_equal(MPI_Bsend(out, 4, MPI_INT, 0, 65, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Buffer_detach(&detached, &detached_size), MPI_SUCCESS);
    assert_ptr_equal(detached, buffer);
    assert_int_equal(detached_size, size);
    assert_int_equal(MPI_Bsend(out, 4, MPI_INT, 0, 66, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Recv(in, 4, MPI_INT, 0, 65, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    assert_int_equal(in[0], -1);
    /* With nothing attached, detach gives no buffer. */
    assert_int_equal(MPI_Buffer_detach(&detached, &detached_size), MPI_SUCCESS);
    assert_null(detached);
    assert_int_equal(detached_size, 0);
    free(buffer);
}

/*
 * Messages above every eager limit leave by rendezvous: their blocks stay in use until the
 * receive matches, then come back and merge, so that a message as large as both fits.
 */
static void test_bsend_rendezvous(void **state)
{
    enum { N = 64 * 1024 }; /* ints: 256 KiB, above the self BTL's 64 KiB eager limit */
    int size = 2 * (int)(N * sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buffer = malloc((size_t)size);
    int *out = calloc(2 * N + 32, sizeof(int));
    int *in = calloc(2 * N + 32, sizeof(int));
    void *detached;
    int detached_size;
    MPI_Request req;
    MPI_Status status;

    (void)state;
    assert_non_null(buffer);
    assert_non_null(out);
    assert_non_null(in);
    assert_int_equal(MPI_Buffer_attach(buffer, size), MPI_SUCCESS);
    out[0] = 80;
    assert_int_equal(MPI_Bsend(out, N, MPI_INT, 0, 80, MPI_COMM_WORLD), MPI_SUCCESS);
    out[0] = 81;
    assert_int_equal(MPI_Ibsend(out, N, MPI_INT, 0, 81, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    /* Complete at once: the message is in the buffer, whatever the receiver does. */
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    /* Both blocks wait for their receives: no room for a third message. */
    assert_int_equal(MPI_Bsend(out, N, MPI_INT, 0, 82, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    for (int tag = 80; tag <= 81; tag++) {
        assert_int_equal(MPI_Recv(in, N, MPI_INT, 0, tag, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        assert_int_equal(count_ints(&status), N);
        assert_int_equal(in[0], tag);
    }
    /* Both blocks came back and merged: one message of nearly the whole buffer fits. */
    out[0] = 83;
    out[2 * N + 31] = 831;
    assert_int_equal(MPI_Bsend(out, 2 * N + 32, MPI_INT, 0, 83, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Recv(in, 2 * N + 32, MPI_INT, 0, 83, MPI_COMM_WORLD, &status),
                     MPI_SUCCESS);
    assert_int_equal(in[0], 83);
    assert_int_equal(in[2 * N + 31], 831);
    assert_int_equal(MPI_Buffer_detach(&detached, &detached_size), MPI_SUCCESS);
    assert_ptr_equal(detached, buffer);
    free(in);
    free(out);
    free(buffer);
}

static void test_status_calls(void **state)
{
    MPI_Status status = {0};
    int count = 0, flag = -1;
    MPI_Count count_x = 0;

    (void)state;
    status._nbytes = 8;
    assert_int_equal(MPI_Get_count(&status, MPI_INT, &count), MPI_SUCCESS);
    assert_int_equal(count, 2);
    assert_int_equal(MPI_Get_count(&status, MPI_DOUBLE, &count), MPI_SUCCESS);
    assert_int_equal(count, 1);
    status._nbytes = 10;
    assert_int_equal(MPI_Get_count(&status, MPI_INT, &count), MPI_SUCCESS);
    assert_int_equal(count, MPI_UNDEFINED);
    assert_int_equal(MPI_Get_count(&status, MPI_DATATYPE_NULL, &count), MPI_ERR_TYPE);
    assert_int_equal(MPI_Get_count(NULL, MPI_INT, &count), MPI_ERR_ARG);
    assert_int_equal(MPI_Get_count(&status, MPI_INT, NULL), MPI_ERR_ARG);

    assert_int_equal(MPI_Status_set_elements(&status, MPI_INT, 3), MPI_SUCCESS);
    assert_int_equal(status._nbytes, 3 * (MPI_Count)sizeof(int));
    assert_int_equal(MPI_Get_count(&status, MPI_INT, &count), MPI_SUCCESS);
    assert_int_equal(count, 3);
    assert_int_equal(MPI_Get_elements(&status, MPI_INT, &count), MPI_SUCCESS);
    assert_int_equal(count, 3);
    assert_int_equal(MPI_Get_elements_x(&status, MPI_INT, &count_x), MPI_SUCCESS);
    assert_int_equal(count_x, 3);
    assert_int_equal(MPI_Status_set_elements(&status, MPI_INT, -1), MPI_ERR_COUNT);

    assert_int_equal(MPI_Status_set_cancelled(&status, 1), MPI_SUCCESS);
    assert_int_equal(MPI_Test_cancelled(&status, &flag), MPI_SUCCESS);
    assert_int_equal(flag, 1);
    assert_int_equal(MPI_Status_set_cancelled(&status, 0), MPI_SUCCESS);
    assert_int_equal(MPI_Test_cancelled(&status, &flag), MPI_SUCCESS);
    assert_int_equal(flag, 0);
    assert_int_equal(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_send_recv_arg_errors, teardown),
        cmocka_unit_test_teardown(test_request_arg_errors, teardown),
        cmocka_unit_test_teardown(test_fatal_message, teardown),
        cmocka_unit_test_teardown(test_isend_recv_self, teardown),
        cmocka_unit_test_teardown(test_sendrecv_self, teardown),
        cmocka_unit_test_teardown(test_proc_null, teardown),
        cmocka_unit_test_teardown(test_persistent_self, teardown),
        cmocka_unit_test_teardown(test_probe_self, teardown),
        cmocka_unit_test_teardown(test_cancel, teardown),
        cmocka_unit_test_teardown(test_request_arrays, teardown),
        cmocka_unit_test_teardown(test_bsend, teardown),
        cmocka_unit_test_teardown(test_bsend_rendezvous, teardown),
        cmocka_unit_test_teardown(test_status_calls, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
