#!/usr/bin/env python3
"""xsa-export and model.init_from on real runs (docs/guide.md "Export").

Two small paired runs on the tests' generated data: A trains sa, xsa, lambda=0.5, learned and xsa@1 (RoPE,
tied embeddings), B trains sa and tanh_gate with learned positions, QK-norm, a headwise output gate and an
untied output layer. Every variant is exported, then:
- the file is read by the field's own library: on Debian 13 and later Hugging Face's safetensors
  (python3-safetensors, required there) with safetensors.torch.load_file, and compared tensor by tensor with
  the reference's own reader; on Debian 12 (no package) by the reference reader (scripts/reference/model.py);
- the header is the format's: 8-byte little-endian length, a JSON object padded to 8 bytes, F32 tensors that
  tile the data, the documented __metadata__;
- the PyTorch reference model rebuilt from config.json and those tensors (float64) reproduces the logits the
  C++ model computes from the run's final checkpoint (xsa-export-logits) on 4 validation windows within 1e-5,
  and the run's recorded final val loss over every validation window within 1e-5 (relative), and so its loss by
  position (final.loss_by_position: each bucket's positions sliced here from the reference's per-token losses);
- the model card has the Hub's front matter and the run's numbers;
- model.init_from starts a run from the export: its recorded initial weights checksum is the export's
  weights_checksum (the step-0 weights are the exported ones, bit for bit);
- bad input gets one line on stderr, exit 2 and no output: a variant the run lacks, a run that has not finished,
  an unfinished checkpoint, a damaged checkpoint, a run without checkpoints, an existing --out without
  --force, an --out that is, contains or lies inside the run or the data (with --force too: the run stays as
  it was), a checkpoint of another variant under this one's name (export and --resume); and, given to
  init_from, an export of another architecture or whose header lies (offsets outside the file, overlapping
  tensors, a dtype it does not know, a tensor named twice, a length past the end);
- a killed export's temporary folder is removed by the next export, a live writer's kept.

Usage: export_test.py XSA_TRAIN XSA_EXPORT XSA_EXPORT_LOGITS DATA_DIR WORK_DIR
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "reference"))
from checklist import Checklist  # noqa: E402
import model as reference  # noqa: E402

TRAIN, EXPORT, LOGITS, DATA, WORK = sys.argv[1:6]
check = Checklist("export_test", WORK)
TOL = 1e-5

CONFIG = """name: export
seed: 11
data: {dir: %s, seq_len: 32}
model: {n_layer: 2, d_model: 32, n_head: 2, d_head: 16}
attention: {variants: [sa, xsa]}
train: {steps: 12, batch_size: 8, warmup_steps: 2, log_interval: 4, checkpoint_interval: 4, lr: 0.01}
eval: {interval: 12, batches: 2}
metrics: {bias_interval: 12, bias_batches: 1}
sample: {count: 1, tokens: 4}
runtime: {threads: 1, workers: 2}
""" % DATA
config_path = os.path.join(WORK, "export.yaml")
with open(config_path, "w") as f:
    f.write(CONFIG)


def run(cmd, env=None):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env)


def train(out, *sets, env=None):
    args = [TRAIN, "--config", config_path, "--out", out, "--quiet"]
    for s in sets:
        args += ["--set", s]
    return run(args, env)


def one_line_refusal(p, what, needle):
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr,
          "%s: exit 2 and one line naming it (exit %d, %r)" % (what, p.returncode, p.stderr.strip()[:300]))


RUNS = {
    "A": (["attention.variants=[sa, xsa, 0.5, learned, xsa@1]"], ["sa", "xsa", "lambda=0.5", "learned", "xsa@1"]),
    "B": (["attention.variants=[sa, tanh_gate]", "model.pos=learned", "model.qk_norm=true",
           "attention.output_gate=headwise", "model.tie_embeddings=false", "attention.lambda_lr_scale=30"],
          ["sa", "tanh_gate"]),
}
for name, (sets, _) in RUNS.items():
    p = train(os.path.join(WORK, "run" + name), *sets)
    check(p.returncode == 0, "run %s trains (%s)" % (name, p.stderr.strip()[-300:]))

debian_version = 0
try:
    for line in open("/etc/os-release"):
        if line.startswith("VERSION_ID="):
            debian_version = int(line.split("=")[1].strip().strip('"'))
except (OSError, ValueError):
    pass
try:
    from safetensors.torch import load_file as hf_load_file
except ImportError:
    hf_load_file = None
if debian_version >= 13:
    check(hf_load_file is not None, "Debian %d: Hugging Face's safetensors is installed (python3-safetensors)"
          % debian_version)
print("reader: %s" % ("safetensors.torch.load_file (Hugging Face)" if hf_load_file else
                      "scripts/reference/model.py read_safetensors (no python3-safetensors on this machine)"))

val = torch.frombuffer(bytearray(open(os.path.join(DATA, "val.bin"), "rb").read()), dtype=torch.int16)
val = val.to(torch.int64) & 0xFFFF  # uint16 little-endian ids
largest_logit_diff = 0.0

for name, (_, variants) in RUNS.items():
    run_dir = os.path.join(WORK, "run" + name)
    results = json.load(open(os.path.join(run_dir, "results.json")))
    T = results["config"]["data"]["seq_len"]
    for variant in variants:
        out = os.path.join(WORK, "export%s-%s" % (name, variant))
        p = run([EXPORT, run_dir, "--variant", variant, "--out", out])
        check(p.returncode == 0, "%s/%s: xsa-export exits 0 (%s)" % (name, variant, p.stderr.strip()[:200]))
        if p.returncode != 0:
            continue
        files = sorted(os.listdir(out))
        check(files == ["README.md", "config.json", "model.safetensors", "pieces.json", "tokenizer.model"],
              "%s/%s: the folder holds exactly the five files (%s)" % (name, variant, files))
        check(open(os.path.join(out, "tokenizer.model"), "rb").read()
              == open(os.path.join(DATA, "tokenizer.model"), "rb").read(),
              "%s/%s: tokenizer.model is the run's" % (name, variant))

        # The format, read byte by byte.
        raw = open(os.path.join(out, "model.safetensors"), "rb").read()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        meta = header.pop("__metadata__")
        spans = sorted(tuple(e["data_offsets"]) for e in header.values())
        tiled = all(a[1] == b[0] for a, b in zip(spans, spans[1:])) and spans[0][0] == 0 \
            and spans[-1][1] == len(raw) - 8 - n
        check(n % 8 == 0 and raw[8:9] == b"{" and tiled and all(e["dtype"] == "F32" for e in header.values()),
              "%s/%s: header length %d (a multiple of 8), JSON object, F32 tensors tiling the data"
              % (name, variant, n))
        run_record = next(r for r in results["runs"] if r["variant"] == variant)
        config_json = json.load(open(os.path.join(out, "config.json")))
        check(meta.get("format") == "pt" and meta.get("xsa.variant") == variant
              and meta.get("xsa.init_checksum") == run_record["init_checksum"]
              and meta.get("xsa.config_sha256") == config_json["provenance"]["config_sha256"]
              and json.loads(meta.get("xsa.lambda")) == config_json["variant"]["lambda"],
              "%s/%s: __metadata__ holds format pt, the variant, λ, the init checksum and the config hash"
              % (name, variant))

        # The field's library, or the reference reader; both where both exist.
        ours = reference.read_safetensors(os.path.join(out, "model.safetensors"))[0]
        tensors = hf_load_file(os.path.join(out, "model.safetensors")) if hf_load_file else ours
        if hf_load_file:
            same = sorted(tensors) == sorted(ours) and all(torch.equal(tensors[k], ours[k]) for k in ours)
            check(same, "%s/%s: safetensors.torch.load_file and the reference reader read the same tensors"
                  % (name, variant))
        model = reference.load_exported(out, torch.float64, tensors={k: v.clone() for k, v in tensors.items()})
        lam = config_json["variant"]["lambda"]
        if variant == "learned":
            theta = tensors["blocks.0.attn.xsa_theta"].double()
            check(max(abs(a - b) for a, b in zip(torch.sigmoid(theta).tolist(), lam[0])) < 1e-6,
                  "%s/%s: config.json's λ is sigmoid(θ) of the exported θ" % (name, variant))

        # Logits against the C++ model of the final checkpoint, on 4 validation windows.
        logits_path = os.path.join(WORK, "logits-%s-%s.bin" % (name, variant))
        p = run([LOGITS, run_dir, variant, DATA, "4", logits_path])
        check(p.returncode == 0, "%s/%s: xsa-export-logits runs (%s)" % (name, variant, p.stderr.strip()[:200]))
        if p.returncode != 0:
            continue
        W, T_, V = map(int, p.stdout.split())
        cpp = torch.frombuffer(bytearray(open(logits_path, "rb").read()), dtype=torch.float32).reshape(W, T_, V)
        idx = torch.stack([val[k * T:k * T + T] for k in range(4)])
        with torch.no_grad():
            ref = model(idx)
        diff = (cpp.double() - ref).abs()
        worst = (diff / ref.abs().clamp(min=1.0)).max().item()
        largest_logit_diff = max(largest_logit_diff, diff.max().item())
        check(worst <= TOL, "%s/%s: reference logits from the export match xsa-train's model: max |diff| %.2e "
              "(tolerance %g)" % (name, variant, diff.max().item(), TOL))

        # The recorded final val loss over every validation window (starts k*T, k < (n-1)//T).
        windows = (val.numel() - 1) // T
        losses = []
        position_sums = torch.zeros(T, dtype=torch.float64)  # position t (1-based) is column t - 1
        with torch.no_grad():
            for k0 in range(0, windows, 64):
                ks = range(k0, min(windows, k0 + 64))
                x = torch.stack([val[k * T:k * T + T] for k in ks])
                y = torch.stack([val[k * T + 1:k * T + T + 1] for k in ks])
                logp = torch.log_softmax(model(x), dim=-1)
                token = -logp.gather(-1, y.unsqueeze(-1)).squeeze(-1)  # (windows, T)
                losses += token.mean(dim=1).tolist()
                position_sums += token.sum(dim=0)
        mean = sum(losses) / len(losses)
        recorded = run_record["final"]["val_loss"]
        check(abs(mean - recorded) <= TOL * recorded,
              "%s/%s: the reference's val loss over %d windows %.7f equals the recorded %.7f (rel %.1e)"
              % (name, variant, len(losses), mean, recorded, abs(mean - recorded) / recorded))
        # The loss by position: the recorded buckets tile positions 1..T as documented (T = 32: 1-16, 17-32),
        # and each bucket's loss is the reference's mean over those positions of every window.
        buckets = run_record["final"].get("loss_by_position", [])
        check([(b["first"], b["last"], b["tokens"]) for b in buckets]
              == [(1, 16, windows * 16), (17, 32, windows * 16)] and T == 32,
              "%s/%s: loss_by_position has the buckets 1-16 and 17-32 over %d windows: %s"
              % (name, variant, windows, [(b["first"], b["last"], b["tokens"]) for b in buckets]))
        for b in buckets:
            ref_loss = position_sums[b["first"] - 1:b["last"]].sum().item() / (windows * (b["last"] - b["first"] + 1))
            check(abs(ref_loss - b["loss"]) <= TOL * ref_loss,
                  "%s/%s: the reference's loss at positions %d-%d %.7f equals the recorded %.7f (rel %.1e)"
                  % (name, variant, b["first"], b["last"], ref_loss, b["loss"], abs(ref_loss - b["loss"]) / ref_loss))

        card = open(os.path.join(out, "README.md")).read()
        front = card.split("---\n")[1] if card.startswith("---\n") else ""
        check(all(s in front for s in ("library_name: xsa", "- exclusive-self-attention",
                                        "- roneneldan/TinyStories", "pipeline_tag: text-generation"))
              and "%.4f" % recorded in card and "from scripts.reference.model import load_exported" in card,
              "%s/%s: the model card has the Hub's front matter, the val loss and the loading lines"
              % (name, variant))
print("largest logit difference, export vs xsa-train: %.3e" % largest_logit_diff)

# The card's (and the README's) two lines of Python, run as written from the repository's root.
card = open(os.path.join(WORK, "exportA-xsa", "README.md")).read()
snippet = card.split("```python\n")[1].split("```")[0].replace("path/to/this/folder", os.path.join(WORK, "exportA-xsa"))
snippet += "import torch\nassert model(torch.zeros(1, 4, dtype=torch.long)).shape == (1, 4, 512)\nprint('loaded')\n"
p = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                   cwd=os.path.join(HERE, "..", ".."))
check(p.returncode == 0 and p.stdout.strip() == "loaded" and len(snippet.splitlines()) == 5,
      "the model card's two lines load the export from the repository's root (%s)" % p.stderr.strip()[-200:])

# init_from: the exported weights are the new run's step-0 weights.
exported = os.path.join(WORK, "exportA-xsa")
weights_checksum = json.load(open(os.path.join(exported, "config.json")))["provenance"]["weights_checksum"]
p = train(os.path.join(WORK, "init_from"), "model.init_from=" + exported, "train.steps=4")
check(p.returncode == 0, "a run with model.init_from trains (%s)" % p.stderr.strip()[:200])
if p.returncode == 0:
    r = json.load(open(os.path.join(WORK, "init_from", "results.json")))
    check(all(run["init_checksum"] == weights_checksum for run in r["runs"]),
          "init_from: every variant's initial weights checksum is the export's weights_checksum (%s)"
          % weights_checksum)

# Bad input: one line, exit 2, nothing written.
runA = os.path.join(WORK, "runA")
p = run([EXPORT, runA, "--variant", "gate", "--out", os.path.join(WORK, "x1")])
one_line_refusal(p, "a variant the run lacks", "no variant 'gate'")
check(not os.path.exists(os.path.join(WORK, "x1")), "... and no output folder")
p = run([EXPORT, runA, "--variant", "xsa", "--out", os.path.join(WORK, "exportA-xsa")])
one_line_refusal(p, "an existing --out without --force", "--force")
p = run([EXPORT, runA, "--variant", "xsa", "--out", os.path.join(WORK, "exportA-xsa"), "--force"])
check(p.returncode == 0 and not [f for f in os.listdir(WORK) if ".tmp-" in f or ".old-" in f],
      "--force replaces it, leaving no temporary folder")
p = run([EXPORT, runA, "--variant", "xsa", "--out", os.path.join(WORK, "exportA-xsa") + "/", "--force"])
check(p.returncode == 0 and sorted(os.listdir(os.path.join(WORK, "exportA-xsa"))) == ["README.md", "config.json",
      "model.safetensors", "pieces.json", "tokenizer.model"], "--out with a trailing slash is the same folder")



def listing(folder):
    """Every file below folder with its size and modification time: what a command must leave as it was."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            st = os.stat(os.path.join(root, name))
            out[os.path.relpath(os.path.join(root, name), folder)] = (st.st_size, st.st_mtime_ns)
    return out


# An output never destroys an input: --out that is the run folder, lies inside it or contains it is refused
# with --force too, and the run stays as it was (a symbolic link to the run is the run).
os.symlink(runA, os.path.join(WORK, "link-to-runA"))
before = listing(runA)
for tag, out, relation in (("the run folder", runA, ": is the run folder"),
                           ("the run's checkpoints/", os.path.join(runA, "checkpoints"), ": lies inside the run"),
                           ("a folder inside the run", os.path.join(runA, "exports", "xsa"), ": lies inside the run"),
                           ("the folder above the run", WORK, ": contains the run folder"),
                           ("a link to the run", os.path.join(WORK, "link-to-runA"), ": is the run folder"),
                           ("the run via ..", os.path.join(runA, "checkpoints", ".."), ": is the run folder"),
                           ("the data folder", DATA, ": is the data folder")):
    p = run([EXPORT, runA, "--variant", "xsa", "--out", out, "--force"])
    one_line_refusal(p, "--out is %s (with --force)" % tag, relation)
    check(listing(runA) == before and os.path.isdir(DATA), "... and the run and the data are as they were (%s)" % tag)
check(not os.path.exists(os.path.join(runA, "exports")), "... and nothing was created inside the run")

# Every artifact proves what it is: a run folder whose xsa.pt is a copy of sa.pt (same config, same initial
# weights) does not export SA's weights under XSA's name.
swapped = os.path.join(WORK, "swapped")
shutil.copytree(runA, swapped)
shutil.copy(os.path.join(swapped, "checkpoints", "sa.pt"), os.path.join(swapped, "checkpoints", "xsa.pt"))
p = run([EXPORT, swapped, "--variant", "xsa", "--out", os.path.join(WORK, "x6")])
one_line_refusal(p, "a checkpoint of another variant under this one's name", 'holds variant "sa", not "xsa"')
check(not os.path.exists(os.path.join(WORK, "x6")), "... and no output folder")

# A killed export's temporary folder (no live writer holds its lock) is removed by the next export to the same
# place; one a live writer holds (here: this process's flock) is left alone.
import fcntl  # noqa: E402
orphan = os.path.join(WORK, ".exportA-xsa.tmp-Ab12Cd")
live = os.path.join(WORK, ".exportA-xsa.tmp-Ef34Gh")
for folder in (orphan, live):
    os.makedirs(folder)
    open(os.path.join(folder, "model.safetensors"), "wb").write(b"half")
held = os.open(live, os.O_RDONLY)
fcntl.flock(held, fcntl.LOCK_EX)
p = run([EXPORT, runA, "--variant", "xsa", "--out", os.path.join(WORK, "exportA-xsa"), "--force"])
check(p.returncode == 0 and not os.path.exists(orphan) and os.path.exists(live),
      "the next export removes a killed export's temporary folder and keeps a live writer's (exit %d, %s)"
      % (p.returncode, p.stderr.strip()[:200]))
os.close(held)
shutil.rmtree(live)

killed = os.path.join(WORK, "killed")
# One worker: sa trains first, so the process ends right after sa's step-8 checkpoint, whatever the machine's load
# (with two workers xsa could reach step 8 before sa had written any checkpoint).
p = train(killed, "runtime.workers=1", env={"XSA_FAULT_EXIT_AFTER_STEP": "8"})
check(os.path.exists(os.path.join(killed, "checkpoints", "sa.pt")) and not os.path.exists(
    os.path.join(killed, "results.json")), "a run killed after step 8 leaves sa's step-8 checkpoint, no results.json")
p = run([EXPORT, killed, "--variant", "xsa", "--out", os.path.join(WORK, "x2")])
one_line_refusal(p, "a run that has not finished", "no results.json")
mixed = os.path.join(WORK, "mixed")
shutil.copytree(runA, mixed)
shutil.copy(os.path.join(killed, "checkpoints", "sa.pt"), os.path.join(mixed, "checkpoints", "sa.pt"))
p = run([EXPORT, mixed, "--variant", "sa", "--out", os.path.join(WORK, "x3")])
one_line_refusal(p, "an unfinished checkpoint", "unfinished")
with open(os.path.join(mixed, "checkpoints", "xsa.pt"), "r+b") as f:
    f.truncate(os.path.getsize(os.path.join(mixed, "checkpoints", "xsa.pt")) // 2)
p = run([EXPORT, mixed, "--variant", "xsa", "--out", os.path.join(WORK, "x4")])
one_line_refusal(p, "a damaged checkpoint", "damaged")
# Resume compares it too: xsa's checkpoint replaced by sa's (same run, same step) is refused, not continued.
resumed = os.path.join(WORK, "resumed-swapped")
shutil.copytree(killed, resumed)
os.rename(os.path.join(resumed, "checkpoints", "sa.pt"), os.path.join(resumed, "checkpoints", "xsa.pt"))
p = run([TRAIN, "--config", config_path, "--out", resumed, "--quiet", "--resume", "--set", "runtime.workers=1"])
one_line_refusal(p, "--resume from a checkpoint of another variant", 'holds variant "sa", not "xsa"')
check(not os.path.exists(os.path.join(resumed, "results.json")), "... and no results.json")
masked = os.path.join(WORK, "masked")
train(masked, "data.doc_mask=true")
p = run([EXPORT, masked, "--variant", "xsa", "--out", os.path.join(WORK, "x6")])
one_line_refusal(p, "a data.doc_mask run (the format cannot express it)", "data.doc_mask")
check(not os.path.exists(os.path.join(WORK, "x6")), "... and no output folder")
nockpt = os.path.join(WORK, "nockpt")
train(nockpt, "train.checkpoint_interval=0")
p = run([EXPORT, nockpt, "--variant", "xsa", "--out", os.path.join(WORK, "x5")])
one_line_refusal(p, "a run without checkpoints", "no final checkpoint")
check(not any(os.path.exists(os.path.join(WORK, x)) for x in ("x2", "x3", "x4", "x5")), "... and no output folders")

p = train(os.path.join(WORK, "y0"), "model.init_from=" + exported, "model.d_model=64")
one_line_refusal(p, "init_from with another architecture", "architecture differs")


def lying(tag, edit):
    """A copy of the xsa export whose model.safetensors header is rewritten by edit(header) -> header."""
    folder = os.path.join(WORK, "lying-" + tag)
    shutil.copytree(exported, folder)
    path = os.path.join(folder, "model.safetensors")
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = edit(json.loads(raw[8:8 + n]))
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
    return folder


def outside(h):
    h["wte.weight"]["data_offsets"][1] += 10 ** 6
    return h


def overlap(h):
    names = sorted(k for k in h if k != "__metadata__")
    h[names[1]]["data_offsets"] = list(h[names[0]]["data_offsets"])
    h[names[1]]["shape"] = h[names[0]]["shape"]
    return h


def unknown_dtype(h):
    h["wte.weight"]["dtype"] = "F8_E9M9"
    return h


def named_twice(h):
    """The header's text with wte.weight's entry given a second time (pointing at another tensor's bytes): JSON
    readers keep one of the two silently."""
    other = sorted(k for k in h if k not in ("__metadata__", "wte.weight"))[0]
    text = json.dumps(h)
    return ('{"wte.weight": %s, ' % json.dumps(h[other]) + text[1:]).encode()


for tag, edit, needle in (("outside", outside, "outside"), ("overlap", overlap, "overlaps"),
                          ("dtype", unknown_dtype, "unknown dtype"),
                          ("named-twice", named_twice, 'the key "wte.weight" appears twice')):
    folder = lying(tag, edit)
    out = os.path.join(WORK, "y-" + tag)
    p = train(out, "model.init_from=" + folder)
    one_line_refusal(p, "init_from with a header that lies (%s)" % tag, needle)
    check(not os.path.exists(out), "... and no run folder (%s)" % tag)
folder = os.path.join(WORK, "lying-length")
shutil.copytree(exported, folder)
with open(os.path.join(folder, "model.safetensors"), "r+b") as f:
    f.write(struct.pack("<Q", 1 << 40))
p = train(os.path.join(WORK, "y-length"), "model.init_from=" + folder)
one_line_refusal(p, "init_from with a header length past the end", "header length")

check.finish()
