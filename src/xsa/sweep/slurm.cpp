#include "xsa/sweep/slurm.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "xsa/util/error.h"
#include "xsa/util/fs.h"
#include "xsa/util/text.h"

namespace fs = std::filesystem;

namespace xsa {
namespace {

// Single-quoted for bash.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs argv, returns (exit code, stdout + stderr).
std::pair<int, std::string> run_capture(const std::vector<std::string>& argv) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) throw RuntimeFailure(std::string("pipe failed (") + std::strerror(errno) + ")");
  pid_t pid = ::fork();
  if (pid < 0) throw RuntimeFailure(std::string("fork failed (") + std::strerror(errno) + ")");
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::dup2(pipefd[1], STDERR_FILENO);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

// Refuses a value that holds a control byte (below 0x20, or 0x7f): a newline or carriage return would end
// the #SBATCH line or comment it is written into, and the text after it would run as a command. Every other
// byte is safe: paths and values the script runs with are single-quoted (quoted()), and #SBATCH lines are
// read by sbatch, not by a shell.
void require_script_safe(const std::string& what, const std::string& value) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    if (byte >= 0x20 && byte != 0x7f) continue;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", byte);
    const char* name = byte == '\n'   ? "a newline"
                       : byte == '\r' ? "a carriage return"
                                      : "a control character";
    throw InputError(what + ": holds " + name + " (byte " + hex + " at offset " + std::to_string(i) +
                     "); a value written into an sbatch script may hold no control characters");
  }
}

}  // namespace

std::string slurm_array_script(const SlurmSubmission& s) {
  for (const auto& [what, value] :
       {std::pair<const char*, const std::string&>{"the sweep's name", s.sweep_name},
        {"--config", s.sweep_file},
        {"--out", s.out_dir},
        {"the xsa-sweep executable", s.sweep_exe},
        {"--trainer", s.trainer},
        {"the working folder", s.workdir}})
    require_script_safe(what, value);
  std::ostringstream o;
  o << "#!/bin/bash\n"
    << "# Written by xsa-sweep --submit slurm: array task K runs shard K/N of sweep '" << s.sweep_name
    << "'\n# into one shared folder (docs/guide.md \"Scale-out\"). Resubmitting it is safe: points are "
       "claimed.\n"
    << "#SBATCH --job-name=xsa-" << s.sweep_name << "\n"
    << "#SBATCH --array=0-" << s.tasks - 1 << "\n"
    << "#SBATCH --ntasks=1\n"
    << "# " << s.workers << " point(s) at once x 1 thread each (every point runs with runtime.threads=1)\n"
    << "#SBATCH --cpus-per-task=" << s.workers << "\n"
    << "#SBATCH --chdir=" << s.workdir << "\n"
    << "#SBATCH --output=" << s.out_dir << "/slurm/%A_%a.out\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@120\n"
    << "# scancel and preemption send SIGTERM to every process: the sweep forwards it to its trainers, "
       "which\n"
    << "# write a checkpoint and stop (exit 75); a later run resumes those points bit-identically. USR1, 120 "
       "s\n"
    << "# before the time limit, does the same and then requeues this task.\n"
    << "requeue=0\n"
    << "trap 'requeue=1; kill -TERM \"$pid\" 2>/dev/null' USR1\n"
    << "trap 'kill -TERM \"$pid\" 2>/dev/null' TERM\n"
    << quoted(s.sweep_exe) << " --config " << quoted(s.sweep_file) << " --out " << quoted(s.out_dir)
    << " \\\n  --workers " << s.workers << " --trainer " << quoted(s.trainer)
    << " --shard \"$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT\" &\n"
    << "pid=$!\n"
    << "# wait returns early when a trap runs: wait again until the sweep has really ended.\n"
    << "wait \"$pid\"; rc=$?\n"
    << "while kill -0 \"$pid\" 2>/dev/null; do wait \"$pid\"; rc=$?; done\n"
    << "wait \"$pid\" 2>/dev/null; last=$?; [ \"$last\" -ne 127 ] && rc=$last\n"
    << "if [ \"$rc\" -eq 75 ] && [ \"$requeue\" -eq 1 ]; then\n"
    << "  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n"
    << "fi\n"
    << "exit \"$rc\"\n";
  return o.str();
}

namespace {

struct Submitted {
  std::string script, job, slurm_dir;
};

// Writes `text` to <out>/slurm/<name>-<time>-<pid>.sbatch and submits it; the job id from sbatch --parsable.
Submitted sbatch(const std::string& out_dir, const std::string& name, const std::string& text,
                 const std::vector<std::string>& sbatch_args) {
  Submitted r;
  r.slurm_dir = (fs::path(out_dir) / "slurm").string();
  make_directories(r.slurm_dir);
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  r.script = r.slurm_dir + "/" + name + "-" + stamp + "-" + std::to_string(::getpid()) + ".sbatch";
  write_file_atomic(r.script, text);
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  argv.push_back(r.script);
  auto [rc, output] = run_capture(argv);
  output = trim_trailing_whitespace(output);
  if (rc != 0) {
    if (auto nl = output.rfind('\n'); nl != std::string::npos) output = output.substr(nl + 1);
    throw RuntimeFailure("sbatch failed (exit " + std::to_string(rc) + "): " + output + " [script " +
                         r.script + "]");
  }
  // --parsable prints "jobid" or "jobid;cluster" (possibly after warnings).
  r.job = output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  r.job = r.job.substr(0, r.job.find(';'));
  return r;
}

}  // namespace

int submit_slurm_array(const SlurmSubmission& s, std::ostream& out) {
  const Submitted r = sbatch(s.out_dir, s.sweep_name, slurm_array_script(s), s.sbatch_args);
  out << "submitted job array " << r.job << ": " << s.tasks << " task(s) x " << s.workers
      << " CPU(s), script " << r.script << "\n"
      << "follow it:  squeue -j " << r.job << "   |   " << s.sweep_exe << " --status " << s.out_dir << "\n"
      << "task logs:  " << r.slurm_dir << "/" << r.job << "_<task>.out\n";
  out << "job_id=" << r.job << "\n";
  return kExitOk;
}

std::string slurm_train_script(const SlurmTrainSubmission& s) {
  for (const auto& [what, value] : {std::pair<const char*, const std::string&>{"the config's name", s.name},
                                    {"--config", s.config},
                                    {"--out", s.out_dir},
                                    {"the xsa-train executable", s.trainer},
                                    {"the working folder", s.workdir}})
    require_script_safe(what, value);
  for (const auto& set : s.overrides) require_script_safe("--set", set);
  std::ostringstream o;
  o << "#!/bin/bash\n"
    << "# Written by xsa-train --submit slurm: one run of '" << s.name << "' as "
    << s.nodes * s.tasks_per_node
    << " data-parallel ranks\n# (docs/guide.md \"Scale-out\"). The run folder must be on a filesystem every "
       "node "
       "shares.\n"
    << "#SBATCH --job-name=xsa-train-" << s.name << "\n"
    << "#SBATCH --nodes=" << s.nodes << "\n"
    << "#SBATCH --ntasks-per-node=" << s.tasks_per_node << "\n"
    << "# runtime.threads x runtime.workers per rank\n"
    << "#SBATCH --cpus-per-task=" << s.cpus_per_task << "\n"
    << "#SBATCH --chdir=" << s.workdir << "\n"
    << "#SBATCH --output=" << s.out_dir << "/slurm/%j.out\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@120\n"
    << "# Rank 0 serves the rendezvous on the job's first node; every task derives the same port.\n"
    << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n"
    << "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n"
    << "# scancel and preemption send SIGTERM: the ranks stop at one step boundary, checkpoint and exit 75. "
       "USR1,\n"
    << "# 120 s before the time limit, does the same and then requeues the job, which resumes (--resume).\n"
    << "requeue=0\n"
    << "trap 'requeue=1; kill -TERM \"$pid\" 2>/dev/null' USR1\n"
    << "trap 'kill -TERM \"$pid\" 2>/dev/null' TERM\n"
    << "srun --kill-on-bad-exit=1 " << quoted(s.trainer) << " --quiet --config " << quoted(s.config);
  for (const auto& set : s.overrides) o << " --set " << quoted(set);
  o << " \\\n  --out " << quoted(s.out_dir) << " --resume &\n"
    << "pid=$!\n"
    << "wait \"$pid\"; rc=$?\n"
    << "while kill -0 \"$pid\" 2>/dev/null; do wait \"$pid\"; rc=$?; done\n"
    << "if [ \"$rc\" -eq 75 ] && [ \"$requeue\" -eq 1 ]; then\n"
    << "  scontrol requeue \"$SLURM_JOB_ID\"\n"
    << "fi\n"
    << "exit \"$rc\"\n";
  return o.str();
}

int submit_slurm_train(const SlurmTrainSubmission& s, std::ostream& out) {
  const Submitted r = sbatch(s.out_dir, s.name, slurm_train_script(s), s.sbatch_args);
  out << "submitted job " << r.job << ": " << s.nodes << " node(s) x " << s.tasks_per_node
      << " rank(s), script " << r.script << "\n"
      << "follow it:  squeue -j " << r.job << "   |   log " << r.slurm_dir << "/" << r.job << ".out\n"
      << "job_id=" << r.job << "\n";
  return kExitOk;
}

}  // namespace xsa
