// `trainfit serve`: options, and the server's life: bind, serve, stop on SIGTERM/SIGINT.
#include <pthread.h>
#include <signal.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "serve.h"
#include "serve_access_log.h"
#include "serve_metrics.h"
#include "serve_pool.h"
#include "serve_routes.h"

namespace po = boost::program_options;

namespace trainfit::cli {

namespace {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (printed on stderr)
  std::size_t threads = 64;  // one per open connection (docs/service.md, "Limits")
  std::size_t queue = 256;
  std::string node_name;
  std::string access_log;
  std::size_t max_body = 1 << 20;
  int timeout_s = 5;
  int idle_timeout_s = 5;
};

int fail(const std::string& message) {
  std::cerr << "trainfit: " << message << "\n";
  return 2;
}

std::string host_name() {
  char buffer[256] = {0};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "localhost";
  return buffer;
}

// "HOST:PORT", "[::1]:PORT" or ":PORT"; false if it is none of these.
bool parse_listen(const std::string& text, ServeOptions& o) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  o.port = std::stoi(port);
  if (o.port > 65535) return false;
  o.host = host.empty() ? "0.0.0.0" : host;
  return true;
}

// Returns false (with *exit_code set) when the command is done: --help or bad options.
bool parse_options(int argc, char** argv, ServeOptions& o, int* exit_code) {
  po::options_description visible("options");
  std::string listen = "127.0.0.1:8080";
  visible.add_options()("help,h", "show this help")
      ("listen", po::value(&listen)->value_name("HOST:PORT")->default_value(listen), "address to listen on (port 0: any free port)")
      ("threads", po::value(&o.threads)->default_value(o.threads), "worker threads: connections served at once")
      ("queue", po::value(&o.queue)->default_value(o.queue), "accepted connections waiting for a worker, at most")
      ("node-name", po::value(&o.node_name)->value_name("NAME"), "serving_node in responses (default: the hostname)")
      ("access-log", po::value(&o.access_log)->value_name("FILE"), "access log, JSON lines, appended (default: stderr)")
      ("max-body", po::value(&o.max_body)->default_value(o.max_body), "largest request body in bytes (larger: 413)")
      ("timeout", po::value(&o.timeout_s)->default_value(o.timeout_s), "read and write timeout in seconds")
      ("idle-timeout", po::value(&o.idle_timeout_s)->default_value(o.idle_timeout_s),
       "seconds an idle keep-alive connection is kept");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(visible).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    *exit_code = fail(std::string(e.what()) + "; see 'trainfit serve --help'");
    return false;
  }
  if (vm.count("help")) {
    std::cout << "usage: trainfit serve [options]\n\n" << visible << "\n";
    *exit_code = 0;
    return false;
  }
  const auto invalid = [exit_code](const std::string& message) {
    *exit_code = fail(message);
    return false;
  };
  if (!parse_listen(listen, o)) return invalid("listen='" + listen + "' is not valid; accepted: HOST:PORT");
  if (o.threads < 1 || o.threads > 1024) {
    return invalid("threads=" + std::to_string(o.threads) + " is not valid; accepted: 1..1024");
  }
  if (o.queue < 1) return invalid("queue=0 is not valid; accepted: integer >= 1");
  if (o.timeout_s < 1) return invalid("timeout=" + std::to_string(o.timeout_s) + " is not valid; accepted: integer >= 1");
  if (o.idle_timeout_s < 1) {
    return invalid("idle-timeout=" + std::to_string(o.idle_timeout_s) + " is not valid; accepted: integer >= 1");
  }
  if (o.node_name.empty()) o.node_name = host_name();
  return true;
}

// When the current request's head was read, for its duration (one request per worker
// thread at a time; zero for requests httplib rejects before routing).
thread_local std::chrono::steady_clock::time_point request_start;

// Mirrors httplib's own test (detail::expect_content, is_chunked_transfer_encoding).
bool has_unframed_body(const httplib::Request& req) {
  const bool body_method = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE";
  return body_method && !req.has_header("Content-Length") &&
         strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") != 0;
}

void configure(httplib::Server& server, const ServeOptions& o, const Routes& routes, Metrics& metrics,
               AccessLog& log) {
  server.new_task_queue = [&o] { return new BoundedPool(o.threads, o.queue); };
  server.set_read_timeout(o.timeout_s, 0);
  server.set_write_timeout(o.timeout_s, 0);
  server.set_keep_alive_timeout(o.idle_timeout_s);
  server.set_keep_alive_max_count(100);
  server.set_payload_max_length(o.max_body);
  server.set_tcp_nodelay(true);
  // httplib's default is SO_REUSEPORT, which lets a second server bind the same port and
  // silently take half the connections; SO_REUSEADDR alone still allows a quick restart.
  server.set_socket_options([](socket_t sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });

  server.set_pre_routing_handler([&routes](const httplib::Request& req, httplib::Response& res) {
    request_start = std::chrono::steady_clock::now();
    // A POST with neither Content-Length nor chunked framing has no body (HTTP/1.1), but
    // httplib 0.11 would read until the client closes: answer it now.
    if (has_unframed_body(req)) {
      routes.handle(req, "", res);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // One handler for every method and path: Routes decides 404 and 405 itself. Bodies are
  // read here, not by httplib, which does not limit chunked ones; always whole, so that
  // the connection stays in step for keep-alive.
  const auto with_body = [&routes, max_body = o.max_body](const httplib::Request& req, httplib::Response& res,
                                                          const httplib::ContentReader& read) {
    std::string body;
    bool too_large = false;
    const bool whole = read([&](const char* data, std::size_t size) {
      too_large = body.size() + size > max_body;
      if (!too_large) body.append(data, size);
      return !too_large;
    });
    // httplib sets 413 itself when Content-Length alone is over the limit.
    if (!whole) return routes.body_failed(req, too_large || res.status == 413, body.size(), res);
    routes.handle(req, body, res);
  };
  const auto without_body = [&routes](const httplib::Request& req, httplib::Response& res) {
    routes.handle(req, req.body, res);
  };
  server.Post(".*", with_body).Put(".*", with_body).Patch(".*", with_body).Delete(".*", with_body);
  server.Get(".*", without_body).Options(".*", without_body);
  server.set_error_handler([&routes](const httplib::Request& req, httplib::Response& res) {
    routes.fill_error_body(req, res);
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content(http_error_json("internal", "", "internal error; please report it"), "application/json");
  });
  server.set_logger([&metrics, &log](const httplib::Request& req, const httplib::Response& res) {
    const auto now = std::chrono::steady_clock::now();
    const auto start = request_start == std::chrono::steady_clock::time_point{} ? now : request_start;
    request_start = {};
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - start).count();
    metrics.observe(route_label(req.path), res.status, static_cast<double>(us) / 1e6);
    // No address when httplib rejected the request line before reading it.
    const std::string remote = req.remote_addr.empty() ? "" : req.remote_addr + ":" + std::to_string(req.remote_port);
    log.write({remote, req.method, req.path, res.status, res.body.size(), static_cast<std::int64_t>(us)});
  });
}

sigset_t stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

// Waits for SIGTERM or SIGINT (blocked in every thread, so only this one takes them) and
// stops the server: it stops accepting, and listen_after_bind() returns once the
// requests in flight are answered.
void stop_on_signal(httplib::Server& server, const std::atomic<bool>& finished) {
  const sigset_t signals = stop_signals();
  const timespec tick{0, 100 * 1000 * 1000};
  while (!finished) {
    const int received = sigtimedwait(&signals, nullptr, &tick);
    if (received < 0) continue;  // timeout or EINTR: look at `finished` again
    std::cerr << "trainfit: " << (received == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": stopping; finishing the requests in flight\n";
    // stop() before listen_after_bind() has started would be lost.
    while (!server.is_running() && !finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();
    return;
  }
}

}  // namespace

int run_serve(int argc, char** argv) {
  ServeOptions o;
  int exit_code = 0;
  if (!parse_options(argc, argv, o, &exit_code)) return exit_code;
  std::string error;
  std::unique_ptr<AccessLog> log(AccessLog::open(o.access_log, &error));
  if (!log) return fail(error);

  // Before any thread starts, so that every thread inherits the mask.
  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not death

  Metrics metrics;
  const Routes routes(o.node_name, o.max_body, o.timeout_s, metrics);
  httplib::Server server;
  configure(server, o, routes, metrics, *log);
  const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) {
    return fail("listen='" + o.host + ":" + std::to_string(o.port) + "' cannot be bound: " + std::strerror(errno));
  }
  if (geteuid() == 0) std::cerr << "trainfit: warning: running as root; the service needs no privileges\n";
  std::cerr << "trainfit: serving on " << o.host << ":" << port << " as '" << o.node_name << "' with " << o.threads
            << " threads\n";

  std::atomic<bool> finished{false};
  std::thread stopper(stop_on_signal, std::ref(server), std::cref(finished));
  const bool ok = server.listen_after_bind();
  finished = true;
  stopper.join();
  if (!ok) return fail("the listening socket failed: " + std::string(std::strerror(errno)));
  std::cerr << "trainfit: stopped\n";
  return 0;
}

}  // namespace trainfit::cli
