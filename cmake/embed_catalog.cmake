# Writes OUTPUT (a .cpp) holding the conf/ catalogs as string literals, so the
# library does no file I/O. Run at build time; re-runs when a catalog changes.
file(READ "${MODELS}" models_json)
file(READ "${GPUS}" gpus_json)
file(READ "${RANGES}" ranges_json)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from conf/models.json, conf/gpus.json and conf/likely_range.json by cmake/embed_catalog.cmake.\n"
  "#include \"catalog/catalog_data.h\"\n"
  "namespace trainfit::catalog_data {\n"
  "const char kModelsJson[] = R\"TRAINFIT_JSON(${models_json})TRAINFIT_JSON\";\n"
  "const char kGpusJson[] = R\"TRAINFIT_JSON(${gpus_json})TRAINFIT_JSON\";\n"
  "const char kLikelyRangeJson[] = R\"TRAINFIT_JSON(${ranges_json})TRAINFIT_JSON\";\n"
  "}  // namespace trainfit::catalog_data\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
