#!/usr/bin/env python3
"""One fio run (nbd engine) with CPU per IO for every process that served it.

usage: fio_point.py TARGET POINT REP URI SECONDS SIZE SERVER_PID [taskset args...]

Prints one JSON line: IOPS, MiB/s, mean and p50 latency, and CPU time per IO of the server
process (utime+stime from /proc/PID/stat), of fio (its own usr/sys from fio's JSON), their sum,
and what every other process on the machine used meanwhile (/proc/stat busy time minus both),
in % of one CPU, so a noisy neighbour is visible next to each figure.
"""
import json, os, subprocess, sys, time

target, point, rep, uri, secs, size, srv = sys.argv[1:8]
pin = sys.argv[8:]
rw, bs, qd = point.split(":")
hz = os.sysconf("SC_CLK_TCK")


def proc_ticks(pid):
    s = open(f"/proc/{pid}/stat").read()
    f = s[s.rindex(")") + 2:].split()
    return int(f[11]) + int(f[12])


def busy_ticks():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: all but idle and iowait
    return f[0] + f[1] + f[2] + f[5] + f[6] + f[7]


cmd = pin + ["fio", f"--name={target}", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", f"--bs={bs}",
             f"--iodepth={qd}", f"--size={size}", "--time_based", f"--runtime={secs}", "--output-format=json"]
s0, b0, t0 = proc_ticks(srv), busy_ticks(), time.monotonic()
out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
s1, b1, t1 = proc_ticks(srv), busy_ticks(), time.monotonic()
j = json.loads(out[out.index("{"):])["jobs"][0]  # fio may print "connected to NBD server" first
op = "read" if j["read"]["io_bytes"] > 0 else "write"
r = j[op]
ios = max(r["total_ios"], 1)
wall = t1 - t0
srv_s = (s1 - s0) / hz
fio_s = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] / 1000.0
other_s = max(0.0, (b1 - b0) / hz - srv_s - fio_s)
print(json.dumps({
    "target": target, "point": point, "rep": int(rep), "iops": r["iops"], "mibPerSecond": r["bw_bytes"] / 2**20,
    "meanUs": r["lat_ns"]["mean"] / 1e3, "p50Us": r["clat_ns"].get("percentile", {}).get("50.000000", 0) / 1e3,
    "serverCpuUsPerIo": srv_s * 1e6 / ios, "fioCpuUsPerIo": fio_s * 1e6 / ios,
    "cpuUsPerIo": (srv_s + fio_s) * 1e6 / ios, "otherCpuPct": other_s / wall * 100}))
