/*
 * test_handles.c: MPI_<Object>_c2f and _f2c (handle_f2c.c) in a singleton: the null
 * handles are 0, every handle converts to an integer and back to itself, one handle always
 * gets the same integer and different handles different ones, a number never given
 * converts to the null handle, and predefined handles convert before MPI_Init.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "mpi_internal.h"
#include "test_capture.h"

static int group_setup(void **state)
{
    (void)state;
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    /* Before MPI_Init: a library may convert predefined handles at load time. */
    MPI_Fint world = MPI_Comm_c2f(MPI_COMM_WORLD);
    if (world <= 0 || MPI_Comm_f2c(world) != MPI_COMM_WORLD) {
        return -1;
    }
    return MPI_Init(NULL, NULL) == MPI_SUCCESS ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

static void test_null_handles(void **state)
{
    (void)state;
    assert_int_equal(MPI_Comm_c2f(MPI_COMM_NULL), 0);
    assert_int_equal(MPI_Type_c2f(MPI_DATATYPE_NULL), 0);
    assert_int_equal(MPI_Group_c2f(MPI_GROUP_NULL), 0);
    assert_int_equal(MPI_Request_c2f(MPI_REQUEST_NULL), 0);
    assert_int_equal(MPI_Op_c2f(MPI_OP_NULL), 0);
    assert_int_equal(MPI_Info_c2f(MPI_INFO_NULL), 0);
    assert_int_equal(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL), 0);
    assert_int_equal(MPI_Message_c2f(MPI_MESSAGE_NULL), 0);
    assert_ptr_equal(MPI_Comm_f2c(0), MPI_COMM_NULL);
    assert_ptr_equal(MPI_Type_f2c(0), MPI_DATATYPE_NULL);
    assert_ptr_equal(MPI_Request_f2c(0), MPI_REQUEST_NULL);
    /* Numbers never given, negative ones too, are the null handle. */
    assert_ptr_equal(MPI_Comm_f2c(12345), MPI_COMM_NULL);
    assert_ptr_equal(MPI_Type_f2c(-3), MPI_DATATYPE_NULL);
}

static void test_round_trips(void **state)
{
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_INTEGER, MPI_REAL8, MPI_2INT, MPI_BYTE};
    MPI_Fint numbers[6];
    MPI_Comm dup;
    MPI_Group group;
    MPI_Info info;
    MPI_Request request;
    MPI_Errhandler handler;
    int value = 0;

    (void)state;
    for (int t = 0; t < 6; t++) {
        numbers[t] = MPI_Type_c2f(types[t]);
        assert_true(numbers[t] > 0);
        assert_ptr_equal(MPI_Type_f2c(numbers[t]), types[t]);
        for (int u = 0; u < t; u++) {
            assert_int_not_equal(numbers[t], numbers[u]);
        }
    }
    /* The same handle, the same number. */
    assert_int_equal(MPI_Type_c2f(MPI_DOUBLE), numbers[1]);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    assert_ptr_equal(MPI_Comm_f2c(MPI_Comm_c2f(dup)), dup);
    assert_int_not_equal(MPI_Comm_c2f(dup), MPI_Comm_c2f(MPI_COMM_WORLD));
    assert_ptr_equal(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)), MPI_COMM_SELF);
    MPI_Comm_group(dup, &group);
    assert_ptr_equal(MPI_Group_f2c(MPI_Group_c2f(group)), group);
    assert_ptr_equal(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)), MPI_GROUP_EMPTY);
    MPI_Info_create(&info);
    assert_ptr_equal(MPI_Info_f2c(MPI_Info_c2f(info)), info);
    assert_ptr_equal(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_ENV)), MPI_INFO_ENV);
    assert_ptr_equal(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)), MPI_SUM);
    assert_ptr_equal(MPI_Op_f2c(MPI_Op_c2f(MPI_MAXLOC)), MPI_MAXLOC);
    assert_int_not_equal(MPI_Op_c2f(MPI_SUM), MPI_Op_c2f(MPI_MAXLOC));
    MPI_Comm_get_errhandler(dup, &handler);
    assert_ptr_equal(MPI_Errhandler_f2c(MPI_Errhandler_c2f(handler)), handler);
    assert_ptr_equal(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)), MPI_ERRORS_RETURN);
    assert_ptr_equal(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)), MPI_MESSAGE_NO_PROC);

    /* A request through its number: completed through the converted handle. */
    MPI_Irecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &request);
    MPI_Request back = MPI_Request_f2c(MPI_Request_c2f(request));
    assert_ptr_equal(back, request);
    assert_int_equal(MPI_Wait(&back, MPI_STATUS_IGNORE), MPI_SUCCESS);

    MPI_Errhandler_free(&handler);
    MPI_Info_free(&info);
    MPI_Group_free(&group);
    MPI_Comm_free(&dup);
}

/* Many handles: the table grows and every number still converts back. */
static void test_many_handles(void **state)
{
    enum { N = 500 };
    MPI_Datatype *types = malloc(N * sizeof(*types));
    MPI_Fint *numbers = malloc(N * sizeof(*numbers));

    (void)state;
    for (int i = 0; i < N; i++) {
        MPI_Type_contiguous(i + 1, MPI_CHAR, &types[i]);
        numbers[i] = MPI_Type_c2f(types[i]);
    }
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(MPI_Type_f2c(numbers[i]), types[i]);
        assert_int_equal(MPI_Type_c2f(types[i]), numbers[i]);
        MPI_Type_free(&types[i]);
    }
    free(types);
    free(numbers);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_many_handles),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
