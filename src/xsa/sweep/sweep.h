#pragma once
// Sweep files: a base config plus a grid of --set overrides, expanded into paired-experiment points
// with stable run ids, validated up front and split into shards (docs/ARCHITECTURE.md "Sweep files and
// summaries"). Torch-free.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace xsa {

// One value of a grid or set key, in the three forms it is needed in.
struct SweepValue {
  std::string arg;                // text after "key=" in --set (parsed as YAML by the trainer)
  std::string id;                 // canonical, filesystem-safe text for run ids ("0.25", "sa,xsa")
  nlohmann::json json;            // for summary.json
  std::vector<SweepValue> items;  // a list's elements (used by linked grid keys), empty for a scalar
};

struct SweepSpec {
  std::string path;       // the sweep file
  std::string name;       // `name:` or the file stem
  std::string base;       // base config path as written in the file
  std::string base_path;  // resolved against the sweep file's folder
  // File order. A linked key "a.b+c.d" varies several keys together: each of its values is a list with one
  // element per key (e.g. data.seq_len+train.batch_size: [[64, 64], [128, 32]] keeps tokens per step fixed).
  std::vector<std::pair<std::string, std::vector<SweepValue>>> grid;
  std::vector<std::pair<std::string, SweepValue>> set;  // overrides for every point
};

// One grid point: a paired experiment (one xsa-train run).
struct SweepPoint {
  std::size_t index = 0;  // position in the full (unsharded) expansion
  std::string run_id;     // e.g. "lambda=0.25_seq_len=128_seed=2"
  std::vector<std::string>
      overrides;          // "key=value" for --set: the sweep's set, then this point's grid values
  nlohmann::json values;  // {dotted key: value} of the point's grid values (incl. single-valued)
};

struct Shard {
  int index = 0;  // K, 0-based
  int count = 1;  // N
};

// Reads and checks the sweep file's shape and keys (InputError naming the file and the key).
SweepSpec load_sweep(const std::string& path);
SweepSpec parse_sweep(const std::string& yaml_text, const std::string& path);

// The keys a grid key sets: "a.b+c.d" -> {"a.b", "c.d"}; a plain key -> itself.
std::vector<std::string> linked_keys(const std::string& grid_key);

inline constexpr std::size_t kMaxSweepPoints = 100000;
// The memory a sweep file's values may take once expanded (each value and its text; lists hold their
// elements' text again, YAML aliases their anchor's value), InputError beyond: parsing stays bounded by this,
// not by how deep aliases nest.
inline constexpr std::size_t kMaxSweepValueBytes = std::size_t{1} << 26;  // 64 MiB
// The text all points together hold (overrides and run ids), checked before they are built.
inline constexpr std::size_t kMaxSweepPointBytes = std::size_t{1} << 28;  // 256 MiB
// The largest N of --shard K/N.
inline constexpr long long kMaxShards = 1000000;

// Cartesian product in file key order, last key fastest (a linked key counts as one key). Run ids are built
// from the keys with more than one value (short key = last dotted component, the full key where two short
// keys would clash). InputError beyond kMaxSweepPoints points or kMaxSweepPointBytes of text, before any
// point is built.
std::vector<SweepPoint> expand_grid(const SweepSpec& spec);

// Overrides every child run gets so N concurrent runs use N cores (added after the point's own).
std::vector<std::string> child_runtime_overrides();

// Parses the base config with every point's overrides, so a bad value fails before anything runs.
void validate_points(const SweepSpec& spec, const std::vector<SweepPoint>& points);

// "K/N" with 0 <= K < N (Slurm's 0-based array task id / task count).
Shard parse_shard(const std::string& text);
// Point i belongs to shard i mod N.
std::vector<SweepPoint> shard_points(const std::vector<SweepPoint>& points, const Shard& shard);

}  // namespace xsa
