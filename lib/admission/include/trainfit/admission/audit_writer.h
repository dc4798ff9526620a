// The audit log's writer thread. job_submit runs under slurmctld's job write lock:
// a slow or full disk there would stall the whole controller, so a decision only
// queues its record (a move, no I/O) and one thread formats and appends the lines,
// in order, through AuditLog (whole lines or none). The queue is bounded: when the
// disk cannot keep up, records are dropped and counted, never blocking a submission.
// stop() (the plugin's fini) writes what is queued before returning.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "trainfit/admission.h"
#include "trainfit/admission/audit_log.h"
#include "trainfit/export.h"

namespace trainfit::admission {

class TRAINFIT_API AuditWriter {
 public:
  // report: called from the writer thread with one line for slurmctld's log when
  // writing starts failing ("records are dropped") and when it works again.
  using Report = std::function<void(bool error, const std::string& line)>;
  // user_name: fills AuditRecord::user from its uid on the writer thread (a passwd/NSS
  // lookup may be slow: never in job_submit). max_bytes bounds the queue's memory.
  using UserName = std::function<std::string(uint32_t uid)>;
  explicit AuditWriter(Report report, size_t max_queued = 65536, UserName user_name = nullptr,
                       size_t max_bytes = 64u << 20);
  ~AuditWriter();
  AuditWriter(const AuditWriter&) = delete;
  AuditWriter& operator=(const AuditWriter&) = delete;

  void start();
  // Queues one record for path; false when the queue is full (the record is counted as dropped).
  // The path is shared, not copied: a caller holding its policy passes an aliasing pointer.
  // A record built on the heap is queued as it is (no move of its ~2 KB).
  bool submit(std::unique_ptr<AuditRecord> record, std::shared_ptr<const std::string> path);
  bool submit(AuditRecord&& record, std::shared_ptr<const std::string> path);
  bool submit(AuditRecord&& record, const std::string& path);
  // Writes everything queued, then ends the thread.
  void stop();
  // The same, waiting at most `wait` (a write() to a hung disk, a getpwuid_r to a hung NSS):
  // false when the thread did not end in time; it is then detached, what it had not written
  // may be lost, and this object must never be destroyed (the thread may still use it).
  bool stop_within(std::chrono::milliseconds wait);
  // Blocks until every record queued so far is written or dropped (tests, benchmarks).
  void flush();
  // Whether the writer thread has ended (after a stop_within that gave up, it may end later).
  bool finished() const;
  int64_t dropped() const;

 private:
  struct Item {
    Item(std::unique_ptr<AuditRecord> r, std::shared_ptr<const std::string> p, size_t b)
        : record(std::move(r)), path(std::move(p)), bytes(b) {}
    std::unique_ptr<AuditRecord> record;  // never null
    std::shared_ptr<const std::string> path;
    size_t bytes;
  };
  void run();
  void write(std::vector<Item>& batch);
  void write_lines(const std::string& path, const std::string& lines, int64_t records);

  static size_t size_of(const AuditRecord& record);

  Report report_;
  size_t max_queued_;
  UserName user_name_;
  size_t max_bytes_, queued_bytes_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  // Two vectors trade places: the writer takes the queue and hands back an empty one
  // with its capacity, so a submission rarely allocates.
  std::vector<Item> queue_, spare_;
  bool stopping_ = false, busy_ = false, waiting_ = false;
  bool running_ = false;  // a writer thread exists (under mutex_: flush() reads it, stop() clears it)
  bool finished_ = false;  // run() has returned (under mutex_; stop_within waits on idle_ for it)
  int64_t dropped_ = 0, failing_since_ = 0;
  std::string failing_problem_;  // the problem last reported while failing (a new one is reported too)
  std::thread thread_;
  AuditLog log_;
};

}  // namespace trainfit::admission
