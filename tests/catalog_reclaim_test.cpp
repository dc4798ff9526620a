// Replaced catalogs are freed by free_replaced_catalogs() once no CatalogUse is alive
// (catalog.h): the job_submit plugin reloads for slurmctld's lifetime without growing.
#include <malloc.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "trainfit/catalog.h"

namespace trainfit {
namespace {

CatalogSet site_catalog(int i) {
  return merge_catalogs({{"a.json", R"({"gpus": [{"name": "a40", "capacity_bytes": )" + std::to_string(48305799168 + i) + "}]}"}},
                        {});
}

size_t heap_in_use() { return mallinfo2().uordblks; }

// Under ASan/TSan malloc is the sanitizer's, which mallinfo2 does not see: the heap is measured
// in the plain build only (the catalogs kept are counted in every build).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMallinfoSeesTheHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kMallinfoSeesTheHeap = false;
#else
constexpr bool kMallinfoSeesTheHeap = true;
#endif
#else
constexpr bool kMallinfoSeesTheHeap = true;
#endif

TEST(CatalogReclaim, ReloadsDoNotGrowTheHeap) {
  constexpr int kReloads = 200;
  // One catalog's footprint, measured: what each reload kept before they were freed.
  const CatalogSet first = site_catalog(0);
  ASSERT_TRUE(first.problems.empty());
  const size_t before_one = heap_in_use();
  ASSERT_TRUE(install_catalogs(first));
  const size_t one_catalog = heap_in_use() - before_one;
  if (kMallinfoSeesTheHeap) EXPECT_GT(one_catalog, 10u * 1024) << "a catalog with its indexes is tens of KB";
  std::printf("one catalog with its indexes: %zu bytes (what each reload kept before)\n", one_catalog);
  free_replaced_catalogs();

  const size_t before = heap_in_use();
  for (int i = 1; i <= kReloads; ++i) {
    const CatalogSet set = site_catalog(i);
    ASSERT_TRUE(install_catalogs(set));
    EXPECT_EQ(free_replaced_catalogs(), 1u);  // only the catalog in use is left
  }
  const size_t after = heap_in_use();
  if (kMallinfoSeesTheHeap) EXPECT_LT(after, before + 4 * one_catalog) << "grew by " << (after - before) << " bytes over " << kReloads << " reloads";
  EXPECT_EQ(gpu_in_catalog("a40")->capacity_bytes, 48305799168.0 + kReloads);
  install_builtin_catalogs();
  EXPECT_EQ(free_replaced_catalogs(), 0u);
}

TEST(CatalogReclaim, AnEntryInUseIsNotFreed) {
  ASSERT_TRUE(install_catalogs(site_catalog(1)));
  free_replaced_catalogs();
  {
    const CatalogUse use;  // a decision in progress
    const GpuSpec* held = gpu_in_catalog("a40");
    ASSERT_NE(held, nullptr);
    ASSERT_TRUE(install_catalogs(site_catalog(2)));
    EXPECT_EQ(free_replaced_catalogs(), 2u) << "a catalog a reader may hold was freed";
    EXPECT_EQ(held->capacity_bytes, 48305799169.0);  // still readable (ASan would say otherwise)
  }
  EXPECT_EQ(free_replaced_catalogs(), 1u);
  EXPECT_EQ(gpu_in_catalog("a40")->capacity_bytes, 48305799170.0);
  install_builtin_catalogs();
  free_replaced_catalogs();
}

}  // namespace
}  // namespace trainfit
