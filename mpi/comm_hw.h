/*
 * comm_hw.h: the hardware resources MPI_Comm_split_type knows (comm_hw.c, through hwloc),
 * from the largest to the smallest; the node ("mpi_shared_memory") comes before them all
 * and is the job facts' (comm_split.c).
 */
#ifndef CRMPI_COMM_HW_H
#define CRMPI_COMM_HW_H

#define CRMPI_COMM_HW_LEVELS 7

/* hwloc's names of the levels: the values of the info key mpi_hw_resource_type. */
extern const char *const crmpi_comm_hw_level_names[CRMPI_COMM_HW_LEVELS];

/**
 * For each level, the logical index of the object that holds every CPU this process is
 * bound to, or -1 when none does (the binding spans several, or the machine has no such
 * level). @return 0, or -1 when hwloc could not tell (every entry -1)
 */
int crmpi_comm_hw_objects(int objects[CRMPI_COMM_HW_LEVELS]);

#endif /* CRMPI_COMM_HW_H */
