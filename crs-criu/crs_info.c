/*
 * crs_info.c: catalog descriptors of the crs framework (checkpoint/restart service, run by
 * crmpi-agent) and its components criu and pheap (crs.h). Pure data, linked into every binary so
 * crmpi_info lists the parameters even in a build without libcriu.
 */
#include "config.h"

#include "component.h"

static const crmpi_param_decl_t crs_criu_params[] = {
    {"crs_criu_binary", CRMPI_PARAM_STRING, CRMPI_CRIU_INSTALLED,
     "The criu program libcriu runs (as \"criu swrk\") for every dump and restore; CRIU 4.x. "
     "The default is crmpi's installed copy of the one configure found, which make install "
     "run as root gives CAP_CHECKPOINT_RESTORE so that ordinary users can checkpoint.",
     CRMPI_PARAM_LEVEL_USER},
    {"crs_criu_breakpoints", CRMPI_PARAM_STRING, "auto",
     "Whether CRIU stops tasks with x86 hardware breakpoints: auto (find out once per "
     "process whether they fire here), yes, no. Some virtual machines accept breakpoints and "
     "never raise them, and CRIU then waits forever; with no, CRIU stops tasks at syscalls.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_incremental", CRMPI_PARAM_BOOL, "0",
     "Incremental checkpoints: after a job's first checkpoint, each rank's images hold only "
     "the pages written since the previous one, found with userfaultfd write-protect "
     "(Linux 6.7 or later; elsewhere checkpoints stay full), and a restart reads the chain.",
     CRMPI_PARAM_LEVEL_USER},
    {"crs_criu_incremental_chain", CRMPI_PARAM_INT, "8",
     "With crs_criu_incremental: after this many incremental checkpoints in a row, the next "
     "is still dumped as a delta but stored flattened with its chain into a full image, so "
     "that a restart reads at most this many deltas and older sequences can be removed.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_file_content", CRMPI_PARAM_BOOL, "0",
     "Keep in each checkpoint a copy of every regular file the ranks have open for writing, "
     "taken while they are frozen, and put it back whole at restart, so that a file "
     "rewritten in place since comes back as it was. 0 records only each file's size, and a "
     "restart cuts a file that grew back to it. Copying large output files lengthens the "
     "time the ranks are blocked.",
     CRMPI_PARAM_LEVEL_USER},
    {"crs_criu_affinity", CRMPI_PARAM_BOOL, "1",
     "At restart, give every restored thread its recorded CPU mask (remapped onto the new "
     "binding) before it runs. 0 leaves the threads with the restorer's mask (for "
     "measuring what the restore of affinity buys).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_numa", CRMPI_PARAM_BOOL, "1",
     "At checkpoint, record the NUMA nodes (hwloc logical and OS index) and, per memory area "
     "of the rank, its policy and how many pages sit on each node (from /proc/PID/numa_maps). "
     "0 records none, and restarts of that snapshot leave memory where CRIU puts it.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_numa_pages", CRMPI_PARAM_BOOL, "1",
     "At restart, let CRIU's restorer prefer the node that held most of the rank's pages, "
     "then move every page of an area that was on one node back to that node (or to the "
     "node in the same position of the new binding), before the rank runs. 0 turns it off.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_numa_policy", CRMPI_PARAM_BOOL, "1",
     "At restart, have the restored rank give each memory area the policy it had (mbind: "
     "bind, interleave, preferred...) and each thread its own (set_mempolicy), nodes mapped "
     "onto the new binding. 0 leaves every area with the default policy, as CRIU restores it, "
     "and every thread with the policy of the agent that restored it.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_numa_hugepages", CRMPI_PARAM_BOOL, "1",
     "At restart, have the restored rank turn the ranges that were transparent huge pages at "
     "the checkpoint (recorded with crs_criu_numa) into huge pages again (madvise "
     "MADV_COLLAPSE): CRIU restores memory as small pages, and a memory-bound rank then loses "
     "time to TLB misses. 0 leaves them small, as CRIU restores them.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_numa_signal", CRMPI_PARAM_INT, "0",
     "The signal that makes a restored thread set its own memory policy (only a thread can "
     "set its own; sent only to threads whose policy differs from the recorded one, while the "
     "rank's handler stands in for the application's). 0: SIGRTMAX-1. Change it when the "
     "application uses that signal.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_placement_report", CRMPI_PARAM_BOOL, "0",
     "At restart, print one line per rank of what was done with its placement: its CPUs "
     "before and now, where each recorded NUMA node went, pages moved back, areas and threads "
     "given their memory policy, ranges made huge pages again. ompi-restart --info sets it.",
     CRMPI_PARAM_LEVEL_USER},
    {"crs_criu_topology", CRMPI_PARAM_STRING, "",
     "The hwloc topology NUMA nodes are recorded in and mapped onto, instead of this "
     "machine's: an XML file (lstopo's export), or synthetic:DESCRIPTION (\"synthetic:numa:2 "
     "core:2 pu:1\"). For tests and for trying a mapping; empty: this machine.",
     CRMPI_PARAM_LEVEL_DEV},
};

const crmpi_component_info_t crmpi_crs_criu_info = {
    .framework = "crs",
    .name = "criu",
    .description = "dump and restore a rank's pid namespace with CRIU (libcriu)",
    .params = crs_criu_params,
    .num_params = sizeof(crs_criu_params) / sizeof(crs_criu_params[0]),
};

const crmpi_component_info_t crmpi_crs_pheap_info = {
    .framework = "crs",
    .name = "pheap",
    .description = "application checkpoints only: each rank's persistent heap backup, taken "
                   "at its next MPIX_Checkpoint (chosen only by name: --mca crs pheap)",
};

static const crmpi_component_info_t *const crs_components[] = {&crmpi_crs_criu_info,
                                                               &crmpi_crs_pheap_info, NULL};

const crmpi_framework_info_t crmpi_crs_framework_info = {
    .name = "crs",
    .description = "checkpoint/restart service: saves and restores one rank's processes",
    .components = crs_components,
};
