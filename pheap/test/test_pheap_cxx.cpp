/*
 * test_pheap_cxx.cpp: STL containers in the persistent heap (crmpi/pheap_allocator.hpp),
 * built in one process and restored in a new one.
 *
 * This program runs itself: "test_pheap_cxx --make DIR" fills a std::vector (a PERM
 * global) and a std::map of strings (in the heap, through PERM_NEW) and backs them up; the
 * test then restores them in its own process, which never saw them, checks every element,
 * changes them through the allocator (reallocating and freeing blocks of the other
 * process), and restores again.
 */
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>

/* cmocka 1.1's header declares its functions without C linkage for C++. */
extern "C" {
#include <cmocka.h>
}

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <crmpi/pheap.h>
#include <crmpi/pheap_allocator.hpp>

#include "pheap_test_util.h"

typedef std::vector<long, PERM_NS::allocator<long>> pvector;
typedef std::basic_string<char, std::char_traits<char>, PERM_NS::allocator<char>> pstring;
typedef std::map<int, pstring, std::less<int>, PERM_NS::allocator<std::pair<const int, pstring>>>
    pmap;

/* A vector is only pointers into the heap: it may be a PERM global itself. */
PERM pvector numbers;
/* A map points into its own object (libstdc++'s header node): it lives in the heap. */
PERM pmap *table;

/* Elements the maker puts in each container. */
static const long test_numbers = 100000;
static const int test_entries = 2000;

/* The string stored under `key`: long enough not to fit in the string object itself. */
static std::string test_text(int key)
{
    return "entry " + std::to_string(key) + " of the persistent map, in the heap";
}

/* "--make DIR": build the containers, back them up, exit. */
static int test_make(const char *dir)
{
    char heap[PATH_MAX], back[PATH_MAX];

    if (perm(PERM_START, PERM_SIZE) != 0 ||
        mopen(test_path(heap, sizeof(heap), dir, "cxx.mmap"), "w+", 4 << 20) != 0 ||
        bopen(test_path(back, sizeof(back), dir, "cxx.back"), "w+") != 0)
        return 1;
    for (long i = 0; i < test_numbers; i++)
        numbers.push_back(i * 3);
    table = PERM_NEW(pmap);
    for (int k = 0; k < test_entries; k++)
        (*table)[k] = test_text(k).c_str();
    if (backup() != 0)
        return 2;
    bclose();
    mclose();
    return 0;
}

static void test_check(long count, int entries)
{
    assert_int_equal(numbers.size(), count);
    for (long i = 0; i < count; i++)
        assert_int_equal(numbers[i], i * 3);
    assert_non_null(table);
    assert_int_equal(table->size(), entries);
    int k = 0;
    for (const auto &kv : *table) {
        assert_int_equal(kv.first, k);
        assert_string_equal(kv.second.c_str(), test_text(k).c_str());
        k++;
    }
}

static void test_stl_new_process(void **state)
{
    char *dir = test_dir_make();
    char self[PATH_MAX + 32], heap[PATH_MAX], back[PATH_MAX];
    char *argv[] = {self, const_cast<char *>("--make"), dir, nullptr};

    snprintf(self, sizeof(self), "%s/test_pheap_cxx", test_program_dir());
    assert_int_equal(test_run(argv), 0);

    assert_int_equal(perm(PERM_START, PERM_SIZE), 0);
    assert_true(numbers.empty());
    assert_null(table);
    assert_int_equal(mopen(test_path(heap, sizeof(heap), dir, "cxx.mmap"), "r+", 0), 0);
    assert_int_equal(bopen(test_path(back, sizeof(back), dir, "cxx.back"), "r+"), 0);
    assert_int_equal(restore(), 0);
    test_check(test_numbers, test_entries);

    /* Change both through the allocator: the vector reallocates the other process's block,
     * the map frees its nodes and strings. */
    for (long i = test_numbers; i < 3 * test_numbers; i++)
        numbers.push_back(i * 3);
    for (int k = test_entries / 2; k < test_entries; k++)
        table->erase(k);
    test_check(3 * test_numbers, test_entries / 2);
    assert_int_equal(backup(), 0);

    numbers.clear();
    numbers.shrink_to_fit();
    PERM_DELETE(table, pmap);
    table = nullptr;
    assert_int_equal(restore(), 0);
    test_check(3 * test_numbers, test_entries / 2);

    /* Over-aligned elements get their alignment. */
    struct alignas(64) wide {
        char bytes[64];
    };
    std::vector<wide, PERM_NS::allocator<wide>> wides(10);
    assert_int_equal(reinterpret_cast<uintptr_t>(wides.data()) % 64, 0);

    assert_int_equal(bclose(), 0);
    assert_int_equal(mclose(), 0);
    test_dir_remove(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--make") == 0)
        return test_make(argv[2]);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stl_new_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
