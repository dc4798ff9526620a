// The service's request path without a socket: raw bytes through Beast's request parser with
// the limits cli/serve/connection.cpp sets, then, for a complete request, the same HttpRequest
// Connection::answer() builds, handed to Routes::handle (every route: estimate, plot, page,
// catalogs). A throw from handle() is a bug the service would answer 500: abort on it here.
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <exception>

#include "fuzz_text.h"
#include "serve/connection.h"
#include "serve/routes.h"

namespace http = boost::beast::http;
using namespace trainfit::cli;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Metrics metrics;
  static const Routes routes("fuzz", 1 << 20, 5, metrics);  // serve's defaults: 1 MiB, 5 s
  http::request_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  parser.header_limit(kMaxHead);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_done()) return 0;  // answered by routes.malformed() etc., or still reading
  const auto& req = parser.get();
  const std::string_view target = req.target();
  if (target.size() > kMaxTarget) return 0;  // answered 414 before routing
  const size_t mark = target.find('?');
  const HttpRequest request{req.method_string(), target.substr(0, mark), req[http::field::content_type], req.body(),
                            mark == std::string_view::npos ? std::string_view() : target.substr(mark + 1)};
  try {
    const HttpReply reply = routes.handle(request);
    if (reply.status < 200 || reply.status > 599) abort();
  } catch (const std::exception&) {
    abort();
  }
  return 0;
}
