// The service's web page (docs/service.md, "The page"): GET / and its two assets,
// embedded in the binary at build time (cli/serve/page/, cli/serve/page/embed.cmake), and
// POST /v1/config, which maps a dropped config file to request fields with the
// CLI's own readers. Everything else is the estimate API the page calls.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "routes.h"

namespace trainfit::cli {

// One embedded file; the table is generated (page_assets.cpp in the build dir).
struct PageAsset {
  const char* path;          // "/", "/app.js", "/app.css"
  const char* content_type;
  const char* data;
  std::size_t size;
};
extern const PageAsset kPageAssets[];
extern const std::size_t kPageAssetCount;

// The answer for the page's paths; nullopt for any other path.
std::optional<HttpReply> page_reply(const HttpRequest& req);

// The path as a metrics label when it is one of the page's, else nullptr.
const char* page_route_label(std::string_view path);

}  // namespace trainfit::cli
