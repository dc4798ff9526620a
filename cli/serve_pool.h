// A fixed set of worker threads with a bounded queue of accepted connections.
// httplib's own ThreadPool queues without limit; here the accept loop waits when the
// queue is full, so further clients wait in the kernel's listen backlog instead of
// costing memory.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainfit::cli {

class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(std::size_t threads, std::size_t max_queued) : max_queued_(max_queued) {
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }

  void enqueue(std::function<void()> job) override {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [this] { return jobs_.size() < max_queued_; });
    jobs_.push_back(std::move(job));
    not_empty_.notify_one();
  }

  // Runs every queued connection to its end, then joins the workers.
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    not_empty_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        not_empty_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
        not_full_.notify_one();
      }
      job();
    }
  }

  const std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace trainfit::cli
