/*
 * test_fs.c: crmpi_mkdirs (runtime/fs.h): the missing directories made, those that exist
 * left alone, the last component only when asked, and a failure said.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "fs.h"

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_mkdirs(void **state)
{
    char top[] = "/tmp/test_fs.XXXXXX", path[128], parent[128], cmd[160];

    (void)state;
    assert_non_null(mkdtemp(top));
    snprintf(path, sizeof(path), "%s/a/b/c", top);
    assert_int_equal(crmpi_mkdirs(path, false), CRMPI_OK);
    snprintf(parent, sizeof(parent), "%s/a/b", top);
    assert_true(is_dir(parent));
    assert_false(is_dir(path)); /* the last component: a file's name */
    assert_int_equal(crmpi_mkdirs(path, true), CRMPI_OK);
    assert_true(is_dir(path));
    assert_int_equal(crmpi_mkdirs(path, true), CRMPI_OK); /* all there: nothing to do */

    /* Under a regular file: no directory can be made there. */
    snprintf(path, sizeof(path), "%s/file", top);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/file/x/y", top);
    errno = 0;
    assert_int_equal(crmpi_mkdirs(path, true), CRMPI_ERR_IO);
    assert_int_equal(errno, ENOTDIR);

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdirs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
