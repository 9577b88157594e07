/*
 * param_parse.c: the syntax of parameter values (param.h): integers (decimal, or hex after
 * 0x), sizes (a byte count with an optional k, m or g suffix) and booleans. Pure
 * functions, shared by every reader of parameters and by the tools' own options.
 */
#include "config.h"

#include "param_int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

/* Parse an unsigned number at `text` (decimal, or hex after 0x) into *value_out; *end_out is
 * where parsing stopped. The text must start with a digit: no blank, no sign. */
static int param_parse_unsigned(const char *text, uint64_t *value_out, const char **end_out)
{
    int base = 10;
    unsigned long long value;
    char *end;

    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text += 2;
    }
    /* strtoull itself would accept blanks and a sign here; "-1" would wrap to 2^64-1. */
    if (base == 16 ? !isxdigit((unsigned char)*text) : !isdigit((unsigned char)*text))
        return CRMPI_ERR_BAD_PARAM;
    errno = 0;
    value = strtoull(text, &end, base);
    if (errno == ERANGE)
        return CRMPI_ERR_BAD_PARAM;
    *value_out = value;
    *end_out = end;
    return CRMPI_OK;
}

int crmpi_param_parse_int(const char *text, int64_t *value_out)
{
    bool negative = false;
    uint64_t magnitude;
    const char *end;

    if (!text)
        return CRMPI_ERR_BAD_PARAM;
    text = param_skip_space(text);
    if (*text == '+' || *text == '-') {
        negative = *text == '-';
        text++;
    }
    if (param_parse_unsigned(text, &magnitude, &end) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    if (*param_skip_space(end) != '\0')
        return CRMPI_ERR_BAD_PARAM;
    if (negative) {
        if (magnitude > (uint64_t)INT64_MAX + 1)
            return CRMPI_ERR_BAD_PARAM;
        /* -(2^63) has no positive counterpart in int64_t; negate in unsigned arithmetic. */
        *value_out = (int64_t)(0 - magnitude);
    } else {
        if (magnitude > (uint64_t)INT64_MAX)
            return CRMPI_ERR_BAD_PARAM;
        *value_out = (int64_t)magnitude;
    }
    return CRMPI_OK;
}

int crmpi_param_parse_size(const char *text, uint64_t *value_out)
{
    uint64_t count;
    unsigned shift = 0;
    const char *end;

    if (!text)
        return CRMPI_ERR_BAD_PARAM;
    text = param_skip_space(text);
    if (param_parse_unsigned(text, &count, &end) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    }
    if (*param_skip_space(end) != '\0')
        return CRMPI_ERR_BAD_PARAM;
    if (count > (UINT64_MAX >> shift))
        return CRMPI_ERR_BAD_PARAM;
    *value_out = count << shift;
    return CRMPI_OK;
}

int crmpi_param_parse_bool(const char *text, bool *value_out)
{
    static const char *const true_words[] = {"1", "true", "yes", "on"};
    static const char *const false_words[] = {"0", "false", "no", "off"};
    size_t len;

    if (!text)
        return CRMPI_ERR_BAD_PARAM;
    text = param_skip_space(text);
    len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    for (size_t i = 0; i < sizeof(true_words) / sizeof(true_words[0]); i++) {
        if (strlen(true_words[i]) == len && strncasecmp(text, true_words[i], len) == 0) {
            *value_out = true;
            return CRMPI_OK;
        }
        if (strlen(false_words[i]) == len && strncasecmp(text, false_words[i], len) == 0) {
            *value_out = false;
            return CRMPI_OK;
        }
    }
    return CRMPI_ERR_BAD_PARAM;
}
