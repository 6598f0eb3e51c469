#pragma once
// Exclusive claim of a sweep point by one process, on a local or a shared (NFS, Lustre, GPFS, BeeGFS)
// filesystem. Torch-free.
//
// Why a lock *file* created with link(2), not flock/fcntl: byte-range and flock locks on network
// filesystems depend on lock daemons and mount options (NFSv3 needs lockd; Lustre without `-o flock` and
// BeeGFS by default keep locks node-local and still report success), so two nodes can both "hold" one.
// Creating a file with link(2) is atomic on every one of them (open(2) recommends it for NFS), the file
// says who holds it (host, boot id, pid, process start time, Slurm job) so `xsa-sweep --status` can show
// it from any node, and a holder that died is detected explicitly:
//  - same host (hostname + boot id): the pid is gone or belongs to a newer process -> stale at once;
//  - any host: the holder touches the file every kHeartbeatSeconds; no touch for kStaleSeconds -> stale
//    (assumes node clocks agree within a minute, as NTP keeps them).
// A stale claim is broken by one process at a time (an O_EXCL "break" file), re-checked under it, removed,
// and then contended for like a free one. A holder that finds its file gone or replaced on a heartbeat has
// lost the claim and must stop writing into the point's folder.
#include <memory>
#include <optional>
#include <string>

namespace xsa {

constexpr int kHeartbeatSeconds = 10;
constexpr int kStaleSeconds = 90;

// Who holds a claim, as written in the lock file (one JSON object).
struct ClaimHolder {
  std::string token;    // unique per claim
  std::string host;     // gethostname()
  std::string boot_id;  // /proc/sys/kernel/random/boot_id: tells a reboot (pids start over)
  long pid = 0;
  long long process_start = 0;  // /proc/<pid>/stat start time (clock ticks since boot): tells a reused pid
  double since = 0;             // unix time the claim was taken
  std::string job;              // "SLURM_JOB_ID" or "ARRAYJOB_TASK" when running under Slurm, else ""
};

struct ClaimState {
  bool exists = false;       // a lock file is there
  bool readable = false;     // it parsed (a lock file is written completely before it appears)
  ClaimHolder holder;        // when readable
  double heartbeat_age = 0;  // seconds since the file was last touched
  bool stale = false;        // the holder is gone (see above)
  std::string stale_reason;  // e.g. "pid 123 on vm is gone"
};

// Reads and judges the lock file at `path` (a missing file is !exists).
ClaimState inspect_claim(const std::string& path);

// "host pid 123 (job 45_1)" for messages.
std::string describe_holder(const ClaimHolder& h);

class Claim {
 public:
  // Tries to take the claim at `path`. On success returns the claim; otherwise nullptr and `*held_by`
  // holds the current state (held by a live process, or being recovered by another). Breaks a stale claim
  // first (and says so in `*note`).
  static std::unique_ptr<Claim> try_acquire(const std::string& path, ClaimState* held_by, std::string* note);

  ~Claim();
  Claim(const Claim&) = delete;
  Claim& operator=(const Claim&) = delete;

  // Touches the file so others see the holder alive. Returns false if the claim was lost (the file is
  // gone or holds another token).
  bool heartbeat();
  // Removes the lock file if it is still ours. Idempotent.
  void release();
  const ClaimHolder& holder() const { return holder_; }

 private:
  Claim(std::string path, ClaimHolder holder) : path_(std::move(path)), holder_(std::move(holder)) {}
  std::string path_;
  ClaimHolder holder_;
  bool released_ = false;
};

// This process as a claim holder (fresh token).
ClaimHolder this_process_holder();

}  // namespace xsa
