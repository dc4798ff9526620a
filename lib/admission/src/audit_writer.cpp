#include "trainfit/admission/audit_writer.h"

#include <pthread.h>

#include <chrono>
#include <csignal>

namespace trainfit::admission {

AuditWriter::AuditWriter(Report report, size_t max_queued, UserName user_name, size_t max_bytes)
    : report_(std::move(report)), max_queued_(max_queued), user_name_(std::move(user_name)), max_bytes_(max_bytes) {}

size_t AuditWriter::size_of(const AuditRecord& r) {
  return sizeof(AuditRecord) + r.user.size() + r.account.size() + r.partition.size() + r.qos.size() +
         r.job_name.size() + r.gpu_request.size() + r.decision.message.size() + 256;
}

AuditWriter::~AuditWriter() { stop(); }

void AuditWriter::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_) return;
  stopping_ = false;
  finished_ = false;
  thread_ = std::thread([this] { run(); });
  running_ = true;
}

bool AuditWriter::submit(AuditRecord&& record, const std::string& path) {
  return submit(std::move(record), std::make_shared<const std::string>(path));
}

bool AuditWriter::submit(AuditRecord&& record, std::shared_ptr<const std::string> path) {
  return submit(std::make_unique<AuditRecord>(std::move(record)), std::move(path));
}

bool AuditWriter::submit(std::unique_ptr<AuditRecord> record, std::shared_ptr<const std::string> path) {
  if (record == nullptr) return false;
  const size_t bytes = size_of(*record);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= max_queued_ || queued_bytes_ + bytes > max_bytes_) {
      ++dropped_;
      return false;
    }
    queued_bytes_ += bytes;
    queue_.emplace_back(std::move(record), std::move(path), bytes);
    wake = waiting_;  // a busy writer takes the record with its next batch: no syscall here
    waiting_ = false;
  }
  if (wake) wake_.notify_one();
  return true;
}

void AuditWriter::stop() {
  std::thread writer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_ || !thread_.joinable()) return;
    stopping_ = true;
    writer = std::move(thread_);  // joined outside the lock; nothing else touches thread_ now
  }
  wake_.notify_one();
  writer.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }
  idle_.notify_all();
}

bool AuditWriter::stop_within(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!running_ || !thread_.joinable()) return true;
  stopping_ = true;
  wake_.notify_one();
  if (!idle_.wait_for(lock, wait, [this] { return finished_; })) {
    thread_.detach();  // blocked in the disk or NSS: left behind, never joined
    running_ = false;
    return false;
  }
  std::thread writer = std::move(thread_);
  running_ = false;
  lock.unlock();
  writer.join();  // it has left run(): returns at once
  idle_.notify_all();
  return true;
}

void AuditWriter::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return (queue_.empty() && !busy_) || !running_; });
}

bool AuditWriter::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

int64_t AuditWriter::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void AuditWriter::run() {
  // A file size limit (ulimit -f) must end in EFBIG for this thread, not in SIGXFSZ
  // killing slurmctld: the signal goes to the writing thread, which blocks it.
  sigset_t xfsz;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, nullptr);
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
    std::vector<Item> batch;
    batch.swap(spare_);
    batch.swap(queue_);  // the queue goes on with the spare's capacity
    queued_bytes_ = 0;
    busy_ = true;
    lock.unlock();
    try {
      write(batch);  // formatting and I/O outside the lock: submit() never waits for the disk
    } catch (...) {  // bad_alloc: this batch is lost, never slurmctld
      std::lock_guard<std::mutex> relock(mutex_);
      dropped_ += static_cast<int64_t>(batch.size());
    }
    batch.clear();
    lock.lock();
    constexpr size_t kKeptCapacity = 1024;  // a burst's memory is not kept for ever
    if (spare_.capacity() < batch.capacity() && batch.capacity() <= kKeptCapacity) spare_.swap(batch);
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  finished_ = true;  // still under the lock: stop_within sees it with the queue written
  idle_.notify_all();
}

// One write per batch and audit-log path: the records of a batch land together or not at all.
void AuditWriter::write(std::vector<Item>& batch) {
  std::string lines;
  int64_t records = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    AuditRecord& record = *batch[i].record;
    if (record.user.empty() && user_name_) record.user = user_name_(record.uid);
    lines += (records > 0 ? "\n" : "") + audit_json(record);
    ++records;
    const bool last_for_path = i + 1 == batch.size() || *batch[i + 1].path != *batch[i].path;
    if (!last_for_path && lines.size() < (1u << 20)) continue;
    write_lines(*batch[i].path, lines, records);
    lines.clear();
    records = 0;
  }
}

void AuditWriter::write_lines(const std::string& path, const std::string& lines, int64_t records) {
  Result<bool> written = true;
  if (!log_.is_open() || log_.path() != path) written = log_.open(path);
  if (written) written = log_.append_lines(lines);
  std::string report;
  bool error = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!written) {
      const std::string& problem = written.error().message;
      if (failing_since_ == 0 || problem != failing_problem_) {
        failing_problem_ = problem;
        error = true;
        report = "audit log: " + problem +
                 " (records are dropped, never half-written, until it can be written again; admission goes on)";
      }
      failing_since_ += records;
      dropped_ += records;
    } else if (failing_since_ > 0) {
      report = "audit log " + path + " writable again; " + std::to_string(failing_since_) + " records were dropped";
      failing_since_ = 0;
      failing_problem_.clear();
    }
  }
  if (!report.empty()) report_(error, report);  // slurmctld's log may be slow: not under the lock
}

}  // namespace trainfit::admission
