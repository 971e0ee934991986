#!/usr/bin/env python3
"""Where a JVM's CPU goes, from `perf script` of `perf record -g -p PID` (issue 36).

usage: perf script -i perf.data | cpu_split.py CPU_US_PER_IO [LABEL]

Each sample is put in one category by its leaf frame and, for kernel frames, by the system call
it runs under (the first __x64_sys_* / __do_sys_* frame up the stack) and the socket family the
call went to (unix_* or tcp_* frames on the way). JIT-compiled Java is named through the JVM's
perf map (`jcmd PID Compiler.perfmap` after the recording). Prints each category's share of the
samples and, with the process's CPU per IO (from /proc, measured over the same window), the
microseconds per IO it stands for, then the line the benchmark notes quote:

  SPLIT {"label": ..., "cpuUsPerIo": ..., "transportUs": ..., "unixUs": ..., "wakeUs": ..., "ownUs": ..., ...}

  transport: the soft RDMA transport's socket work: system calls on TCP sockets (read, writev,
             the loopback receive path they run), in a JVM whose only TCP sockets are the soft
             devices' connections (fio reaching the gateway over its Unix socket)
  unix:      the gateway's own client socket (fio's requests in, replies out): nbdkit's path has
             the same work on its TCP socket
  wake:      sleeping and waking: epoll, futex, sched_yield of the busy polls, the loadavg probe
  own:       the appliance's own code and the JVM under it: Java (the appliance's and the JDK's),
             the JVM runtime (GC, JIT, safepoints), libc (copies), page faults, and what is left
  backend:   librbd, librados and Ceph's libraries (the rbd backend), when present
  other:     the context switches of a thread preempted while it ran user code or on its way back
             from a system call: what the threads it woke, and on a busy machine every other
             runnable thread, cost it
"""
import collections
import json
import re
import sys

SOCKET_CALLS = {"read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg", "sendmmsg",
                "recvmmsg", "sendfile64", "splice", "iter_readv_writev", "iter_read", "iter_write"}
WAKE_CALLS = {"epoll_wait", "epoll_pwait", "epoll_pwait2", "select", "pselect6", "poll", "ppoll", "futex",
              "sched_yield", "nanosleep", "clock_nanosleep", "sys_poll", "epoll_ctl"}
SYSCALL = re.compile(r"(?:__(?:x64|ia32)_sys_|__do_sys_|__se_sys_|ksys_|do_sys_|do_)(\w+)")


def syscall_of(frames):
    """The system call a kernel stack runs under: the handler do_syscall_64 called (its frame is
    the one just leafward of do_syscall_64), named without its prefix (ksys_read, do_writev,
    __x64_sys_sendto, do_epoll_wait -> read, writev, sendto, epoll_wait); None outside one."""
    for i, (sym, _) in enumerate(frames):
        if sym == "do_syscall_64":
            for handler, _ in reversed(frames[:i]):
                m = SYSCALL.match(handler)
                if m:
                    return m.group(1)
            return "unknown"
    return None


def classify(frames):
    """frames: [(symbol, dso)] leaf first."""
    if not frames:
        return "own: unknown"
    sym, dso = frames[0]
    if "kernel.kallsyms" in dso or dso.startswith("[kernel"):
        call = syscall_of(frames)
        syms = " ".join(s for s, _ in frames)
        if call in SOCKET_CALLS:
            if "unix_" in syms:
                return "unix: Unix socket (fio <-> gateway)"
            if "tcp_" in syms or "inet_" in syms or "sock_" in syms:
                return "transport: TCP socket (soft RDMA)"
            return "own: other file IO"
        if call in WAKE_CALLS:
            return f"wake: {call}"
        if call in ("pread64", "pread"):
            return "wake: loadavg probe (pread)"
        if call == "unknown" and "schedule" in syms:
            # the call was done; on its way back to user space the thread gave the CPU to a
            # runnable one (one it woke, or any other on a busy machine)
            return "other: preempted at a system call's return"
        if call:
            return f"own: kernel, {call}"
        if "page_fault" in syms and "schedule" not in syms:
            return "own: page faults"
        # preempted, or interrupted, while running user code: what other runnable threads (of
        # this process or any other) cost it; on a quiet machine this is small
        return "other: preempted or interrupted outside a system call"
    if "librbd" in dso or "librados" in dso or "libceph" in dso:
        return "backend: librbd/librados"
    if dso.startswith("/tmp/perf-") or "perf-" in dso and dso.endswith(".map"):
        if "io.rnbd." in sym:
            return "own: Java, the appliance's"
        if "Interpreter" in sym or "StubRoutines" in sym or "stub" in sym.lower():
            return "own: Java, stubs and interpreter"
        return "own: Java, JDK and other"
    if "libjvm" in dso:
        if "Copy" in sym or "arraycopy" in sym or "copy" in sym:
            return "own: copies (JVM)"
        return "own: JVM runtime (GC, JIT, safepoints)"
    if "libc" in dso:
        if "mem" in sym and ("cpy" in sym or "move" in sym or "set" in sym):
            return "own: copies (libc)"
        return "own: libc, other"
    if "libnio" in dso or "libjava" in dso or "libnet" in dso:
        return "own: JDK native"
    return "own: unknown"


def samples(lines):
    frames = None
    for line in lines:
        if not line.strip():
            if frames is not None:
                yield frames
            frames = None
            continue
        if not line[0].isspace():
            if frames is not None:
                yield frames
            frames = []
            continue
        m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
        if m and frames is not None:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
            frames.append((sym, m.group(2)))
    if frames is not None:
        yield frames


def main():
    cpu = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    c = collections.Counter(classify(f) for f in samples(sys.stdin))
    n = sum(c.values())
    if n == 0:
        print("no samples")
        return
    print(f"{label}: {n} samples, {cpu:.1f} us of CPU per IO")
    for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
        print(f"  {100 * v / n:5.1f} %  {cpu * v / n:7.2f} us/IO  {k}")
    group = collections.Counter()
    for k, v in c.items():
        group[k.split(":")[0]] += v
    out = {"label": label, "samples": n, "cpuUsPerIo": round(cpu, 2)}
    for g in ("transport", "unix", "wake", "own", "backend", "other"):
        out[g + "Us"] = round(cpu * group[g] / n, 2)
    out["javaApplianceUs"] = round(cpu * c["own: Java, the appliance's"] / n, 2)
    print("SPLIT " + json.dumps(out))


if __name__ == "__main__":
    main()
