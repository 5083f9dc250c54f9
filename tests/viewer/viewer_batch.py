"""Runs several screenshot runs of the viewer in one process (splineview --batch FILE), for the
Python viewer tests: each job is the argument list a separate run would take."""
import os
import shlex
import subprocess


def write_jobs(path, jobs):
    """Writes the job file: one line per job, its words quoted as a shell would need."""
    with open(path, "w") as f:
        f.write("# written by tests/viewer/viewer_batch.py\n")
        for args in jobs:
            f.write(" ".join(shlex.quote(str(a)) for a in args) + "\n")


def run_batch(viewer, jobs, job_file, timeout=900, cwd=None):
    """Runs the jobs (lists of viewer arguments, each with its --screenshot) in one viewer
    process (in folder cwd, where relative paths of the jobs start); returns the
    subprocess.CompletedProcess (the caller checks its status)."""
    job_file = os.path.abspath(job_file)
    os.makedirs(os.path.dirname(job_file), exist_ok=True)
    write_jobs(job_file, jobs)
    return subprocess.run([viewer, "--batch", job_file], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def tool_batch(tool, commands, job_file):
    """Runs splinetool commands (argument lists without the program name) in order in one
    `splinetool batch` process, each as its separate run would (app/splinetool/README.md,
    "Batches"); returns each command's standard output, cut at the offsets of the batch's
    --log. Raises RuntimeError naming the failing line when the batch fails."""
    import json
    write_jobs(job_file, commands)
    log, out = job_file + ".log", job_file + ".out"
    with open(out, "wb") as stdout:
        r = subprocess.run([tool, "batch", job_file, "--log", log], stdout=stdout,
                           stderr=subprocess.PIPE, text=False)
    if r.returncode != 0:
        raise RuntimeError("splinetool batch %s exited %d: %s" % (
            job_file, r.returncode, r.stderr.decode(errors="replace")))
    data = open(out, "rb").read()
    with open(log) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    if len(entries) != len(commands):
        raise RuntimeError("splinetool batch %s ran %d of %d commands"
                           % (job_file, len(entries), len(commands)))
    outputs, start = [], 0
    for e in entries:
        outputs.append(data[start:e["stdout_end"]].decode())
        start = e["stdout_end"]
    return outputs


def run_cases(viewer, cases, outdir, skip_if=None):
    """Runs test cases written as generators: each yields the viewer arguments of a screenshot
    run (a list) and, resumed, checks its files (and may yield its next run). Every case's first
    run renders in one viewer process (--batch), then every case's second run in another, and so
    on. skip_if(CompletedProcess) may end the test (e.g. exit 77 without a GL context). Raises
    RuntimeError when a batch fails."""
    pending = [(c, next(c)) for c in cases]
    batch = 0
    while pending:
        batch += 1
        r = run_batch(viewer, [job for _, job in pending],
                      os.path.join(outdir, "jobs%d.txt" % batch))
        if skip_if is not None:
            skip_if(r)
        if r.returncode != 0:
            raise RuntimeError("splineview --batch exited %d: %s%s"
                               % (r.returncode, r.stdout, r.stderr))
        following = []
        for case, _ in pending:
            try:
                following.append((case, next(case)))
            except StopIteration:
                pass
        pending = following
