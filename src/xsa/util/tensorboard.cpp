#include "xsa/util/tensorboard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "xsa/util/crc32c.h"
#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/timing.h"

namespace xsa::tensorboard {
namespace {

// Protobuf wire format: a key is (field number << 3) | wire type; 0 varint, 1 fixed64, 2 length-delimited,
// 5 fixed32. Fixed-width values are little-endian.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void put_key(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire_type));
}
void put_fixed(std::string& out, std::uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
}
void put_double(std::string& out, int field, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, 1);
  put_fixed(out, bits, 8);
}
void put_float(std::string& out, int field, float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, 5);
  put_fixed(out, bits, 4);
}
void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_key(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}
void put_int64(std::string& out, int field, std::int64_t v) {
  put_key(out, field, 0);
  put_varint(out, static_cast<std::uint64_t>(v));  // negative int64 is ten bytes, as protobuf has it
}

// Event's fields (event.proto) and the nested messages'.
constexpr int kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5,
              kEventSessionLog = 7;
constexpr int kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2;
constexpr int kSessionLogStatus = 1, kSessionLogStart = 1;

std::string event_header(double wall_time, std::int64_t step) {
  std::string e;
  put_double(e, kEventWallTime, wall_time);
  if (step != 0) put_int64(e, kEventStep, step);  // proto3: a zero is not written
  return e;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

std::string file_version_event(double wall_time) {
  std::string e = event_header(wall_time, 0);
  put_bytes(e, kEventFileVersion, "brain.Event:2");
  return e;
}

std::string scalars_event(double wall_time, std::int64_t step,
                          const std::vector<std::pair<std::string, float>>& values) {
  std::string summary;
  for (const auto& [tag, value] : values) {
    std::string v;
    put_bytes(v, kValueTag, tag);
    put_float(v, kValueSimpleValue, value);
    put_bytes(summary, kSummaryValue, v);
  }
  std::string e = event_header(wall_time, step);
  put_bytes(e, kEventSummary, summary);
  return e;
}

std::string session_start_event(double wall_time, std::int64_t step) {
  std::string log;
  put_key(log, kSessionLogStatus, 0);
  put_varint(log, kSessionLogStart);
  std::string e = event_header(wall_time, step);
  put_bytes(e, kEventSessionLog, log);
  return e;
}

std::string tfrecord(const std::string& payload) {
  std::string length;
  put_fixed(length, payload.size(), 8);
  std::string record = length;
  put_fixed(record, masked_crc32c(crc32c(length)), 4);
  record += payload;
  put_fixed(record, masked_crc32c(crc32c(payload)), 4);
  return record;
}

EventWriter::EventWriter(const std::string& dir, std::optional<std::int64_t> purge_from) {
  make_directories(dir);
  const double now = unix_seconds();
  const std::string base =
      dir + "/events.out.tfevents." + std::to_string(static_cast<long long>(now)) + "." + host_name();
  for (int attempt = 0; attempt < 1000 && file_ == nullptr; ++attempt) {
    path_ = attempt == 0 ? base : base + "." + std::to_string(attempt);
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw RuntimeFailure(path_ + ": cannot create event file (" + std::strerror(errno) + ")");
    }
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
      ::close(fd);
      throw RuntimeFailure(path_ + ": cannot open event file (" + std::strerror(errno) + ")");
    }
  }
  if (file_ == nullptr) throw RuntimeFailure(base + ": cannot create event file (1000 names taken)");
  write_record(file_version_event(now));
  if (purge_from) write_record(session_start_event(now, *purge_from));
  flush();
}

EventWriter::~EventWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void EventWriter::scalars(std::int64_t step, const std::vector<std::pair<std::string, float>>& values) {
  if (!values.empty()) write_record(scalars_event(unix_seconds(), step, values));
}

void EventWriter::write_record(const std::string& payload) {
  const std::string record = tfrecord(payload);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size())
    throw RuntimeFailure(path_ + ": write failed (" + std::strerror(errno) + ")");
}

void EventWriter::flush() {
  if (std::fflush(file_) != 0) throw RuntimeFailure(path_ + ": write failed (" + std::strerror(errno) + ")");
}

}  // namespace xsa::tensorboard
