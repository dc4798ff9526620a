#include "connection.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <vector>

namespace trainfit::cli {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// After a response that ends the connection, what the client still sends is read and
// dropped for this long (at most kMaxDrain bytes), so that closing with unread data does
// not reset the connection before the client has read the answer (nginx's lingering close).
constexpr std::chrono::seconds kLinger{2};
constexpr std::size_t kMaxDrain = 4 << 20;

bool is_http_parse_error(const beast::error_code& ec) {
  return ec.category() == beast::error_code(http::error::bad_method).category();
}

std::string remote_of(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "";
  const asio::ip::address address = peer.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(peer.port());
}

}  // namespace

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket&& socket, ConnectionHub& hub)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), hub_(hub), remote_(remote_of(socket_)) {}
  ~Connection() { hub_.closed(this); }

  void start() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->next_request(); });
  }

  // From any thread: close now if waiting for a request, else after answering it.
  void stop_when_idle() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      self->stopping_ = true;
      if (!self->in_request_ && !self->writing_) self->close();
    });
  }

 private:
  void next_request() {
    parser_.emplace();
    parser_->body_limit(hub_.limits_.max_body);
    parser_->header_limit(kMaxHead);
    continue_sent_ = false;
    in_request_ = false;
    if (buffer_.size() > 0) begin_request();  // pipelined: the next request is already here
    if (stopping_ && !in_request_) return close();
    read();
  }

  // The request's first byte is here: from now on it has --timeout in all.
  void begin_request() {
    in_request_ = true;
    started_ = Clock::now();
    deadline_ = started_ + hub_.limits_.timeout;
  }

  // Our own timer, not beast::tcp_stream's expiry, which closes the socket: a request cut
  // off by its deadline is still answered (408).
  // The timer is not re-armed for every new deadline (three per request): it wakes at or
  // before the deadline in force and waits again when that has moved later. Only an earlier
  // deadline re-arms it.
  void set_deadline(Clock::time_point deadline) {
    timed_out_ = false;
    deadline_in_force_ = deadline;
    if (!timer_waiting_ || deadline < timer_.expiry()) wait_until(deadline);
  }

  // A wait that had already expired when re-armed still completes without error: the
  // generation tells the current wait from a superseded one.
  void wait_until(Clock::time_point when) {
    timer_.expires_at(when);
    timer_waiting_ = true;
    timer_.async_wait([self = shared_from_this(), generation = ++timer_generation_](beast::error_code ec) {
      if (generation != self->timer_generation_) return;  // superseded by a later wait
      self->timer_waiting_ = false;
      if (ec) return;  // cancelled: the connection is closing
      if (Clock::now() < self->deadline_in_force_) return self->wait_until(self->deadline_in_force_);
      self->timed_out_ = true;
      beast::error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  void read() {
    set_deadline(in_request_ ? deadline_ : Clock::now() + hub_.limits_.idle_timeout);
    http::async_read_some(socket_, buffer_, *parser_, beast::bind_front_handler(&Connection::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (!in_request_ && (parser_->got_some() || buffer_.size() > 0)) begin_request();
    if (ec && timed_out_) return in_request_ ? answer_read_error(timed_out()) : close();
    if (ec == http::error::body_limit) return answer_read_error(hub_.routes_.body_too_large());
    if (ec == http::error::header_limit) return answer_read_error(hub_.routes_.head_too_large(kMaxHead));
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return close();  // the client left
    if (ec && is_http_parse_error(ec)) return answer_read_error(hub_.routes_.malformed(ec.message()));
    if (ec) return close();  // reset, or closed by a stop
    if (parser_->is_header_done() && !parser_->is_done() && !continue_sent_ && expects_continue()) return send_continue();
    if (!parser_->is_done()) return read();
    answer();
  }

  HttpReply timed_out() const {
    if (!parser_->is_header_done()) return hub_.routes_.timed_out(false, 0, "");
    const auto& req = parser_->get();
    return hub_.routes_.timed_out(true, req.body().size(), req[http::field::content_length]);
  }

  bool expects_continue() const { return beast::iequals(parser_->get()[http::field::expect], "100-continue"); }

  void send_continue() {
    continue_sent_ = true;
    static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    set_deadline(deadline_);
    asio::async_write(socket_, asio::buffer(kContinue, sizeof kContinue - 1),
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return self->close();
                        self->read();
                      });
  }

  void answer() {
    const auto& req = parser_->get();
    const std::string_view target = req.target();
    HttpReply reply;
    if (target.size() > kMaxTarget) {
      reply = hub_.routes_.uri_too_long();
    } else {
      const size_t mark = target.find('?');
      const HttpRequest request{req.method_string(), target.substr(0, mark), req[http::field::content_type], req.body(),
                                mark == std::string_view::npos ? std::string_view() : target.substr(mark + 1)};
      try {
        reply = hub_.routes_.handle(request);
      } catch (const std::exception&) {  // a bug in trainfit: answered, never fatal
        reply.status = 500;
        reply.body = http_error_json("internal", "", "internal error; please report it");
      }
    }
    write(std::move(reply), !req.keep_alive() || stopping_);
  }

  // An error found while reading: answered, then the connection ends (what follows on it
  // cannot be trusted to be a request boundary).
  void answer_read_error(HttpReply reply) {
    if (!in_request_) begin_request();
    write(std::move(reply), true);
  }

  void write(HttpReply reply, bool close_after) {
    const bool head = parser_->get().method() == http::verb::head;
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(reply.status));
    response_.set(http::field::content_type, reply.content_type);
    if (reply.allow != nullptr) response_.set(http::field::allow, reply.allow);
    response_.keep_alive(!close_after);
    const std::size_t bytes = reply.body.size();
    if (head) {
      response_.content_length(bytes);  // what GET would send; no body
    } else {
      response_.body() = std::move(reply.body);
      response_.prepare_payload();
    }
    writing_ = true;
    set_deadline(Clock::now() + hub_.limits_.timeout);
    http::async_write(socket_, response_,
                      [self = shared_from_this(), close_after, bytes](beast::error_code ec, std::size_t) {
                        self->on_written(ec, close_after, bytes);
                      });
  }

  void on_written(beast::error_code ec, bool close_after, std::size_t bytes) {
    writing_ = false;
    log(bytes);
    if (ec) return close();
    if (close_after || stopping_) return linger();
    next_request();
  }

  void log(std::size_t bytes) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started_).count();
    // Empty when the request line was not read; set even when the headers failed.
    const std::string_view method = parser_->get().method_string();
    const std::string_view target = parser_->get().target();
    const std::string_view path = target.substr(0, target.find('?'));
    const int status = static_cast<int>(response_.result_int());
    hub_.metrics_.observe(route_label(path), status, static_cast<double>(us) / 1e6);
    hub_.log_.write({remote_, std::string(method), std::string(path), status, bytes, static_cast<std::int64_t>(us)});
  }

  // Sends FIN, then reads and drops what the client still sends, for a bounded time.
  void linger() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.clear();
    drained_ = 0;
    set_deadline(Clock::now() + kLinger);
    drain();
  }

  void drain() {
    socket_.async_read_some(buffer_.prepare(16 * 1024), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ > kMaxDrain) return self->close();
      self->drain();
    });
  }

  void close() {
    beast::error_code ignored;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  ConnectionHub& hub_;
  const std::string remote_;
  Clock::time_point started_{}, deadline_{};
  std::size_t drained_ = 0;
  bool in_request_ = false;
  bool writing_ = false;
  bool continue_sent_ = false;
  bool timed_out_ = false;  // the timer cancelled the pending operation
  std::uint64_t timer_generation_ = 0;
  bool timer_waiting_ = false;
  Clock::time_point deadline_in_force_{};
  bool stopping_ = false;
};

void ConnectionHub::serve(tcp::socket socket) {
  auto connection = std::make_shared<Connection>(std::move(socket), *this);
  bool stopping = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    open_.emplace(connection.get(), connection);
    stopping = stopping_;
  }
  if (stopping) connection->stop_when_idle();
  connection->start();
}

std::size_t ConnectionHub::open_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_.size();
}

void ConnectionHub::stop() {
  // Outside the lock: the last reference to a connection may be dropped here, and its
  // destructor takes the lock (closed()).
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (auto& [pointer, weak] : open_) {
      if (std::shared_ptr<Connection> connection = weak.lock()) open.push_back(std::move(connection));
    }
  }
  for (const std::shared_ptr<Connection>& connection : open) connection->stop_when_idle();
}

void ConnectionHub::closed(const Connection* connection) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    open_.erase(connection);
  }
  if (on_closed_) on_closed_();
}

}  // namespace trainfit::cli
