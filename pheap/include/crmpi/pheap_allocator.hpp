/*
 * crmpi/pheap_allocator.hpp: C++ support for the persistent heap (crmpi/pheap.h).
 *
 *   PERM std::vector<double, PERM_NS::allocator<double>> coords;  // elements in the heap
 *   typedef std::map<int, int, std::less<int>,
 *                    PERM_NS::allocator<std::pair<const int, int>>> pmap;
 *   PERM pmap *table;                                   // the map itself in the heap too
 *   table = PERM_NEW(pmap);  ...  PERM_DELETE(table, pmap);
 *
 * PERM_NS::allocator<T> is a standard allocator (C++11 allocator requirements) whose
 * memory comes from perm_malloc(); all its instances are equal, so containers may swap
 * and move their storage freely. It throws std::bad_alloc when the heap is full or not
 * open.
 *
 * Where a container may live: a container object holds pointers into the heap, and some
 * containers also hold pointers into the container object itself (std::list's and
 * std::map's sentinel node, std::unordered_map's "before begin" node, in libstdc++). A PERM
 * global is at the same address in every run only when the program is not
 * position-independent or runs without address-space randomisation, so such containers
 * belong in the heap (PERM_NEW, a PERM pointer to them), where addresses never change.
 * std::vector and std::deque hold only pointers into the heap and may be PERM globals.
 *
 * PERM_NEW(type) constructs a `type` in the heap (its default constructor; perm_new<T>()
 * takes constructor arguments); PERM_DELETE(ptr, type) destroys it and frees the memory;
 * PERM_FREE(ptr) frees memory of a type without destructor.
 */
#ifndef CRMPI_PHEAP_ALLOCATOR_HPP
#define CRMPI_PHEAP_ALLOCATOR_HPP

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include <crmpi/pheap.h>

namespace crmpi
{
namespace pheap
{

/* Memory for `count` objects of `size` bytes aligned to `align`; throws std::bad_alloc. */
inline void *allocate_bytes(std::size_t count, std::size_t size, std::size_t align)
{
    if (count > std::numeric_limits<std::size_t>::max() / size)
        throw std::bad_array_new_length();
    void *p = align > 16 ? perm_memalign(align, count * size) : perm_malloc(count * size);
    if (!p)
        throw std::bad_alloc();
    return p;
}

template <class T> class allocator
{
  public:
    typedef T value_type;
    typedef std::size_t size_type;
    typedef std::ptrdiff_t difference_type;
    /* Every instance allocates from the one heap of the process. */
    typedef std::true_type is_always_equal;
    typedef std::true_type propagate_on_container_move_assignment;

    allocator() noexcept
    {
    }
    template <class U> allocator(const allocator<U> &) noexcept
    {
    }

    T *allocate(std::size_t count)
    {
        return static_cast<T *>(allocate_bytes(count, sizeof(T), alignof(T)));
    }
    void deallocate(T *p, std::size_t) noexcept
    {
        perm_free(p);
    }
};

template <class T, class U> bool operator==(const allocator<T> &, const allocator<U> &) noexcept
{
    return true;
}
template <class T, class U> bool operator!=(const allocator<T> &, const allocator<U> &) noexcept
{
    return false;
}

/* A T constructed in the heap from `args`; throws std::bad_alloc (nothing allocated stays). */
template <class T, class... Args> T *perm_new(Args &&...args)
{
    void *p = allocate_bytes(1, sizeof(T), alignof(T));
    try {
        return ::new (p) T(std::forward<Args>(args)...);
    } catch (...) {
        perm_free(p);
        throw;
    }
}

/* Destroy the T at `p` (made by perm_new) and free its memory; NULL does nothing. */
template <class T> void perm_delete(T *p) noexcept
{
    if (p) {
        p->~T();
        perm_free(p);
    }
}

} // namespace pheap
} // namespace crmpi

/* The names of the memory-mapped checkpointing paper's C++ interface. */
#define PERM_NS                crmpi::pheap
#define PERM_NEW(type)         (::crmpi::pheap::perm_new<type>())
#define PERM_DELETE(ptr, type) (::crmpi::pheap::perm_delete<type>(ptr))
#define PERM_FREE(ptr)         (perm_free(ptr))

#endif /* CRMPI_PHEAP_ALLOCATOR_HPP */
