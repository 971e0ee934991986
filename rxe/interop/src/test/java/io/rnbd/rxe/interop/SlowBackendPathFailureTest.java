package io.rnbd.rxe.interop;

import static io.rnbd.rxe.interop.LinuxRnbd.path;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rxe.interop.LinuxRnbd.MapSpec;
import io.rnbd.rxe.interop.LinuxRnbd.Mapped;
import io.rnbd.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Linux's rnbd-client on an appliance file export whose device answers in 20 ms (dm-delay over
 * a loop device), two paths, fio writing 128 KiB requests at queue depth 16 and verifying every
 * block (crc32c) run after run, while the second path is cut twice: first disconnected through
 * rtrs-client's sysfs ({@code paths/<path>/disconnect}, then {@code reconnect}), then its link
 * taken down ({@code ip link set dummy3 down}: nothing closes, the path dies of silence, as a
 * pulled cable does; Linux's client gives it up when its requests and heartbeats go
 * unanswered) and, since rxe does not come back from that, removed. Zero verify errors, the
 * appliance answers every request with 0, the first path never leaves "connected", and zero IO
 * errors, but on a kernel that preempts in the kernel (7.x): there Linux's client can fail a
 * request by itself while a path is down, and {@link FioLoop} says how the test tells that apart.
 *
 * <p>The second path runs over rxe3 ({@link Guest#linkDownAddr()}), which stays down after the
 * test as a failed port stays until replaced: on 6.1 {@code rdma link delete} of a device
 * whose netdev went down blocks in the kernel (CI run 39: past 5 minutes), so a shared device
 * could not be made anew for the classes after this one.
 *
 * <p>With 20 ms per request, requests sit in the backend when the path goes: Linux's client
 * fails them over to the first path with the same permit (buf_id) while the appliance's
 * backend may still be working on the first copy (rtrs_clt_failover_req).
 *
 * <p>The session keeps Linux's default multipath policy, min-inflight. Under round-robin,
 * 7.3's client failed a read with EIO now and then (CI, 2026-11-29 14:44, and runs here) while the
 * dead path waited to reconnect, with no error on the appliance's side: its path iterator
 * (rtrs_clt_request, rtrs_clt_failover_req) tries {@code paths_num} paths, each the next after
 * a per-CPU pointer every request moves, so a request preempted or migrated between its two
 * tries can be handed the dead path twice and fail with ECONNABORTED. Debian's 7.3 kernel
 * preempts there (PREEMPT_LAZY), its 6.1 and 6.12 do not (PREEMPT_VOLUNTARY). min-inflight
 * picks among connected paths only. docs/interop.md, "Round-robin with a dead path on 7.x".
 */
class SlowBackendPathFailureTest {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest();

    private static final int PORT = 1237;
    private static final String SESS = "interop-slow";
    private static final int DELAY_MS = 20;

    @TempDir
    Path tmp;
    private Mapped mapped;
    private SlowDevice slow;

    @BeforeAll
    static void slowDevices() {
        SlowDevice.require();
    }

    @AfterEach
    void removeSlowDevice() {
        if (slow != null) {
            slow.close();
        }
    }

    @Test
    void fioVerifiesThroughADisconnectAndALinkDownOnASlowDevice() throws Exception {
        LinuxRnbd.unloadAll();
        slow = SlowDevice.create("slow0", 64, DELAY_MS, tmp);
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.linkDownAddr()), PORT)) {
            a.exportFile("slow0", slow.path());
            LinuxRnbd.loadClient();
            mapped = LinuxRnbd.map(MapSpec.of(SESS, "slow0", path(Guest.addr()), path(Guest.linkDownAddr())).destPort(PORT));
            assertEquals(64L << 20, mapped.size());
            cutTheSecondPathTwiceUnderFio(a, mapped, SESS);
            Guest.step("rtrs-client's view at the end: " + Guest.sh(Guest.timeout(Guest.COMMAND),
                    "dmesg | grep -E 'rtrs|rnbd' | tail -20"));
            LinuxRnbd.unmap(mapped, false);
            mapped = null;
        }
    }

    /**
     * The sequence this class and {@link RbdBackendPathFailureTest} run on a mapped device of two
     * paths (the second over rxe3): under a fio verify loop, the second path disconnected and
     * reconnected, then its link taken down and the dead path removed. No verify error, the
     * appliance answered no request with an errno, the first path connected throughout, and no IO
     * error in the kernel log but those Linux's client made by itself on a kernel that preempts
     * (the class comment of {@link FioLoop}).
     */
    static void cutTheSecondPathTwiceUnderFio(Appliance appliance, Mapped mapped, String sess) throws Exception {
        // Linux's default policy, as a host has it; see the class comment for round-robin
        LinuxRnbd.mpathPolicy(sess, "min-inflight");
        Path first = LinuxRnbd.pathTo(sess, Guest.addr()).orElseThrow();
        Path second = LinuxRnbd.pathTo(sess, Guest.linkDownAddr()).orElseThrow();
        long errorsBefore = Disk.ioErrorLines();
        List<String> byTheClient;
        try (FioLoop fio = new FioLoop(mapped.dev()); PathWatch watch = PathWatch.linux(first)) {
            fio.awaitMore(1);

            Guest.step("disconnect the path to " + Guest.linkDownAddr() + " during fio");
            LinuxRnbd.disconnect(second);
            assertEquals("disconnected", LinuxRnbd.state(second));
            fio.awaitMore(2);
            Guest.step("reconnect it");
            LinuxRnbd.reconnect(second);
            Await.until("the path reconnected", () -> "connected".equals(LinuxRnbd.state(second)),
                    Guest.timeout(Duration.ofSeconds(15)));
            fio.awaitMore(2);
            assertTrue(LinuxRnbd.stats(second).requests() > 0, "the reconnected path carries IO");

            Guest.step("take dummy3 (rxe3) down during fio: the path dies of silence");
            Guest.check("ip", "link", "set", "dummy3", "down");
            Await.until("Linux's client gave the silent path up",
                    () -> !"connected".equals(LinuxRnbd.state(second)), Guest.timeout(Duration.ofSeconds(60)));
            fio.awaitMore(3);
            // rxe does not recover a device whose netdev went down and up (seen on 6.1 and 7.3:
            // every later connect over it times out), so the dead path is removed, as a host
            // gives up a failed port; rxe3 stays down (see the class comment)
            Guest.step("remove the dead path");
            LinuxRnbd.removePath(second);
            fio.awaitMore(1);
            assertEquals(List.of(), watch.leftConnected(), "the first path stayed connected throughout");
            byTheClient = fio.endedByTheClient();
        }
        assertEquals(Map.of(), appliance.received().errnoAnswers(), "the appliance's answers that carried an errno");
        if (byTheClient.isEmpty()) {
            assertEquals(errorsBefore, Disk.ioErrorLines(), "I/O errors in the kernel log:\n" + Guest.dmesgTail(30));
        } else {
            Guest.step(byTheClient.size() + " fio run(s) ended by an IO error Linux's client made itself, on a "
                    + "kernel that preempts; the appliance answered every request with 0, the first path stayed "
                    + "connected, no block failed its verify:\n" + String.join("\n", byTheClient));
        }
    }

    /**
     * fio runs one after another until closed, each writing 16 MiB in 128 KiB requests at depth
     * 16 and reading every block back against its crc32c; one that exits non-zero (an IO error,
     * a verify error) ends the loop with its output and the kernel log.
     *
     * <p>With one exception, on a kernel that preempts in the kernel (Debian's 7.x, PREEMPT_LAZY;
     * its 6.1 and 6.12 run voluntary): there a run that an IO error ends, with no block failing
     * its verify, is kept as the client's and the loop goes on. Linux's client can fail a request
     * by itself there while one of the two paths is not connected. Its min-inflight iterator
     * (rtrs-clt.c, {@code get_next_path_min_inflight}) marks a path it tried in that path's
     * per-CPU list entry ({@code mp_skip_entry}) and skips a path whose entry is marked, all
     * under {@code rcu_read_lock()}, which a PREEMPT_RCU kernel may preempt: a request submitted
     * on that CPU meanwhile (fio's, or the failover work's resends) finds the one connected path
     * marked by the preempted one, gets no path, and {@code rtrs_clt_request} (or
     * {@code rtrs_clt_failover_req}) returns ECONNABORTED, which {@code rnbd_queue_rq} turns
     * into an IO error without the request reaching the server (docs/interop.md, "Linux's
     * client and a dead path on kernels that preempt"). The appliance cannot cause or prevent
     * that; the sequence shows the rest is not the appliance's: it answered every request with 0,
     * the first path never left connected, every run that ended verified every block, and a run
     * the client ended does not count toward {@link #awaitMore}, so each phase still has its
     * verified runs.
     */
    static final class FioLoop implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicInteger runs = new AtomicInteger();
        private final List<String> endedByTheClient = new CopyOnWriteArrayList<>();
        private final CompletableFuture<Void> loop;

        FioLoop(Path dev) {
            String model = Guest.preemptionModel();
            boolean preempts = model.equals("full") || model.equals("lazy");
            Guest.step("the kernel's preemption model: " + model);
            loop = CompletableFuture.runAsync(() -> {
                for (int k = 0; !stop.get(); k++) {
                    String mark = "fio-loop: run verify" + k;
                    // debug level: in dmesg, not on the console
                    Guest.writeSysfs(Path.of("/dev/kmsg"), "<7>" + mark);
                    Guest.Result r = Guest.run(Guest.timeout(Duration.ofSeconds(120)), "fio", "--name=verify" + k,
                            "--filename=" + dev, "--ioengine=libaio", "--direct=1", "--rw=randwrite", "--bs=128k",
                            "--iodepth=16", "--offset=" + ((k % 3) * 16) + "m", "--size=16m", "--verify=crc32c",
                            "--do_verify=1", "--verify_fatal=1", "--randseed=" + (1000 + k), "--output-format=terse");
                    if (r.ok()) {
                        runs.incrementAndGet();
                        continue;
                    }
                    // what rtrs-client did is in the kernel log, and only there
                    String log = kernelLogSince(mark);
                    if (preempts && FioOutput.ioErrorAlone(r.output())) {
                        endedByTheClient.add("verify" + k + ": " + r.output().lines()
                                .filter(l -> l.contains("error")).findFirst().orElse("") + "\n  kernel log:\n  "
                                + log.lines().filter(l -> l.contains("rnbd") || l.contains("rtrs") || l.contains("I/O error"))
                                        .limit(12).collect(Collectors.joining("\n  ")));
                        continue;
                    }
                    throw new AssertionError(r + "\nkernel log since the run began:\n" + log);
                }
            });
        }

        private static String kernelLogSince(String mark) {
            String all = Guest.run(Guest.timeout(Guest.COMMAND), "dmesg").output();
            int at = all.lastIndexOf(mark);
            String since = at < 0 ? all : all.substring(at);
            List<String> lines = since.lines().toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
        }

        /** The runs an IO error of Linux's own client ended (see the class comment), with why. */
        List<String> endedByTheClient() {
            return List.copyOf(endedByTheClient);
        }

        void awaitMore(int more) throws Exception {
            int n = runs.get() + more;
            Await.until(n + " fio runs", () -> loop.isDone() || runs.get() >= n, Guest.timeout(Duration.ofSeconds(30)));
            if (loop.isDone()) {
                loop.get();
                throw new AssertionError("the fio loop stopped before " + n + " runs");
            }
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            loop.get(Guest.timeout(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
