/*
 * crs_criu_breakpoints.c: whether CRIU may stop a task with a hardware breakpoint.
 *
 * When CRIU's parasite (dump) or restorer (restore) is done with a task, CRIU lets the task
 * run its rt_sigreturn and stops it right after: on x86 with a hardware breakpoint (debug
 * register DR0, set through PTRACE_POKEUSER) at the return address, elsewhere by stopping at
 * the syscall's exit (PTRACE_SYSCALL). Some virtual machines accept writes to the debug
 * registers and never raise the breakpoint: the task runs on, CRIU waits for a trap that
 * never comes, and the dump or the restore hangs (seen on a Firecracker guest; CRIU's log
 * ends at the parasite's "new_sp=... ip ..." line).
 *
 * CRIU has no option for this, only its fault-injection code FI_NO_BREAKPOINTS (130, read
 * from the variable CRIU_FAULT), which makes it take the PTRACE_SYSCALL path it uses on
 * every other architecture. So before the first dump or restore this process runs, the
 * component finds out whether a breakpoint fires here (a child stops itself, gets DR0 on a
 * function it then calls, and either traps or exits), and when it does not, puts
 * CRIU_FAULT=130 into the environment libcriu's criu inherits. Parameter
 * crs_criu_breakpoints: auto (probe), yes (use them), no (never).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "log.h"
#include "param.h"

/* CRIU's fault-injection code that turns hardware breakpoints off (criu/include/
 * fault-injection.h, FI_NO_BREAKPOINTS), and the variable it reads it from. */
#define CRS_CRIU_FAULT_VAR            "CRIU_FAULT"
#define CRS_CRIU_FAULT_NO_BREAKPOINTS "130"

/* The function the probe's breakpoint is set on; noinline and with a side effect, so that
 * the child really calls it at this address. */
static volatile int crs_criu_probe_calls;
__attribute__((noinline)) static void crs_criu_probe_target(void)
{
    crs_criu_probe_calls++;
}

int crs_criu_breakpoints_fire(void)
{
#if defined(__x86_64__)
    int status;
    pid_t child = fork();

    if (child < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (child == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
            _exit(2);
        raise(SIGSTOP);
        crs_criu_probe_target();
        _exit(0);
    }
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) {
        /* PTRACE_TRACEME refused (a seccomp or LSM policy) and the child exited: CRIU could
         * not trace either, so the answer does not matter; CRIU's own default. */
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        return 1;
    }
    int fired = 0;
    if (ptrace(PTRACE_POKEUSER, child, offsetof(struct user, u_debugreg[0]),
               (void *)crs_criu_probe_target) == 0 &&
        ptrace(PTRACE_POKEUSER, child, offsetof(struct user, u_debugreg[7]), (void *)1L) == 0 &&
        ptrace(PTRACE_CONT, child, NULL, NULL) == 0 && waitpid(child, &status, 0) == child)
        fired = WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
    /* Stopped at the breakpoint, or already exited: either way it goes now. */
    kill(child, SIGKILL);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return fired;
#else
    /* CRIU uses hardware breakpoints on x86 only. */
    return 1;
#endif
}

void crs_criu_breakpoints_setup(void)
{
    static int decided;
    const char *mode = NULL;
    int fire;

    if (decided)
        return;
    decided = 1;
    if (getenv(CRS_CRIU_FAULT_VAR)) /* whoever set CRIU's faults knows best */
        return;
    if (crmpi_param_get_string("crs_criu_breakpoints", &mode) != CRMPI_OK || !mode)
        mode = "auto";
    if (strcmp(mode, "yes") == 0)
        return;
    if (strcmp(mode, "no") == 0) {
        fire = 0;
    } else {
        if (strcmp(mode, "auto") != 0)
            crmpi_log_warn("crs:criu: crs_criu_breakpoints is '%s', not auto, yes or no; "
                           "taken as auto",
                           mode);
        fire = crs_criu_breakpoints_fire();
        crmpi_fw_verbose(&crmpi_crs_framework, 10, "crs:criu: hardware breakpoints %s here",
                         fire == 1 ? "fire" : "do not fire: CRIU stops tasks at syscalls");
    }
    if (fire == 0)
        setenv(CRS_CRIU_FAULT_VAR, CRS_CRIU_FAULT_NO_BREAKPOINTS, 0);
}
