/*
 * sessions.c: MPI-4.0 sessions without MPI_Init (or, with --world, inside the World Model
 * and outliving it): info calls before MPI is initialized, MPI_Info_create_env, a session's
 * info and process sets, groups and communicators made from them (two at once with
 * different string tags, an intercommunicator between the even and the odd ranks),
 * session error handlers, handle conversion, and a second session keeping the library up
 * after the first ends.
 *
 * Usage: sessions [--world]. Prints "done sessions: rank R: N checks, M failed".
 * test/integration/test_misc.py runs it; the harness is test/comm/comm_common.h (its
 * barrier and finish need MPI_COMM_WORLD, so this program has its own).
 */
#include "../comm/comm_common.h"

static int handler_calls, handler_code;

static void on_session_error(MPI_Session *session, int *code, ...)
{
    (void)session;
    handler_calls++;
    handler_code = *code;
}

static void check_info_before_init(void)
{
    MPI_Info info, env1, env2;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0, init = 1, len;

    comm_begin("info before init");
    MPI_Initialized(&init);
    CHECK(!init, "MPI_Initialized is true before any initialization");
    CHECK(MPI_Info_create(&info) == MPI_SUCCESS, "MPI_Info_create failed");
    MPI_Info_set(info, "key", "value");
    MPI_Info_get(info, "key", sizeof(value) - 1, value, &flag);
    CHECK(flag && strcmp(value, "value") == 0, "MPI_Info_get gave flag %d", flag);
    MPI_Info_free(&info);
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free left the handle");

    char *argv[] = {"prog", "a", "b", NULL};
    CHECK(MPI_Info_create_env(3, argv, &env1) == MPI_SUCCESS, "MPI_Info_create_env failed");
    len = sizeof(value);
    MPI_Info_get_string(env1, "command", &len, value, &flag);
    CHECK(flag && strcmp(value, "prog") == 0, "command is \"%s\"", flag ? value : "(none)");
    len = sizeof(value);
    MPI_Info_get_string(env1, "argv", &len, value, &flag);
    CHECK(flag && strcmp(value, "a b") == 0, "argv is \"%s\"", flag ? value : "(none)");
    MPI_Info_create_env(0, NULL, &env2);
    len = sizeof(value);
    MPI_Info_get_string(env2, "host", &len, value, &flag);
    CHECK(flag && value[0], "no host in MPI_Info_create_env's info");
    MPI_Info_free(&env1);
    MPI_Info_free(&env2);
}

static void check_psets(MPI_Session session, int world_size)
{
    char name[MPI_MAX_PSET_NAME_LEN], value[MPI_MAX_INFO_VAL];
    int n = 0, len, flag = 0, found_world = 0, found_self = 0;
    MPI_Info info;

    comm_begin("process sets");
    MPI_Session_get_num_psets(session, MPI_INFO_NULL, &n);
    CHECK(n >= 2, "%d process sets", n);
    for (int i = 0; i < n; i++) {
        len = 0;
        MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, NULL);
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "set %d: length %d", i, len);
        MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, name);
        CHECK((int)strlen(name) + 1 == len, "set %d: \"%s\" is not %d long", i, name, len - 1);
        MPI_Session_get_pset_info(session, name, &info);
        MPI_Info_get(info, "mpi_size", sizeof(value) - 1, value, &flag);
        CHECK(flag, "set %s: no mpi_size", name);
        if (strcmp(name, "mpi://WORLD") == 0) {
            found_world = 1;
            CHECK(flag && atoi(value) == world_size, "mpi://WORLD has %s ranks", value);
        }
        if (strcmp(name, "mpi://SELF") == 0) {
            found_self = 1;
            CHECK(flag && atoi(value) == 1, "mpi://SELF has %s ranks", value);
        }
        MPI_Info_free(&info);
    }
    CHECK(found_world && found_self, "world %d, self %d", found_world, found_self);
    /* A truncated name: pset_len - 1 characters and the NUL; the length says the whole. */
    len = 6;
    MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &len, name);
    CHECK(strlen(name) == 5 && len > 6, "truncated to \"%s\", length %d", name, len);
}

/* A communicator from a process set of the session, and messages on it. */
static MPI_Comm make_comm(MPI_Session session, const char *pset, const char *tag)
{
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    int rc;

    rc = MPI_Group_from_session_pset(session, pset, &group);
    CHECK(rc == MPI_SUCCESS, "MPI_Group_from_session_pset(%s) returned %d", pset, rc);
    rc = MPI_Comm_create_from_group(group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    CHECK(rc == MPI_SUCCESS && comm != MPI_COMM_NULL, "MPI_Comm_create_from_group returned %d", rc);
    MPI_Group_free(&group);
    return comm;
}

static void check_comms(MPI_Session session, int *rank_out, int *size_out)
{
    MPI_Comm world, other, self;
    int rank, size, sum = 0, result, token = -1, self_size = 0;

    comm_begin("communicators from groups");
    world = make_comm(session, "mpi://WORLD", "org.crmpi.test.sessions");
    /* Names are matched without regard to case. */
    other = make_comm(session, "mpi://world", "org.crmpi.test.sessions.other");
    self = make_comm(session, "mpi://SELF", "org.crmpi.test.sessions.self");
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    *rank_out = rank;
    *size_out = size;
    comm_rank = rank;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world);
    CHECK(sum == size * (size - 1) / 2, "sum of ranks %d", sum);
    MPI_Comm_compare(world, other, &result);
    CHECK(result == MPI_CONGRUENT, "the two communicators compare %d", result);
    /* A message on one is not received on the other: the ring goes over `other` while
     * `world` carries the same tag the other way. */
    MPI_Request reqs[4];
    int a = rank, b = -rank, got_a = -1, got_b = 1;
    MPI_Irecv(&got_a, 1, MPI_INT, (rank + size - 1) % size, 5, other, &reqs[0]);
    MPI_Irecv(&got_b, 1, MPI_INT, (rank + 1) % size, 5, world, &reqs[1]);
    MPI_Isend(&a, 1, MPI_INT, (rank + 1) % size, 5, other, &reqs[2]);
    MPI_Isend(&b, 1, MPI_INT, (rank + size - 1) % size, 5, world, &reqs[3]);
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    CHECK(got_a == (rank + size - 1) % size, "ring on other: got %d", got_a);
    CHECK(got_b == -((rank + 1) % size), "ring on world: got %d", got_b);
    MPI_Comm_size(self, &self_size);
    CHECK(self_size == 1, "mpi://SELF's communicator has %d ranks", self_size);
    MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &token, 1, MPI_INT, 0, 1, self, MPI_STATUS_IGNORE);
    CHECK(token == rank, "self message %d", token);

    comm_begin("intercommunicator from groups");
    if (size >= 2) {
        MPI_Group wgroup, even, odd;
        MPI_Comm inter;
        int remote = 0, flag = 0, rc;
        int range_even[1][3] = {{0, size - 1, 2}}, range_odd[1][3] = {{1, size - 1, 2}};

        MPI_Comm_group(world, &wgroup);
        MPI_Group_range_incl(wgroup, 1, range_even, &even);
        MPI_Group_range_incl(wgroup, 1, range_odd, &odd);
        rc = MPI_Intercomm_create_from_groups(rank % 2 ? odd : even, 0, rank % 2 ? even : odd, 0,
                                              "org.crmpi.test.sessions.inter", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &inter);
        CHECK(rc == MPI_SUCCESS, "MPI_Intercomm_create_from_groups returned %d", rc);
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &remote);
        CHECK(flag && remote == (rank % 2 ? (size + 1) / 2 : size / 2), "remote size %d", remote);
        int mine = rank, theirs = -1, inter_rank;
        MPI_Comm_rank(inter, &inter_rank);
        if (inter_rank < (size / 2)) {
            MPI_Sendrecv(&mine, 1, MPI_INT, inter_rank, 7, &theirs, 1, MPI_INT, inter_rank, 7,
                         inter, MPI_STATUS_IGNORE);
            CHECK(theirs == (rank % 2 ? rank - 1 : rank + 1), "partner sent %d", theirs);
        }
        MPI_Comm_free(&inter);
        MPI_Group_free(&wgroup);
        MPI_Group_free(&even);
        MPI_Group_free(&odd);
    }
    MPI_Barrier(world);
    MPI_Comm_free(&other);
    MPI_Comm_free(&self);
    MPI_Comm_free(&world);
}

static void check_errhandlers(MPI_Session session)
{
    MPI_Errhandler handler, got;
    MPI_Group group = MPI_GROUP_NULL;
    int rc;

    comm_begin("session error handlers");
    rc = MPI_Group_from_session_pset(session, "mpi://nowhere", &group);
    CHECK(rc == MPI_ERR_ARG, "an unknown process set gave %d", rc);
    MPI_Session_create_errhandler(on_session_error, &handler);
    MPI_Session_set_errhandler(session, handler);
    MPI_Session_get_errhandler(session, &got);
    CHECK(got == handler, "MPI_Session_get_errhandler gave another handler");
    MPI_Errhandler_free(&got);
    MPI_Session_call_errhandler(session, MPI_ERR_OTHER);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "handler called %d times, code %d",
          handler_calls, handler_code);
    MPI_Session_set_errhandler(session, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&handler);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(session)) == session, "c2f/f2c lost the session");
    CHECK(MPI_Session_c2f(MPI_SESSION_NULL) == 0, "MPI_SESSION_NULL does not convert to 0");
}

int main(int argc, char **argv)
{
    int world = argc > 1 && strcmp(argv[1], "--world") == 0;
    MPI_Session first, second;
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0, rank = 0, size = 0, world_size = 0, init = 0, rc;

    comm_program = "sessions";
    signal(SIGALRM, comm_on_alarm);
    alarm(COMM_HANG_SECONDS);
    check_info_before_init();
    if (world) {
        MPI_Init(&argc, &argv);
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    }

    comm_begin("session init");
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_SERIALIZED");
    rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &first);
    CHECK(rc == MPI_SUCCESS && first != MPI_SESSION_NULL, "MPI_Session_init returned %d", rc);
    MPI_Info_free(&info);
    MPI_Initialized(&init);
    CHECK(init == world, "MPI_Initialized is %d", init);
    MPI_Session_get_info(first, &info);
    MPI_Info_get(info, "thread_level", sizeof(value) - 1, value, &flag);
    CHECK(flag && strcmp(value, "MPI_THREAD_SERIALIZED") == 0, "thread_level \"%s\"",
          flag ? value : "(none)");
    MPI_Info_free(&info);

    check_comms(first, &rank, &size);
    if (world)
        CHECK(size == world_size, "mpi://WORLD has %d ranks, MPI_COMM_WORLD %d", size, world_size);
    check_psets(first, size);
    check_errhandlers(first);

    /* The World Model ends; the session keeps the library up. Then a second session keeps
     * it up after the first ends. */
    if (world)
        MPI_Finalize();
    comm_begin("a second session");
    rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &second);
    CHECK(rc == MPI_SUCCESS, "the second MPI_Session_init returned %d", rc);
    MPI_Session_get_info(second, &info);
    MPI_Info_get(info, "thread_level", sizeof(value) - 1, value, &flag);
    CHECK(flag && strcmp(value, "MPI_THREAD_MULTIPLE") == 0, "default thread_level \"%s\"",
          flag ? value : "(none)");
    MPI_Info_free(&info);
    rc = MPI_Session_finalize(&first);
    CHECK(rc == MPI_SUCCESS && first == MPI_SESSION_NULL, "MPI_Session_finalize returned %d", rc);
    MPI_Comm comm = make_comm(second, "mpi://WORLD", "org.crmpi.test.sessions.second");
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == size * (size - 1) / 2, "sum of ranks on the second session's communicator %d",
          sum);
    MPI_Comm_free(&comm);
    rc = MPI_Session_finalize(&second);
    CHECK(rc == MPI_SUCCESS, "the last MPI_Session_finalize returned %d", rc);

    comm_begin("after the end");
    MPI_Info_create(&info);
    CHECK(info != MPI_INFO_NULL, "MPI_Info_create after the end");
    MPI_Info_free(&info);
    printf("done %s: rank %d: %d checks, %d failed\n", comm_program, rank, comm_checks,
           comm_failures);
    return comm_failures ? 1 : 0;
}
