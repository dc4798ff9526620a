// Site catalog files (gpus.d/*.json, models.d/*.json): merge_catalogs is what
// read_catalog_dir hands each file's text to. The input is tried as a GPU file and as a
// model file; installing is left out (an installed catalog is never freed, by design).
#include "fuzz_text.h"
#include "trainfit/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit;
  const CatalogText file{"site.json", fuzz::text_of(data, size)};
  (void)merge_catalogs({file}, {});
  (void)merge_catalogs({}, {file});
  return 0;
}
