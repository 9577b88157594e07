/*
 * uffd_wp.h: the kernel interfaces of dirty-page tracking (Linux 6.7), for C libraries whose
 * headers predate them: userfaultfd's asynchronous write-protect features and the
 * PAGEMAP_SCAN ioctl of /proc/<pid>/pagemap. The rank creates the userfaultfd (rte.c), its
 * agent tracks through it (crs-criu/crs_criu_track.c). Values are the kernel's ABI.
 */
#ifndef CRMPI_UFFD_WP_H
#define CRMPI_UFFD_WP_H

#include <linux/userfaultfd.h>
#include <stdint.h>
#include <sys/ioctl.h>

#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13) /* protect pages not yet touched, too */
#define UFFD_FEATURE_WP_ASYNC       (1 << 15) /* a write unprotects, no fault reported */
#endif

#ifndef PAGEMAP_SCAN
struct page_region {
    uint64_t start, end, categories;
};
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN        _IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING (1 << 0) /* protect again the pages reported */
#define PAGE_IS_WRITTEN     (1 << 1) /* written since it was last protected */
#define PAGE_IS_PRESENT     (1 << 3) /* in memory */
#define PAGE_IS_SWAPPED     (1 << 4) /* in swap */
#define PAGE_IS_HUGE        (1 << 6) /* a transparent huge page, or a hugetlbfs one */
#endif

#endif /* CRMPI_UFFD_WP_H */
