// The audit log's writer thread. job_submit runs under slurmctld's job write lock:
// a slow or full disk there would stall the whole controller, so a decision only
// queues its record (a move, no I/O) and one thread formats and appends the lines,
// in order, through AuditLog (whole lines or none). The queue is bounded: when the
// disk cannot keep up, records are dropped and counted, never blocking a submission.
// stop() (the plugin's fini) writes what is queued before returning.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "trainfit/admission.h"
#include "trainfit/admission/audit_log.h"
#include "trainfit/export.h"

namespace trainfit::admission {

class TRAINFIT_API AuditWriter {
 public:
  // report: called from the writer thread with one line for slurmctld's log when
  // writing starts failing ("records are dropped") and when it works again.
  using Report = std::function<void(bool error, const std::string& line)>;
  explicit AuditWriter(Report report, size_t max_queued = 65536);
  ~AuditWriter();
  AuditWriter(const AuditWriter&) = delete;
  AuditWriter& operator=(const AuditWriter&) = delete;

  void start();
  // Queues one record for path; false when the queue is full (the record is counted as dropped).
  bool submit(AuditRecord record, const std::string& path);
  // Writes everything queued, then ends the thread.
  void stop();
  // Blocks until every record queued so far is written or dropped (tests, benchmarks).
  void flush();
  int64_t dropped() const;

 private:
  struct Item {
    AuditRecord record;
    std::string path;
  };
  void run();
  void write(const std::deque<Item>& batch);
  void write_lines(const std::string& path, const std::string& lines, int64_t records);

  Report report_;
  size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Item> queue_;
  bool stopping_ = false, busy_ = false, waiting_ = false;
  int64_t dropped_ = 0, failing_since_ = 0;
  std::thread thread_;
  AuditLog log_;
};

}  // namespace trainfit::admission
