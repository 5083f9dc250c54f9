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


def run_batch(viewer, jobs, job_file, timeout=900):
    """Runs the jobs (lists of viewer arguments, each with its --screenshot) in one viewer
    process; returns the subprocess.CompletedProcess (the caller checks its status)."""
    os.makedirs(os.path.dirname(os.path.abspath(job_file)), exist_ok=True)
    write_jobs(job_file, jobs)
    return subprocess.run([viewer, "--batch", job_file], capture_output=True, text=True,
                          timeout=timeout)
