/*
 * test_crs_pheap.c: component pheap of the crs framework (crs_pheap.c): its checkpoint
 * links (or, across file systems, copies) the rank's backup file into the images
 * directory, says why when it cannot, and its restart and tracking refuse; it is
 * selectable only by name. Needs neither root nor CRIU.
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "component.h"
#include "crmpi_status.h"
#include "crs.h"
#include "param.h"
#include "test_capture.h"

static char *top; /* this test's directory, made anew for each test */

static int setup(void **state)
{
    (void)state;
    top = test_tmp_name("crmpi-test-crs-pheap-XXXXXX");
    assert_non_null(mkdtemp(top));
    return 0;
}

static int teardown(void **state)
{
    char cmd[4200];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
    free(top);
    top = NULL;
    return 0;
}

static void test_checkpoint_copies_the_backup(void **state)
{
    char backup[4200], images[4200], stored[4300], text[64] = "";
    crmpi_crs_ckpt_result_t result = {0};
    FILE *f;

    (void)state;
    snprintf(backup, sizeof(backup), "%s/app.back", top);
    snprintf(images, sizeof(images), "%s/images", top);
    assert_int_equal(mkdir(images, 0700), 0);
    assert_non_null(f = fopen(backup, "w"));
    fputs("a backup", f);
    fclose(f);
    crmpi_crs_ckpt_opts_t opts = {.images_dir = images, .backup_path = backup};
    assert_int_equal(crmpi_crs_pheap_ops.checkpoint(&opts, &result), CRMPI_OK);
    assert_int_equal(result.image_bytes, strlen("a backup"));
    snprintf(stored, sizeof(stored), "%s/backup", images);
    assert_non_null(f = fopen(stored, "r"));
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    assert_string_equal(text, "a backup");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_text(const char *path, const char *want)
{
    char text[64] = "";
    FILE *f = fopen(path, "r");

    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    assert_string_equal(text, want);
}

/* On the backup's file system the images hold the backup under a second name, no copy
 * made; the next backup (a new file renamed over the name, as backup() writes it) leaves
 * the stored one as it was. */
static void test_checkpoint_links_the_backup(void **state)
{
    char backup[4200], partial[4200], images[4200], stored[4300];
    crmpi_crs_ckpt_result_t result = {0};
    struct stat a, b;

    (void)state;
    snprintf(backup, sizeof(backup), "%s/app.back", top);
    snprintf(partial, sizeof(partial), "%s/app.back.partial", top);
    snprintf(images, sizeof(images), "%s/images", top);
    snprintf(stored, sizeof(stored), "%s/backup", images);
    assert_int_equal(mkdir(images, 0700), 0);
    write_text(backup, "backup 1");
    crmpi_crs_ckpt_opts_t opts = {.images_dir = images, .backup_path = backup};
    assert_int_equal(crmpi_crs_pheap_ops.checkpoint(&opts, &result), CRMPI_OK);
    assert_int_equal(result.image_bytes, strlen("backup 1"));
    assert_int_equal(stat(backup, &a), 0);
    assert_int_equal(stat(stored, &b), 0);
    assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);

    write_text(partial, "backup 2");
    assert_int_equal(rename(partial, backup), 0);
    assert_text(stored, "backup 1");
    assert_text(backup, "backup 2");
}

/* Images on another file system than the backup: a copy. */
static void test_checkpoint_copies_across_file_systems(void **state)
{
    char backup[4200], stored[4300];
    crmpi_crs_ckpt_result_t result = {0};
    struct stat top_st, shm_st;

    (void)state;
    if (stat(top, &top_st) != 0 || stat("/dev/shm", &shm_st) != 0 || top_st.st_dev == shm_st.st_dev)
        skip(); /* no second file system to try */
    char *images = strdup("/dev/shm/crmpi-test-crs-pheap-XXXXXX");
    assert_non_null(images);
    assert_non_null(mkdtemp(images));
    snprintf(backup, sizeof(backup), "%s/app.back", top);
    snprintf(stored, sizeof(stored), "%s/backup", images);
    write_text(backup, "a backup");
    crmpi_crs_ckpt_opts_t opts = {.images_dir = images, .backup_path = backup};
    int rc = crmpi_crs_pheap_ops.checkpoint(&opts, &result);
    assert_text(stored, "a backup");
    unlink(stored);
    rmdir(images);
    free(images);
    assert_int_equal(rc, CRMPI_OK);
    assert_int_equal(result.image_bytes, strlen("a backup"));
}

static void test_checkpoint_says_why_not(void **state)
{
    char images[4200], missing[4200], err[512] = "";
    crmpi_crs_ckpt_result_t result = {.image_bytes = 42};

    (void)state;
    snprintf(images, sizeof(images), "%s/images", top);
    snprintf(missing, sizeof(missing), "%s/none.back", top);
    assert_int_equal(mkdir(images, 0700), 0);
    crmpi_crs_ckpt_opts_t opts = {.images_dir = images, .errbuf = err, .errbuf_len = sizeof(err)};
    assert_int_equal(crmpi_crs_pheap_ops.checkpoint(&opts, &result), CRMPI_ERR_NOT_FOUND);
    assert_non_null(strstr(err, "MPIX_Checkpoint"));
    opts.backup_path = missing;
    assert_int_equal(crmpi_crs_pheap_ops.checkpoint(&opts, &result), CRMPI_ERR_IO);
    assert_non_null(strstr(err, "none.back"));
    assert_int_equal(result.image_bytes, 42); /* an error sets no output */
}

static void test_restart_tracking_and_flatten_refuse(void **state)
{
    char err[512] = "";
    crmpi_crs_track_t *track = NULL;
    pid_t init_pid = 0;
    int fds[2];

    (void)state;
    crmpi_crs_restart_opts_t opts = {.images_dir = top, .errbuf = err, .errbuf_len = sizeof(err)};
    assert_int_equal(crmpi_crs_pheap_ops.restart(&opts, &init_pid), CRMPI_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(err, "starts its program again"));
    assert_int_equal(pipe(fds), 0);
    close(fds[1]);
    /* The track owns the descriptor, also on failure: it is closed. */
    assert_int_equal(crmpi_crs_pheap_ops.track_open(getpid(), fds[0], &track),
                     CRMPI_ERR_NOT_SUPPORTED);
    assert_int_equal(fcntl(fds[0], F_GETFD), -1);
    crmpi_crs_pheap_ops.track_close(NULL);
    const char *parents[] = {top, NULL};
    assert_int_equal(crmpi_crs_pheap_ops.flatten(top, parents, top, NULL, err, sizeof(err)),
                     CRMPI_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(err, "has no chain"));
}

static void test_selected_only_by_name(void **state)
{
    const char *reason = NULL;
    int priority = 0;

    (void)state;
    assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("crs", ""), CRMPI_OK);
    assert_int_not_equal(
        crmpi_crs_pheap_component.query(&crmpi_crs_pheap_component, &priority, &reason), CRMPI_OK);
    assert_non_null(strstr(reason, "--mca crs pheap"));
    assert_int_equal(crmpi_param_set_override("crs", "pheap"), CRMPI_OK);
    assert_int_equal(
        crmpi_crs_pheap_component.query(&crmpi_crs_pheap_component, &priority, &reason), CRMPI_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_checkpoint_copies_the_backup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_links_the_backup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_copies_across_file_systems, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_says_why_not, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_tracking_and_flatten_refuse, setup, teardown),
        cmocka_unit_test(test_selected_only_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
