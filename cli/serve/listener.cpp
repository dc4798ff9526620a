#include "listener.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/address.hpp>

namespace trainfit::cli {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

Listener::Listener(EventLoops& loops, ConnectionHub& hub, std::size_t max_connections)
    : loops_(loops), strand_(asio::make_strand(loops.first())), acceptor_(strand_), retry_(strand_), hub_(hub),
      max_connections_(max_connections) {
  hub_.on_closed([this] { resume(); });
}

Result<int> Listener::bind(const std::string& host, int port) {
  boost::system::error_code ec;
  tcp::resolver resolver(loops_.first());
  const auto endpoints = resolver.resolve(host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) return make_error(ErrorCode::kInvalidValue, "listen", ec ? ec.message() : "no address");
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  // SO_REUSEADDR allows a quick restart; no SO_REUSEPORT, which would let a second
  // server bind the same port and silently take half the connections.
  if (acceptor_.open(endpoint.protocol(), ec) || acceptor_.set_option(tcp::acceptor::reuse_address(true), ec) ||
      acceptor_.bind(endpoint, ec) || acceptor_.listen(asio::socket_base::max_listen_connections, ec)) {
    // In use, or not this machine's address: another server may let go of it.
    return make_error(ErrorCode::kUnavailable, "listen", ec.message());
  }
  return static_cast<int>(acceptor_.local_endpoint().port());
}

void Listener::start() { asio::dispatch(strand_, [this] { accept(); }); }

void Listener::stop() {
  asio::dispatch(strand_, [this] {
    stopped_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    retry_.cancel();
  });
}

void Listener::accept() {
  // Each connection on one loop (one thread): its handlers never run at once.
  acceptor_.async_accept(loops_.next(), asio::bind_executor(strand_, [this](const boost::system::error_code& ec,
                                                                                    tcp::socket socket) {
                           on_accept(ec, std::move(socket));
                         }));
}

void Listener::on_accept(const boost::system::error_code& ec, tcp::socket socket) {
  if (stopped_) return;
  if (ec) {
    // EMFILE and the like: wait a little instead of spinning on the error.
    paused_ = true;
    retry_.expires_after(std::chrono::milliseconds(50));
    retry_.async_wait([this](const boost::system::error_code& wait) {
      if (wait || stopped_) return;
      paused_ = false;
      accept();
    });
    return;
  }
  socket.set_option(tcp::no_delay(true));
  hub_.serve(std::move(socket));
  if (hub_.open_count() >= max_connections_) {
    paused_ = true;
    return;
  }
  accept();
}

void Listener::resume() {
  asio::dispatch(strand_, [this] {
    if (!paused_ || stopped_ || retry_.expiry() > asio::steady_timer::clock_type::now()) return;
    if (hub_.open_count() >= max_connections_) return;
    paused_ = false;
    accept();
  });
}

}  // namespace trainfit::cli
