/*
 * fuzz_param_file.c: the MCA parameter file (runtime/param_file.c: "name = value" lines,
 * $CRMPI_PARAM_FILE or ~/.crmpi/mca-params.conf), read through the parameter system: one
 * parameter of each type is declared, read (which loads the file and parses the values),
 * and every name nobody declared is judged (crmpi_param_warn_unknown).
 *
 * Properties: a value the file gives a parameter parses as its type or is refused, and a
 * parsed number printed again parses to the same number.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "fuzz_common.h"
#include "param.h"

static const crmpi_param_decl_t fuzz_param_decls[] = {
    {"fuzz_int", CRMPI_PARAM_INT, "0", "An integer.", CRMPI_PARAM_LEVEL_USER},
    {"fuzz_bool", CRMPI_PARAM_BOOL, "false", "A boolean.", CRMPI_PARAM_LEVEL_USER},
    {"fuzz_string", CRMPI_PARAM_STRING, "", "A string.", CRMPI_PARAM_LEVEL_USER},
    {"fuzz_size", CRMPI_PARAM_SIZE, "0", "A size.", CRMPI_PARAM_LEVEL_USER},
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *path = fuzz_path("mca-params.conf", 0);

    (void)argc, (void)argv;
    /* The file is the only source: no CRMPI_MCA_* variable of the fuzzer's environment. And
     * no other variable either: the readers compare every one with CRMPI_MCA_, and libFuzzer
     * would take their text (this machine's paths) into the inputs it makes. */
    clearenv();
    setenv("CRMPI_PARAM_FILE", path, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char again[64];
    int64_t int_value, int_again;
    uint64_t size_value, size_again;
    bool bool_value;
    const char *text;
    crmpi_param_source_t source;
    const size_t num_decls = sizeof(fuzz_param_decls) / sizeof(fuzz_param_decls[0]);

    fuzz_write_file(fuzz_path("mca-params.conf", 0), data, size);
    fuzz_check(crmpi_param_register(fuzz_param_decls, num_decls) == CRMPI_OK);
    if (crmpi_param_get_int("fuzz_int", &int_value) == CRMPI_OK) {
        snprintf(again, sizeof(again), "%" PRId64, int_value);
        fuzz_check(crmpi_param_parse_int(again, &int_again) == CRMPI_OK && int_again == int_value);
    }
    if (crmpi_param_get_size("fuzz_size", &size_value) == CRMPI_OK) {
        snprintf(again, sizeof(again), "%" PRIu64, size_value);
        fuzz_check(crmpi_param_parse_size(again, &size_again) == CRMPI_OK &&
                   size_again == size_value);
    }
    (void)crmpi_param_get_bool("fuzz_bool", &bool_value);
    fuzz_check(crmpi_param_get_string("fuzz_string", &text) == CRMPI_OK);
    fuzz_check(crmpi_param_lookup("fuzz_string", NULL, &text, &source) == CRMPI_OK);
    fuzz_check(source == CRMPI_PARAM_SOURCE_DEFAULT || source == CRMPI_PARAM_SOURCE_FILE);
    (void)crmpi_param_warn_unknown("fuzz");
    crmpi_param_finalize();
    return 0;
}
