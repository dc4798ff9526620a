// Accepts connections for the ConnectionHub, at most max_connections open at once: at
// the limit it stops accepting, and clients wait in the kernel's listen backlog.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <string>

#include "connection.h"
#include "loops.h"
#include "trainfit/error.h"

namespace trainfit::cli {

class Listener {
 public:
  // Accepts on loops.first(), and deals connections to the loops in turn.
  Listener(EventLoops& loops, ConnectionHub& hub, std::size_t max_connections);

  // Binds and listens; returns the port (port 0: the one the kernel chose), or an error
  // (field "listen") whose message is the system's.
  Result<int> bind(const std::string& host, int port);
  void start();
  void stop();  // from any thread

 private:
  void accept();
  void on_accept(const boost::system::error_code& ec, boost::asio::ip::tcp::socket socket);
  void resume();  // a connection closed: accept again if paused at the limit

  EventLoops& loops_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  ConnectionHub& hub_;
  const std::size_t max_connections_;
  bool paused_ = false;  // at the limit, or waiting to retry after an accept error
  bool stopped_ = false;
};

}  // namespace trainfit::cli
