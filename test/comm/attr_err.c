/*
 * attr_err.c: attributes (copy callbacks at MPI_Comm_dup, delete callbacks at
 * MPI_Comm_free and MPI_Comm_delete_attr, counted), the predefined attributes of
 * MPI_COMM_WORLD, error handlers (MPI_ERRORS_RETURN, user handlers, reference semantics)
 * and info objects.
 */
#include "comm_common.h"

static int copies, deletes;
static void *last_deleted;

static int count_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval;
    copies++;
    *(void **)out = (void *)((char *)in + 1); /* the copy's value is one more */
    *flag = *(int *)extra;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    int size;

    (void)keyval, (void)extra;
    /* A callback may call MPI (MPI-3.1 6.7.2). */
    MPI_Comm_size(comm, &size);
    deletes++;
    last_deleted = value;
    return MPI_SUCCESS;
}

static void test_attr_callbacks(void)
{
    int copied_key, dropped_key, yes = 1, no = 0, flag;
    MPI_Comm base, dup;
    void *value;

    comm_begin("attr_callbacks");
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_create_keyval(count_copy, count_delete, &copied_key, &yes);
    MPI_Comm_create_keyval(count_copy, count_delete, &dropped_key, &no);
    MPI_Comm_set_attr(base, copied_key, (void *)100);
    MPI_Comm_set_attr(base, dropped_key, (void *)200);
    copies = deletes = 0;
    MPI_Comm_dup(base, &dup);
    CHECK(copies == 2, "%d copy callbacks at dup, expected 2", copies);
    MPI_Comm_get_attr(dup, copied_key, &value, &flag);
    CHECK(flag && value == (void *)101, "copied attribute: flag %d value %p", flag, value);
    MPI_Comm_get_attr(dup, dropped_key, &value, &flag);
    CHECK(!flag, "an attribute whose copy callback said no is on the duplicate");

    /* Replacing a value deletes the old one. */
    MPI_Comm_set_attr(dup, copied_key, (void *)300);
    CHECK(deletes == 1 && last_deleted == (void *)101, "set over a value: %d deletes (%p)", deletes,
          last_deleted);
    MPI_Comm_delete_attr(dup, copied_key);
    CHECK(deletes == 2 && last_deleted == (void *)300, "delete_attr: %d deletes", deletes);
    MPI_Comm_get_attr(dup, copied_key, &value, &flag);
    CHECK(!flag, "a deleted attribute is still there");

    /* Freeing the keyval keeps the attributes that use it (6.7.2). */
    MPI_Comm_free_keyval(&dropped_key);
    CHECK(dropped_key == MPI_KEYVAL_INVALID, "free_keyval left the handle");
    MPI_Comm_free(&base);
    CHECK(deletes == 4, "free of a communicator with 2 attributes: %d deletes, expected 4",
          deletes);
    MPI_Comm_free(&dup);
    CHECK(deletes == 4, "free of a communicator without attributes ran callbacks");

    /* MPI_COMM_DUP_FN / MPI_COMM_NULL_COPY_FN. */
    int dup_key, null_key;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dup_key, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &null_key, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, dup_key, &yes);
    MPI_Comm_set_attr(MPI_COMM_WORLD, null_key, &yes);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_get_attr(dup, dup_key, &value, &flag);
    CHECK(flag && value == &yes, "MPI_COMM_DUP_FN: flag %d", flag);
    MPI_Comm_get_attr(dup, null_key, &value, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");
    MPI_Comm_free(&dup);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, dup_key);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, null_key);
    MPI_Comm_free_keyval(&dup_key);
    MPI_Comm_free_keyval(&null_key);
    MPI_Comm_free_keyval(&copied_key);
}

static void test_predefined_attrs(void)
{
    int *value, flag;

    comm_begin("predefined_attrs");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag);
    CHECK(flag && *value >= 32767, "MPI_TAG_UB: flag %d value %d", flag, flag ? *value : 0);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &value, &flag);
    CHECK(!flag || *value == 0 || *value == 1, "MPI_WTIME_IS_GLOBAL is %d", *value);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &value, &flag);
    CHECK(flag, "MPI_HOST is not set");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &value, &flag);
    CHECK(flag, "MPI_IO is not set");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &value, &flag);
    CHECK(!flag || *value >= 1, "MPI_UNIVERSE_SIZE is %d", *value);
    /* The deprecated name of the same call. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag);
#pragma GCC diagnostic pop
    CHECK(flag && *value >= 32767, "MPI_Attr_get(MPI_TAG_UB)");
}

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

static void test_errhandlers(void)
{
    MPI_Comm dup;
    MPI_Errhandler handler, got;
    int value = 0, rc, errclass;

    comm_begin("errhandlers");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    rc = MPI_Send(&value, 1, MPI_INT, comm_size, 0, dup);
    MPI_Error_class(rc, &errclass);
    CHECK(errclass == MPI_ERR_RANK, "send to rank size: class %d, expected MPI_ERR_RANK", errclass);
    rc = MPI_Send(&value, -1, MPI_INT, 0, 0, dup);
    MPI_Error_class(rc, &errclass);
    CHECK(errclass == MPI_ERR_COUNT, "negative count: class %d", errclass);
    MPI_Comm_get_errhandler(dup, &got);
    CHECK(got == MPI_ERRORS_RETURN, "get_errhandler did not give MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&got);

    /* A user handler, inherited by a duplicate; freeing the handle keeps it working. */
    MPI_Comm_create_errhandler(count_errors, &handler);
    MPI_Comm_set_errhandler(dup, handler);
    MPI_Errhandler_free(&handler);
    CHECK(handler == MPI_ERRHANDLER_NULL, "Errhandler_free left the handle");
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    handler_calls = 0;
    rc = MPI_Recv(&value, 1, MPI_INT, comm_size + 5, 0, dup2, MPI_STATUS_IGNORE);
    MPI_Error_class(handler_code, &errclass);
    CHECK(handler_calls == 1 && errclass == MPI_ERR_RANK && handler_comm == dup2,
          "user handler: %d calls, class %d", handler_calls, errclass);
    CHECK(rc != MPI_SUCCESS, "the failed call returned MPI_SUCCESS");
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER && handler_comm == dup,
          "MPI_Comm_call_errhandler: %d calls, code %d", handler_calls, handler_code);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);

    /* The world keeps MPI_ERRORS_ARE_FATAL. */
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == MPI_ERRORS_ARE_FATAL, "the world's handler changed");
    MPI_Errhandler_free(&got);

    /* Freeing a predefined communicator is an error. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm world = MPI_COMM_WORLD;
    rc = MPI_Comm_free(&world);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_free(MPI_COMM_WORLD) succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_info(void)
{
    MPI_Info info, copy;
    char key[MPI_MAX_INFO_KEY], value[MPI_MAX_INFO_VAL];
    int nkeys, flag, len;

    comm_begin("info");
    MPI_Info_create(&info);
    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "two");
    MPI_Info_set(info, "alpha", "one");
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys == 2, "%d keys", nkeys);
    MPI_Info_get_nthkey(info, 0, key);
    CHECK(strcmp(key, "alpha") == 0, "key 0 is %s", key);
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "one") == 0, "alpha = %s", value);
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK(flag && len == 3, "valuelen of beta %d", len);
    MPI_Info_dup(info, &copy);
    MPI_Info_delete(info, "alpha");
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(!flag, "deleted key still there");
    MPI_Info_get(copy, "alpha", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "one") == 0, "the duplicate lost alpha");
    MPI_Info_free(&info);
    MPI_Info_free(&copy);
    CHECK(info == MPI_INFO_NULL, "Info_free left the handle");
    MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
    CHECK(nkeys >= 0, "MPI_INFO_ENV has %d keys", nkeys);
}

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "attr_err");
    test_attr_callbacks();
    comm_barrier();
    test_predefined_attrs();
    comm_barrier();
    test_errhandlers();
    comm_barrier();
    test_info();
    return comm_finish();
}
