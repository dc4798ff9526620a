// One event loop per thread, each connection on one loop for its life: its handlers never
// run at once and need no strand or lock, and the loops share no queue (with one shared
// io_context, every completion crossed a mutex and a condition variable).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

namespace trainfit::cli {

class EventLoops {
 public:
  explicit EventLoops(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      loops_.push_back(std::make_unique<boost::asio::io_context>(1));
      idle_guards_.push_back(boost::asio::make_work_guard(*loops_.back()));
    }
  }

  boost::asio::io_context& first() { return *loops_.front(); }
  // Round-robin; called from the listener only.
  boost::asio::io_context& next() { return *loops_[next_++ % loops_.size()]; }

  // Runs every loop, the first on this thread, until each has no work left.
  void run() {
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < loops_.size(); ++i) threads.emplace_back([loop = loops_[i].get()] { loop->run(); });
    loops_.front()->run();
    for (std::thread& t : threads) t.join();
  }

  // Lets a loop end once its connections have (until then, a loop with none stays up).
  void release() {
    for (auto& guard : idle_guards_) guard.reset();
  }

 private:
  std::vector<std::unique_ptr<boost::asio::io_context>> loops_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> idle_guards_;
  std::size_t next_ = 0;
};

}  // namespace trainfit::cli
