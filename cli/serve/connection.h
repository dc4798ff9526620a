// The service's connections over Boost.Beast: reading requests within the limits,
// answering through Routes, keep-alive, and a stop that lets busy connections finish.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "access_log.h"
#include "metrics.h"
#include "routes.h"

namespace trainfit::cli {

struct ConnectionLimits {
  std::size_t max_body = 1 << 20;
  std::chrono::seconds timeout{5};       // a whole request from its first byte; writing a response
  std::chrono::seconds idle_timeout{5};  // waiting for a keep-alive connection's next request
};

// The request line and headers together, at most (larger: 431).
constexpr std::size_t kMaxHead = 16 * 1024;

class Connection;

// What every connection shares, and the set of open ones (so that a stop reaches them).
class ConnectionHub {
 public:
  ConnectionHub(const Routes& routes, Metrics& metrics, AccessLog& log, ConnectionLimits limits)
      : routes_(routes), metrics_(metrics), log_(log), limits_(limits) {}

  // Serves the socket until either side closes it; the socket's executor must be run by one
  // thread at a time (an EventLoops loop), since its handlers take no lock.
  void serve(boost::asio::ip::tcp::socket socket);
  std::size_t open_count() const;
  // Idle connections close now, busy ones after their current response; none start.
  void stop();
  // Called (from any thread) each time a connection closes.
  void on_closed(std::function<void()> callback) { on_closed_ = std::move(callback); }

 private:
  friend class Connection;
  void closed(const Connection* connection);

  const Routes& routes_;
  Metrics& metrics_;
  AccessLog& log_;
  const ConnectionLimits limits_;
  std::function<void()> on_closed_;
  mutable std::mutex mutex_;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> open_;
  bool stopping_ = false;
};

}  // namespace trainfit::cli
