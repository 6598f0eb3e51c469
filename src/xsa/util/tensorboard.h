#pragma once
// TensorBoard event files, written without a protobuf library (LibTorch links its own protobuf; a second
// one in the process is a crash at load). The format is small and stable: a file of TFRecords (uint64
// length, masked CRC-32C of the length, the bytes, masked CRC-32C of the bytes), each holding one `Event`
// message of tensorflow/core/util/event.proto, of which we write only these fields:
//   Event      { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5;
//                SessionLog session_log = 7; }
//   Summary    { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; }
//   SessionLog { SessionStatus status = 1; }   (START = 1)
// A file starts with file_version "brain.Event:2". A resumed run writes SessionLog START at the step it
// resumed from, which makes TensorBoard drop the points at and after that step from earlier files (what
// `SummaryWriter(purge_step=...)` does), so a resume never shows doubled or stale points.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xsa::tensorboard {

// The protobuf and framing encodings, pure (tests decode them independently).
std::string file_version_event(double wall_time);
std::string scalars_event(double wall_time, std::int64_t step,
                          const std::vector<std::pair<std::string, float>>& values);
std::string session_start_event(double wall_time, std::int64_t step);
std::string tfrecord(const std::string& payload);

// One event file in `dir` (created with its parents): events.out.tfevents.<unix seconds>.<host>, with a
// numeric suffix if a file of that name exists (a resume in the same second). Not thread-safe: one writer
// per run. Every method throws RuntimeFailure naming the file when writing fails.
class EventWriter {
 public:
  // purge_from: the step a resumed run continues from (SessionLog START there); nullopt for a fresh run.
  EventWriter(const std::string& dir, std::optional<std::int64_t> purge_from);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // Scalars of one step, as one Event (buffered until flush()).
  void scalars(std::int64_t step, const std::vector<std::pair<std::string, float>>& values);
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& payload);
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace xsa::tensorboard
