/*
 * log.h: crmpi's logging.
 *
 * Every line goes to stderr as "<who>: <message>", where <who> is set once per process
 * ("mpirun", "crmpi-agent[3]", "rank 3"). Errors and warnings are always printed;
 * verbose output is per framework: crmpi_fw_verbose(&btl_framework, 20, "...") prints
 * only when btl_base_verbose >= 20. Macros test the level before formatting, preserve
 * errno, and are printf-checked.
 *
 * Thread safety: safe from any thread; each line is written with one write(2).
 */
#ifndef CRMPI_LOG_H
#define CRMPI_LOG_H

#include <errno.h>

/** Name this process in every log line; `who` is copied. */
void crmpi_log_set_who(const char *who);
const char *crmpi_log_who(void);

void crmpi_log_emit(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Hold back the error lines of this process from now on, instead of printing them: for a
 * step whose failure ends the job with one line of mpirun's (MPI_Init's BTL setup, where
 * every rank meets the same bad parameter), the first error found becomes that line.
 * Other kinds of lines are printed as usual. Not nested.
 */
void crmpi_log_hold_errors(void);
/**
 * Stop holding. `print`: write the held lines now, as they would have been (the step went
 * on); otherwise drop them. Returns the first held error's message (without "<who>:
 * error: "), valid until the next crmpi_log_hold_errors, or NULL when none was held.
 */
const char *crmpi_log_release_errors(int print);

#define crmpi_log_error(...)                                                                       \
    do {                                                                                           \
        int crmpi_log_saved_errno_ = errno;                                                        \
        crmpi_log_emit("error", __VA_ARGS__);                                                      \
        errno = crmpi_log_saved_errno_;                                                            \
    } while (0)

#define crmpi_log_warn(...)                                                                        \
    do {                                                                                           \
        int crmpi_log_saved_errno_ = errno;                                                        \
        crmpi_log_emit("warning", __VA_ARGS__);                                                    \
        errno = crmpi_log_saved_errno_;                                                            \
    } while (0)

/** Unconditional informational line (no "kind" prefix). */
#define crmpi_log_info(...)                                                                        \
    do {                                                                                           \
        int crmpi_log_saved_errno_ = errno;                                                        \
        crmpi_log_emit(NULL, __VA_ARGS__);                                                         \
        errno = crmpi_log_saved_errno_;                                                            \
    } while (0)

/** Verbose output of framework `fw` (a crmpi_framework_t *), shown at `level` and above. */
#define crmpi_fw_verbose(fw, level, ...)                                                           \
    do {                                                                                           \
        if ((fw)->verbose >= (level)) {                                                            \
            int crmpi_log_saved_errno_ = errno;                                                    \
            crmpi_log_emit((fw)->info->name, __VA_ARGS__);                                         \
            errno = crmpi_log_saved_errno_;                                                        \
        }                                                                                          \
    } while (0)

#endif /* CRMPI_LOG_H */
