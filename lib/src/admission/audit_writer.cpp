#include "trainfit/admission/audit_writer.h"

#include <chrono>

namespace trainfit::admission {

AuditWriter::AuditWriter(Report report, size_t max_queued) : report_(std::move(report)), max_queued_(max_queued) {}

AuditWriter::~AuditWriter() { stop(); }

void AuditWriter::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

bool AuditWriter::submit(AuditRecord record, const std::string& path) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= max_queued_) {
      ++dropped_;
      return false;
    }
    queue_.push_back(Item{std::move(record), path});
    wake = waiting_;  // a busy writer takes the record with its next batch: no syscall here
    waiting_ = false;
  }
  if (wake) wake_.notify_one();
  return true;
}

void AuditWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void AuditWriter::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return (queue_.empty() && !busy_) || !thread_.joinable(); });
}

int64_t AuditWriter::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void AuditWriter::run() {
  // While records keep coming the writer looks for them every 2 ms, so a submission
  // never pays for waking it (a futex call); after 100 ms without any it sleeps until
  // the next submission wakes it.
  constexpr auto kPoll = std::chrono::milliseconds(2);
  constexpr int kPollsBeforeSleep = 50;
  std::unique_lock<std::mutex> lock(mutex_);
  int idle_polls = 0;
  while (true) {
    if (!stopping_ && queue_.empty()) {
      if (idle_polls++ < kPollsBeforeSleep) {
        wake_.wait_for(lock, kPoll);
      } else {
        waiting_ = true;
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      }
      continue;
    }
    idle_polls = 0;
    waiting_ = false;
    if (queue_.empty() && stopping_) break;
    std::deque<Item> batch;
    batch.swap(queue_);
    busy_ = true;
    lock.unlock();
    write(batch);  // formatting and I/O outside the lock: submit() never waits for the disk
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  idle_.notify_all();
}

// One write per batch and audit-log path: the records of a batch land together or not at all.
void AuditWriter::write(const std::deque<Item>& batch) {
  std::string lines;
  int64_t records = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    lines += (records > 0 ? "\n" : "") + audit_json(batch[i].record);
    ++records;
    const bool last_for_path = i + 1 == batch.size() || batch[i + 1].path != batch[i].path;
    if (!last_for_path && lines.size() < (1u << 20)) continue;
    write_lines(batch[i].path, lines, records);
    lines.clear();
    records = 0;
  }
}

void AuditWriter::write_lines(const std::string& path, const std::string& lines, int64_t records) {
  std::string problem;
  if (!log_.is_open() || log_.path() != path) problem = log_.open(path);
  if (problem.empty()) problem = log_.append_lines(lines);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!problem.empty()) {
    if (failing_since_ == 0) {
      report_(true, "audit log: " + problem +
                        " (records are dropped, never half-written, until it can be written again; admission goes on)");
    }
    failing_since_ += records;
    dropped_ += records;
  } else if (failing_since_ > 0) {
    report_(false, "audit log " + path + " writable again; " + std::to_string(failing_since_) + " records were dropped");
    failing_since_ = 0;
  }
}

}  // namespace trainfit::admission
