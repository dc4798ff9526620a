// `trainfit serve`: options, and the server's life: bind, serve, reload the site catalogs
// on SIGHUP, stop on SIGTERM/SIGINT.
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "access_log.h"
#include "command_options.h"
#include "connection.h"
#include "listener.h"
#include "loops.h"
#include "metrics.h"
#include "routes.h"
#include "serve.h"
#include "site_catalog.h"

namespace po = boost::program_options;

namespace trainfit::cli {

namespace {

// One fewer than the cores this process may run on (its affinity mask: taskset, a cgroup
// cpuset), at least one. The core left over takes the kernel's network work and whatever
// shares the machine (a load balancer, the clients): on 2 cores shared with wrk, one thread
// answered 21,800-23,400 requests/s with p99 3.0-3.5 ms and two 28,700-29,500 with p99
// 5.5-5.9 ms (README, Speed): each thread is a queue that waits whenever it is off its core.
std::size_t default_threads() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus)
                                                                  : static_cast<int>(std::thread::hardware_concurrency());
  return static_cast<std::size_t>(std::max(1, cores - 1));
}

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (printed on stderr)
  std::size_t threads = default_threads();  // I/O threads, each serving many connections
  std::size_t max_connections = 512;
  std::string user = "nobody";  // who the service runs as when started as root
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
  po::options_description visible = trainfit::cli::help_group("options");
  std::string listen = "127.0.0.1:8080";
  visible.add_options()("help,h", "show this help")
      ("listen", po::value(&listen)->value_name("HOST:PORT")->default_value(listen), "address to listen on (port 0: any free port)")
      ("threads", po::value(&o.threads)->default_value(o.threads), "threads serving connections (default: one fewer than the cores, at least 1)")
      ("max-connections", po::value(&o.max_connections)->default_value(o.max_connections),
       "open connections at most; more wait in the kernel's listen backlog")
      ("user", po::value(&o.user)->value_name("NAME")->default_value(o.user),
       "when started as root: the user to run as, after binding")
      ("node-name", po::value(&o.node_name)->value_name("NAME"), "serving_node in responses (default: the hostname)")
      ("access-log", po::value(&o.access_log)->value_name("FILE"), "access log, JSON lines, appended (default: stderr)")
      ("max-body", po::value(&o.max_body)->default_value(o.max_body), "largest request body in bytes (larger: 413)")
      ("timeout", po::value(&o.timeout_s)->default_value(o.timeout_s), "read and write timeout in seconds")
      ("idle-timeout", po::value(&o.idle_timeout_s)->default_value(o.idle_timeout_s),
       "seconds an idle keep-alive connection is kept");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(visible).run();
    if (const std::string word = first_positional(parsed); !word.empty()) {
      *exit_code = fail(unexpected_argument("serve", word));
      return false;
    }
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    *exit_code = fail(std::string(e.what()) + "; see 'trainfit serve --help'");
    return false;
  }
  if (vm.count("help")) {
    std::cout << "usage: trainfit serve [options]\n\n" << trainfit::cli::help_text(visible)
              << "\nSignals: SIGHUP reads the site catalogs (--catalog-dir) again; SIGTERM or SIGINT stops\n"
                 "after the requests in flight.\n";
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
  if (o.max_connections < 1 || o.max_connections > 100000) {
    return invalid("max-connections=" + std::to_string(o.max_connections) + " is not valid; accepted: 1..100000");
  }
  if (o.timeout_s < 1) return invalid("timeout=" + std::to_string(o.timeout_s) + " is not valid; accepted: integer >= 1");
  if (o.idle_timeout_s < 1) {
    return invalid("idle-timeout=" + std::to_string(o.idle_timeout_s) + " is not valid; accepted: integer >= 1");
  }
  if (o.node_name.empty()) o.node_name = host_name();
  return true;
}

// Started as root: become `user` (its groups too), so that a bug in request handling
// cannot act with privileges. The socket and the access log are already open.
Result<bool> drop_privileges(const std::string& user) {
  if (geteuid() != 0) return true;
  const passwd* pw = getpwnam(user.c_str());
  if (pw == nullptr) {
    return make_error(ErrorCode::kInvalidValue, "user",
                      "user='" + user + "' is not a user on this machine; accepted: an existing unprivileged user");
  }
  if (pw->pw_uid == 0) return make_error(ErrorCode::kInvalidValue, "user", "user='" + user + "' is root; accepted: an unprivileged user");
  if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
    // setuid's EAGAIN: the user is at its process limit (RLIMIT_NPROC) for now.
    return make_error(ErrorCode::kUnavailable, "user", "cannot become user '" + user + "': " + std::strerror(errno));
  }
  return true;
}

std::string current_user() {
  const passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : std::to_string(geteuid());
}

// The SIGHUP reload's worker: the catalog files are read off the event loops, so that no
// request waits for them (with one loop thread, every request would).
struct Reloader {
  std::thread worker;
  std::atomic<bool> busy{false};
  ~Reloader() {
    if (worker.joinable()) worker.join();
  }
};

// SIGHUP: the access log opened again (logrotate renamed it) and the site catalogs read
// again, as at start (docs/site.md). A set with problems is reported and not installed: the
// service goes on with the catalogs it had. The files are bounded (256 files of 1 MiB a folder).
void reload_on_sighup(boost::asio::signal_set& hup, const std::string& catalog_dir, Routes& routes, AccessLog& log,
                      Reloader& reloader) {
  hup.async_wait([&hup, &catalog_dir, &routes, &log, &reloader](const boost::system::error_code& ec, int) {
    if (ec) return;
    const Result<bool> reopened = log.reopen();
    if (!reopened) std::cerr << "trainfit: SIGHUP: " << reopened.error().message << "; the old access log stays in use\n";
    if (reloader.busy.exchange(true)) {
      std::cerr << "trainfit: SIGHUP: a reload is already running\n";
    } else {
      if (reloader.worker.joinable()) reloader.worker.join();  // the last one, finished
      reloader.worker = std::thread([&catalog_dir, &routes, &reloader] {
        std::cerr << "trainfit: SIGHUP: reading the site catalogs again\n";
        if (use_site_catalogs(catalog_dir, true, std::cerr)) {
          routes.refresh_catalogs();
          std::cerr << "trainfit: site catalogs reloaded\n";
        } else {
          std::cerr << "trainfit: site catalogs not reloaded; the ones in use stay\n";
        }
        reloader.busy = false;
      });
    }
    reload_on_sighup(hup, catalog_dir, routes, log, reloader);
  });
}

}  // namespace

int run_serve(int argc, char** argv, const std::string& catalog_dir) {
  ServeOptions o;
  int exit_code = 0;
  if (!parse_options(argc, argv, o, &exit_code)) return exit_code;
  Result<std::unique_ptr<AccessLog>> opened = AccessLog::open(o.access_log);
  if (!opened) return fail(opened.error().message);
  const std::unique_ptr<AccessLog> log = std::move(opened).value();
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not death

  EventLoops loops(o.threads);
  Metrics metrics;
  Routes routes(o.node_name, o.max_body, o.timeout_s, metrics);
  ConnectionHub hub(routes, metrics, *log,
                    {o.max_body, std::chrono::seconds(o.timeout_s), std::chrono::seconds(o.idle_timeout_s)});
  Listener listener(loops, hub, o.max_connections);
  const Result<int> port = listener.bind(o.host, o.port);
  if (!port) return fail("listen='" + o.host + ":" + std::to_string(o.port) + "' cannot be bound: " + port.error().message);
  if (const Result<bool> dropped = drop_privileges(o.user); !dropped) return fail(dropped.error().message);
  Reloader reloader;  // joined after the loops stop (declared after what its worker uses)
  boost::asio::signal_set hup(loops.first(), SIGHUP);  // before "serving on": a HUP from then on reloads
  reload_on_sighup(hup, catalog_dir, routes, *log, reloader);
  // One write: whoever waits for this line never sees half of it.
  std::cerr << "trainfit: serving on " + o.host + ":" + std::to_string(*port) + " as '" + o.node_name + "' with " +
                   std::to_string(o.threads) + (o.threads == 1 ? " thread" : " threads") + ", user " + current_user() + "\n";

  // SIGTERM/SIGINT: stop accepting, let busy connections answer, close idle ones; run()
  // returns once no connection is left.
  boost::asio::signal_set signals(loops.first(), SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int received) {
    if (ec) return;
    std::cerr << "trainfit: " << (received == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": stopping; finishing the requests in flight\n";
    listener.stop();
    hub.stop();
    hup.cancel();
    loops.release();
  });
  listener.start();
  loops.run();
  // Stopping already: a SIGTERM or SIGINT from now on (timeout(1) sends its own and its
  // group's, one after the other) stays pending instead of killing the process with the
  // default action once `signals` is gone. Every loop thread has been joined.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (log->lost() > 0) std::cerr << "trainfit: " << log->lost() << " access log lines could not be written in full\n";
  std::cerr << "trainfit: stopped\n";
  return 0;
}

}  // namespace trainfit::cli
