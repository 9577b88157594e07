/*
 * test_component.c: frameworks, selection lists and component selection
 * (runtime/component.h), and the catalog's declarations (runtime/catalog.c).
 *
 * Framework "tst" describes components a, b, c, d and e in that preference order; this
 * binary links a (no query: priority 0), b (priority 30), c (its query fails), e
 * (priority 30, the same as b) and not d, as a build without some library would.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component.h"
#include "crmpi_status.h"
#include "param.h"
#include "test_capture.h"

static const crmpi_param_decl_t tst_base_params[] = {
    {"tst", CRMPI_PARAM_STRING, "", "Selection list of tst.", CRMPI_PARAM_LEVEL_USER},
    {"tst_base_verbose", CRMPI_PARAM_INT, "0", "Verbosity of tst.", CRMPI_PARAM_LEVEL_DEV},
};

static const crmpi_component_info_t tst_a_info = {"tst", "a", "component a", NULL, 0};
static const crmpi_component_info_t tst_b_info = {"tst", "b", "component b", NULL, 0};
static const crmpi_component_info_t tst_c_info = {"tst", "c", "component c", NULL, 0};
static const crmpi_component_info_t tst_d_info = {"tst", "d", "component d", NULL, 0};
static const crmpi_component_info_t tst_e_info = {"tst", "e", "component e", NULL, 0};
static const crmpi_component_info_t *const tst_infos[] = {
    &tst_a_info, &tst_b_info, &tst_c_info, &tst_d_info, &tst_e_info, NULL,
};
static const crmpi_framework_info_t tst_framework_info = {
    .name = "tst", .description = "a framework for tests", .components = tst_infos};

/* How many times each query ran, to check that selection queries each component once. */
static int tst_query_calls;

static int tst_b_query(const crmpi_component_t *component, int *priority_out,
                       const char **reason_out)
{
    tst_query_calls++;
    *priority_out = 30;
    return CRMPI_OK;
}

static int tst_c_query(const crmpi_component_t *component, int *priority_out,
                       const char **reason_out)
{
    tst_query_calls++;
    *reason_out = "no device here";
    return CRMPI_ERR_NOT_SUPPORTED;
}

static int tst_e_query(const crmpi_component_t *component, int *priority_out,
                       const char **reason_out)
{
    tst_query_calls++;
    *priority_out = 30;
    return CRMPI_OK;
}

static const crmpi_component_t tst_a = {.info = &tst_a_info, .query = NULL};
static const crmpi_component_t tst_b = {.info = &tst_b_info, .query = tst_b_query};
static const crmpi_component_t tst_c = {.info = &tst_c_info, .query = tst_c_query};
static const crmpi_component_t tst_e = {.info = &tst_e_info, .query = tst_e_query};
static const crmpi_component_t *const tst_components[] = {&tst_a, &tst_b, &tst_c, &tst_e, NULL};

/* The framework under test; reset by every setup. */
static crmpi_framework_t tst_framework;

static int test_setup(void **state)
{
    crmpi_param_finalize();
    test_env_clear_mca();
    setenv("CRMPI_PARAM_FILE", "", 1);
    assert_int_equal(crmpi_param_register(tst_base_params, 2), CRMPI_OK);
    tst_framework = (crmpi_framework_t){.info = &tst_framework_info, .components = tst_components};
    tst_query_calls = 0;
    return 0;
}

static int test_teardown(void **state)
{
    capture_abandon();
    crmpi_framework_close(&tst_framework);
    crmpi_param_finalize();
    test_env_clear_mca();
    unsetenv("CRMPI_PARAM_FILE");
    return 0;
}

/* Set the selection list and open the framework; expects success and no output. */
static void tst_open_with(const char *list)
{
    char *log;

    assert_int_equal(crmpi_param_set_override("tst", list), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_OK);
    log = capture_end();
    assert_string_equal(log, "");
    free(log);
    assert_true(tst_framework.is_open);
}

static const char *tst_select_one_name(void)
{
    const crmpi_component_t *selected = NULL;

    assert_int_equal(crmpi_framework_select_one(&tst_framework, &selected), CRMPI_OK);
    assert_non_null(selected);
    return selected->info->name;
}

/* The names select_all chose, comma-separated, into `buf`. */
static const char *tst_select_all_names(char *buf, size_t size)
{
    const crmpi_component_t *selected[8];
    size_t count = 99;
    size_t used = 0;

    assert_int_equal(crmpi_framework_select_all(&tst_framework, selected, 8, &count), CRMPI_OK);
    assert_true(count <= 8);
    buf[0] = '\0';
    for (size_t i = 0; i < count; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "," : "",
                                 selected[i]->info->name);
    return buf;
}

/* ---- selection lists ----------------------------------------------------------------- */

static void test_empty_list_allows_all(void **state)
{
    char names[64];

    tst_open_with("");
    assert_true(crmpi_framework_allows(&tst_framework, "a"));
    assert_true(crmpi_framework_allows(&tst_framework, "d"));
    /* Allowed, but nobody asked for them by name. */
    assert_false(crmpi_framework_requested(&tst_framework, "a"));
    /* b and e tie at 30: the earlier in preference order wins. */
    assert_string_equal(tst_select_one_name(), "b");
    assert_int_equal(tst_query_calls, 3);
    /* Best priority first, ties in preference order, c (query failed) left out. */
    assert_string_equal(tst_select_all_names(names, sizeof(names)), "b,e,a");
}

static void test_include_list(void **state)
{
    char names[64];

    tst_open_with(" a , c ");
    assert_true(crmpi_framework_allows(&tst_framework, "a"));
    assert_true(crmpi_framework_allows(&tst_framework, "c"));
    assert_false(crmpi_framework_allows(&tst_framework, "b"));
    assert_true(crmpi_framework_requested(&tst_framework, "a"));
    assert_true(crmpi_framework_requested(&tst_framework, "c"));
    assert_false(crmpi_framework_requested(&tst_framework, "b"));
    /* Priorities still rule among the listed ones; c cannot run. */
    assert_string_equal(tst_select_one_name(), "a");
    /* Components the list leaves out are not even queried. */
    assert_int_equal(tst_query_calls, 1);
    assert_string_equal(tst_select_all_names(names, sizeof(names)), "a");
}

static void test_exclude_list(void **state)
{
    char names[64];

    tst_open_with("^b");
    assert_false(crmpi_framework_allows(&tst_framework, "b"));
    assert_true(crmpi_framework_allows(&tst_framework, "a"));
    /* An exclude list names what it leaves out. */
    assert_false(crmpi_framework_requested(&tst_framework, "a"));
    assert_false(crmpi_framework_requested(&tst_framework, "b"));
    assert_string_equal(tst_select_one_name(), "e");
    assert_string_equal(tst_select_all_names(names, sizeof(names)), "e,a");

    crmpi_framework_close(&tst_framework);
    tst_open_with("^b,e");
    assert_string_equal(tst_select_one_name(), "a");
    assert_string_equal(tst_select_all_names(names, sizeof(names)), "a");
}

static void test_mixed_list_is_an_error(void **state)
{
    char *log;

    assert_int_equal(crmpi_param_set_override("tst", "a,^b"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_false(tst_framework.is_open);
    assert_int_equal(count_lines(log), 1);
    assert_non_null(strstr(log, "tst: selection list 'a,^b' mixes included and excluded"));
    free(log);

    assert_int_equal(crmpi_param_set_override("tst", "^"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_non_null(strstr(log, "names no component"));
    free(log);
}

static void test_unknown_name_warns(void **state)
{
    char *log;

    assert_int_equal(crmpi_param_set_override("tst", "a,zzz"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_OK);
    log = capture_end();
    assert_int_equal(count_lines(log), 1);
    assert_non_null(strstr(log, "warning: tst: unknown component 'zzz' in selection list "
                                "tst='a,zzz' is ignored (known: a, b, c, d, e)"));
    free(log);
    assert_string_equal(tst_select_one_name(), "a");
}

static void test_unknown_excluded_name_is_silent(void **state)
{
    char *log;

    assert_int_equal(crmpi_param_set_override("tst", "^zzz"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_OK);
    log = capture_end();
    assert_int_equal(count_lines(log), 0);
    free(log);
}

/* What a launcher checks before it starts anything: the real catalog's lists. */
static void test_catalog_check_selections(void **state)
{
    char *log;

    crmpi_param_finalize();
    assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);
    assert_int_equal(crmpi_catalog_check_selections(), CRMPI_OK);

    assert_int_equal(crmpi_param_set_override("btl", "self,bogus"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_catalog_check_selections(), CRMPI_ERR_NOT_FOUND);
    log = capture_end();
    assert_int_equal(count_lines(log), 1);
    assert_non_null(strstr(log, "btl: no component 'bogus' here (selection list "
                                "btl='self,bogus'); the btl components are self, sm, "));
    free(log);

    assert_int_equal(crmpi_param_set_override("btl", "^bogus"), CRMPI_OK);
    assert_int_equal(crmpi_catalog_check_selections(), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("btl", "self,^sm"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_catalog_check_selections(), CRMPI_ERR_BAD_PARAM);
    free(capture_end());
    assert_int_equal(crmpi_param_set_override("btl", "self, tcp"), CRMPI_OK);
    assert_int_equal(crmpi_catalog_check_selections(), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("btl", ""), CRMPI_OK);
}

/* ---- failed selection ---------------------------------------------------------------- */

static void test_nothing_selectable_names_every_candidate(void **state)
{
    const crmpi_component_t *selected = &tst_a;
    char *log;

    tst_open_with("c,d");
    capture_begin();
    assert_int_equal(crmpi_framework_select_one(&tst_framework, &selected), CRMPI_ERR_NOT_FOUND);
    log = capture_end();
    /* Not set on failure. */
    assert_ptr_equal(selected, &tst_a);
    /* One line, naming every candidate and why. */
    assert_int_equal(count_lines(log), 1);
    assert_non_null(strstr(log, "error: tst: no component can be selected: "));
    assert_non_null(strstr(log, "a (not listed by tst='c,d')"));
    assert_non_null(strstr(log, "b (not listed by tst='c,d')"));
    assert_non_null(strstr(log, "c (unavailable: no device here)"));
    assert_non_null(strstr(log, "d (not built into this program)"));
    assert_non_null(strstr(log, "e (not listed by tst='c,d')"));
    free(log);
}

static void test_nothing_selectable_all_excluded(void **state)
{
    const crmpi_component_t *selected;
    char names[64];
    char *log;

    tst_open_with("^a,b,e");
    /* select_all reports nothing: zero may be fine, the caller decides. */
    capture_begin();
    assert_string_equal(tst_select_all_names(names, sizeof(names)), "");
    log = capture_end();
    assert_string_equal(log, "");
    free(log);

    capture_begin();
    assert_int_equal(crmpi_framework_select_one(&tst_framework, &selected), CRMPI_ERR_NOT_FOUND);
    log = capture_end();
    assert_non_null(strstr(log, "a (excluded by tst='^a,b,e')"));
    assert_non_null(strstr(log, "c (unavailable: no device here)"));
    /* d is allowed by the list but not linked: the user should learn that it was left out
     * of the build, not wonder why it was not chosen. */
    assert_non_null(strstr(log, "d (not built into this program)"));
    free(log);
}

static void test_select_all_capacity(void **state)
{
    const crmpi_component_t *selected[2] = {NULL, NULL};
    size_t count = 99;
    char *log;

    tst_open_with("");
    capture_begin();
    assert_int_equal(crmpi_framework_select_all(&tst_framework, selected, 2, &count),
                     CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_non_null(strstr(log, "3 components are available but the caller has room for 2"));
    free(log);
    assert_int_equal(count, 99);
    assert_null(selected[0]);
}

/* ---- lifecycle and verbosity --------------------------------------------------------- */

static void test_select_requires_open(void **state)
{
    const crmpi_component_t *selected;
    char *log;

    capture_begin();
    assert_int_equal(crmpi_framework_select_one(&tst_framework, &selected), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_non_null(strstr(log, "before crmpi_framework_open"));
    free(log);
    assert_int_equal(tst_query_calls, 0);
}

static void test_verbose_explains_selection(void **state)
{
    char *log;

    assert_int_equal(crmpi_param_set_override("tst_base_verbose", "10"), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("tst", "^a"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_OK);
    assert_int_equal(tst_framework.verbose, 10);
    assert_string_equal(tst_select_one_name(), "b");
    crmpi_framework_close(&tst_framework);
    log = capture_end();
    assert_false(tst_framework.is_open);
    assert_non_null(strstr(log, ": tst: open (selection list '^a')\n"));
    assert_non_null(strstr(log, ": tst: a not selected: excluded by tst='^a'\n"));
    assert_non_null(strstr(log, ": tst: c not selected: unavailable: no device here\n"));
    assert_non_null(strstr(log, ": tst: e not selected: priority 30 is below b's 30\n"));
    assert_non_null(strstr(log, ": tst: selected b (priority 30)\n"));
    assert_non_null(strstr(log, ": tst: close\n"));
    free(log);
}

static void test_bad_verbose_value_fails_open(void **state)
{
    char *log;

    setenv("CRMPI_MCA_tst_base_verbose", "loud", 1);
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_non_null(strstr(log, "parameter tst_base_verbose: 'loud' from "
                                "CRMPI_MCA_tst_base_verbose is not an integer"));
    free(log);
    assert_false(tst_framework.is_open);
}

static void test_open_without_declared_params(void **state)
{
    char *log;

    crmpi_param_finalize();
    capture_begin();
    assert_int_equal(crmpi_framework_open(&tst_framework), CRMPI_ERR_NOT_FOUND);
    log = capture_end();
    assert_non_null(strstr(log, "crmpi_catalog_register_all() must run first"));
    free(log);
}

/* ---- the catalog --------------------------------------------------------------------- */

static void test_catalog_register_all(void **state)
{
    const crmpi_param_decl_t *decl;
    const char *value;
    bool check;
    int64_t verbose;
    size_t num_frameworks = 0;

    while (crmpi_catalog[num_frameworks])
        num_frameworks++;
    assert_true(num_frameworks >= 1);

    /* Idempotent, and again after a finalize. */
    for (int round = 0; round < 2; round++) {
        crmpi_param_finalize();
        assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);
        assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);

        assert_int_equal(crmpi_param_get_bool("mpi_param_check", &check), CRMPI_OK);
        assert_true(check);
        assert_int_equal(crmpi_param_get_bool("mpi_show_mca_params", &check), CRMPI_OK);
        assert_false(check);
        assert_int_equal(crmpi_param_lookup("runtime_session_dir_base", &decl, &value, NULL),
                         CRMPI_OK);
        assert_string_equal(value, "");
        assert_int_equal(decl->type, CRMPI_PARAM_STRING);

        for (size_t i = 0; crmpi_catalog[i]; i++) {
            const crmpi_framework_info_t *fw = crmpi_catalog[i];
            char name[128];

            assert_int_equal(crmpi_param_lookup(fw->name, &decl, &value, NULL), CRMPI_OK);
            assert_int_equal(decl->type, CRMPI_PARAM_STRING);
            assert_string_equal(value, "");
            assert_non_null(strstr(decl->help, "^a,b"));
            snprintf(name, sizeof(name), "%s_base_verbose", fw->name);
            assert_int_equal(crmpi_param_get_int(name, &verbose), CRMPI_OK);
            assert_int_equal(verbose, 0);
            for (const crmpi_component_info_t *const *c = fw->components; *c; c++) {
                assert_string_equal((*c)->framework, fw->name);
                for (size_t p = 0; p < (*c)->num_params; p++)
                    assert_int_equal(crmpi_param_lookup((*c)->params[p].name, &decl, NULL, NULL),
                                     CRMPI_OK);
            }
        }
    }
    /* The launch framework is in the catalog with its local component. */
    assert_int_equal(crmpi_param_lookup("plm_local_kill_grace", &decl, &value, NULL), CRMPI_OK);
    assert_string_equal(value, "2000");
}

static int test_catalog_check_help(const crmpi_param_decl_t *decl, void *arg)
{
    size_t *count = arg;
    /* crmpi_info prints these: every parameter explains itself and has a valid level. */
    assert_true(strlen(decl->help) > 10);
    assert_true(decl->level >= 1 && decl->level <= 9);
    (*count)++;
    return 0;
}

static void test_catalog_every_param_documented(void **state)
{
    size_t count = 0;

    crmpi_param_finalize();
    assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);
    assert_int_equal(crmpi_param_foreach(test_catalog_check_help, &count), CRMPI_OK);
    assert_true(count >= crmpi_core_num_params + 2);
}

/* A component chosen only by name (crs pheap) is named by an inclusion list only. */
static void test_component_named(void **state)
{
    (void)state;
    assert_true(crmpi_component_named("pheap", "pheap"));
    assert_true(crmpi_component_named("criu,pheap", "pheap"));
    assert_true(crmpi_component_named("pheap,criu", "pheap"));
    assert_false(crmpi_component_named("", "pheap"));
    assert_false(crmpi_component_named(NULL, "pheap"));
    assert_false(crmpi_component_named("^pheap", "pheap"));
    assert_false(crmpi_component_named("pheaps", "pheap"));
    assert_false(crmpi_component_named("xpheap,criu", "pheap"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_component_named),
        cmocka_unit_test_setup_teardown(test_empty_list_allows_all, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_include_list, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_exclude_list, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_mixed_list_is_an_error, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_name_warns, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_excluded_name_is_silent, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_catalog_check_selections, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_selectable_names_every_candidate, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_selectable_all_excluded, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_select_all_capacity, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_select_requires_open, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_verbose_explains_selection, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_bad_verbose_value_fails_open, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_open_without_declared_params, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_catalog_register_all, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_catalog_every_param_documented, test_setup,
                                        test_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
