package io.rnbd.itests.rbd;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.rnbd.itests.Ports;
import io.rnbd.nbd.client.NbdClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;

/**
 * Several servers, one image (issue 37; docs/scale-out.md): two appliance servers A and B export
 * the same RBD image of the project's one-node Ceph cluster with {@code ha = true}, and a third
 * distribution C is the client: it maps the image twice, as two clients would (rnbd0 over sessions
 * c1-a and c1-b, rnbd1 over c2-a and c2-b, each session over a soft RDMA device of its own), and
 * serves both devices through its NBD gateway. This JVM keeps verified IO running on both (crc32c
 * per 4 KiB block, 16 requests in flight each, 4 KiB to 128 KiB, reads and writes) while the
 * active server is killed ({@code kill -9}), frozen ({@code SIGSTOP}, then {@code SIGCONT}), cut
 * from its clients (its soft devices removed) and while each client loses a different server;
 * then twenty takeovers in a row alternating the servers. No request may fail, no read may
 * find anything but the last acknowledged write, and every acknowledged write must read back at
 * the end. The stalls (the longest request latency after each fault) are written to
 * {@code target/rbd-it/ha/stalls.txt} and printed.
 *
 * <p>Test settings, stated: the client's sessions beat every second and fail a path after 4
 * missed beats (a frozen server is found within about 4 s; the default is 5 s x 5); the servers
 * keep every other default (takeover hold-off 10 s, set to 3 s at runtime for phase 4's twenty
 * takeovers alone; storage probe 1 s; a fault comes once the other server is a standby and the
 * client has its paths to both again, and the hold-off has passed), and the cluster's watch
 * timeout plays no part (a takeover breaks the lock itself). Skipped with the reason where the
 * Ceph packages are missing.
 */
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class RbdHaIT {
    private static final long MIB = 1L << 20;
    private static final String IMAGE = "havol";
    private static final long REGION = 16 * MIB;
    private static final int DEPTH = 16;
    /** The servers' default ha.holdoff.ms: a takeover of a holder younger than this is refused. */
    private static final long HOLDOFF_MS = 10_000;
    /**
     * Phase 4's hold-off, set at runtime as an operator would: there nothing tests the hold-off
     * (phase 5 does, at the default), it only spaces the twenty takeovers. Measured on a quiet
     * machine: phase 4 took 306 s at 3 s, against 377 s at 10 s in a clean-clone CI run; the
     * rest of each takeover is the restart of a killed JVM and the heartbeats' 4 s. Shorter
     * also puts the takeovers closer together.
     */
    private static final long PHASE4_HOLDOFF_MS = 3_000;
    /** The hold-off the servers apply now; the faults are spaced past it. */
    private static volatile long holdoffMs = HOLDOFF_MS;
    private static final long SETTLE_MS = 300_000;
    private static final int TAKEOVERS = Integer.getInteger("rnbd.ha.takeovers", 20);
    /**
     * The client's heartbeats: a frozen server is found after HB_MISSED beats (4 s). Shorter was
     * seen to fail live paths on this 2-CPU machine at a load average of 30 (a JVM not scheduled
     * for 2 s), which is a takeover nobody asked for; the default (5 s x 5) would make each
     * SIGSTOP cost 25 s.
     */
    private static final int HB_MS = 1000;
    private static final int HB_MISSED = 4;
    /** The goal after a kill -9 or a cut (docs/scale-out.md): a takeover that stalled IO longer has its story told. */
    private static final long SLOW_MS = 2_000;
    /** A frozen server is found after the heartbeats' 4 s: a SIGSTOP's story is told past 6 s. */
    private static final long SLOW_FROZEN_MS = HB_MS * (HB_MISSED + 2);

    private static Path work;
    private static CephOneNode ceph;
    private static KarafProcess a;
    private static KarafProcess b;
    private static KarafProcess c;
    private static int rtrsA;
    private static int rtrsB;
    private static int nbdC;
    private static NbdClient dev1;
    private static NbdClient dev2;
    private static HaVerifier io1;
    private static HaVerifier io2;
    /** Who is active now (tracked by the tests and checked against the servers). */
    private static KarafProcess active;
    private static long lastTakeover;
    private static final List<String> stalls = new ArrayList<>();
    private static final List<Long> killStalls = new ArrayList<>();
    private static final List<Long> stopStalls = new ArrayList<>();

    @BeforeClass
    public static void twoServersAClientAndACluster() throws Exception {
        work = Path.of(required("rnbd.itest.work")).toAbsolutePath().resolve("ha");
        Files.createDirectories(work);
        // Ceph's own watch timeout (30 s), not the one-node cluster's 5 s: a takeover here never
        // waits for a watch to expire (it breaks the lock), and at 5 s the watches of every
        // server flapped on this loaded machine (librados pings every 5 s; "image watch failed"
        // every few seconds), the active server's with them, and its IO stood still for minutes
        ceph = CephOneNode.start(Path.of(required("rnbd.ceph.script")), work.resolve("ceph"),
                Map.of("ONE_NODE_WATCH_TIMEOUT", "30"));
        Assume.assumeTrue("no Ceph cluster: " + CephOneNode.skipReason, ceph != null);
        ceph.rbd("create", "--size", "64M", "rbd/" + IMAGE);

        Path dist = Path.of(required("rnbd.distribution"));
        rtrsA = Ports.free();
        rtrsB = Ports.free();
        nbdC = Ports.free();
        a = server("A", dist, rtrsA);
        b = server("B", dist, rtrsB);
        c = KarafProcess.unpack("C", dist, work, Ports.free());
        bootAsynchronously(c);
        c.delete("io.rnbd.rtrs.client.session-appliance.cfg");
        c.delete("io.rnbd.client.map-rnbd0.cfg");
        c.set("io.rnbd.rtrs.server.cfg", "port", Integer.toString(Ports.free()));
        c.set("io.rnbd.nbd.gateway.cfg", "port", Integer.toString(nbdC));
        // one soft device per client and server, so that a client can lose one server alone
        for (String[] d : new String[][] {{"c1a", "127.0.1.1"}, {"c1b", "127.0.1.2"}, {"c2a", "127.0.2.1"},
                {"c2b", "127.0.2.2"}}) {
            c.write("io.rnbd.rdma.soft-" + d[0] + ".cfg", "name = " + d[0] + "\naddress = " + d[1] + "\n");
        }
        session("c1-a", "127.0.1.1@127.0.0.1:" + rtrsA);
        session("c1-b", "127.0.1.2@127.0.0.1:" + rtrsB);
        session("c2-a", "127.0.2.1@127.0.0.2:" + rtrsA);
        session("c2-b", "127.0.2.2@127.0.0.2:" + rtrsB);
        a.start();
        b.start();
        c.start();

        // the console, as an operator maps over several servers
        // Two writers of one image (two hosts sharing it): both MIGRATION, the mode that admits a
        // second writer. With one RW and one MIGRATION, a restarted server admits the RW only if
        // it reconnects first (seen: the MIGRATION leg came back first, the RW leg got EBUSY for
        // as long as it tried).
        String mapped = awaitConsole(c, "rnbd:map --session c1-a,c1-b --export " + IMAGE + " --mode MIGRATION rnbd0");
        assertTrue(mapped, mapped.contains("rnbd0"));
        awaitConsole(c, "rnbd:map --session c2-a,c2-b --export " + IMAGE + " --mode MIGRATION rnbd1");
        dev1 = connect("rnbd0");
        dev2 = connect("rnbd1");
        // the first map makes the server the client reaches first take the image: A's, the first
        // session's, unless A still boots then (seen in CI: B listened 6 s before A, the client
        // found no active server on c1-b alone and asked B, as docs/scale-out.md says it does).
        // Either is right; one only, the other a standby
        active = currentActive();
        lastTakeover = System.nanoTime();
        io1 = new HaVerifier(dev1, 0, REGION, DEPTH);
        io2 = new HaVerifier(dev2, REGION, REGION, DEPTH);
        io1.start(37);
        io2.start(73);
        if (!io1.progresses(200, 60_000) || !io2.progresses(200, 60_000)) {
            fail("no IO flows: " + io1.summary() + " / " + io2.summary() + diagnostics() + threads(c));
        }
    }

    /**
     * Boot features installed off the start-level thread: seen here with three distributions
     * booting at once on a loaded machine, a synchronous boot (Karaf's default) deadlocked
     * between the features bundle's activator, holding its bundle lock, and the provisioning
     * thread, which had to stop that bundle for a refresh.
     */
    private static void bootAsynchronously(KarafProcess k) throws IOException {
        k.set("org.apache.karaf.features.cfg", "featuresBootAsynchronous", "true");
    }

    private static KarafProcess server(String name, Path dist, int rtrsPort) throws Exception {
        KarafProcess k = KarafProcess.unpack(name, dist, work, Ports.free());
        bootAsynchronously(k);
        k.bootFeature("rnbd-backend-rbd");
        k.delete("io.rnbd.server.export-mem0.config");
        k.delete("io.rnbd.rtrs.client.session-appliance.cfg");
        k.delete("io.rnbd.client.map-rnbd0.cfg");
        k.set("io.rnbd.rtrs.server.cfg", "port", Integer.toString(rtrsPort));
        k.set("io.rnbd.nbd.gateway.cfg", "port", Integer.toString(Ports.free()));
        k.set("io.rnbd.server.cfg", "server.name", name);
        k.write("io.rnbd.rnbd.backend.rbd.cfg", "conf = " + ceph.conf + "\nid = rnbd\nkeyring = " + ceph.rnbdKeyring
                + "\n");
        k.write("io.rnbd.server.export-" + IMAGE + ".cfg", "name = " + IMAGE + "\nbackend = rbd\nbackend.image = "
                + IMAGE + "\nha = true\n");
        return k;
    }

    private static void session(String name, String path) throws IOException {
        c.write("io.rnbd.rtrs.client.session-" + name + ".cfg", "session.name = " + name + "\npaths = " + path
                + "\nreconnect.delay.sec = 1\nhb.interval.ms = " + HB_MS + "\nhb.missed.max = " + HB_MISSED + "\n");
    }

    private static NbdClient connect(String device) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try {
                return NbdClient.connect("nbd://127.0.0.1:" + nbdC + "/" + device);
            } catch (IOException e) {
                last = e;
                Thread.sleep(500); // the gateway serves the device once it is mapped; no event to wait on
            }
        }
        throw new AssertionError(device + " not served within " + SETTLE_MS + " ms: " + last + diagnostics());
    }

    @AfterClass
    public static void stopEverything() throws Exception {
        for (HaVerifier v : new HaVerifier[] {io1, io2}) {
            if (v != null) {
                v.close();
            }
        }
        for (NbdClient d : new NbdClient[] {dev1, dev2}) {
            if (d != null) {
                d.close();
            }
        }
        for (KarafProcess k : new KarafProcess[] {a, b, c}) {
            if (k != null) {
                k.sigcont();
                k.close();
            }
        }
        if (ceph != null) {
            ceph.close();
        }
    }

    // ---- the faults

    @Test
    public void phase1_killNineOfTheActiveServer() throws Exception {
        takeover("kill -9", this::kill9, SLOW_MS, killStalls);
    }

    @Test
    public void phase2_sigstopThenSigcontTheOldServerFindsItselfFencedAndIsAStandby() throws Exception {
        takeover("SIGSTOP", this::sigstop, SLOW_FROZEN_MS, stopStalls);
    }

    @Test
    public void phase3_theActiveServersPathsCutWhileItLives() throws Exception {
        takeover("paths cut", this::cutPaths, SLOW_MS, new ArrayList<>());
    }

    @Test
    public void phase4_twentyTakeoversInARowAlternatingTheServers() throws Exception {
        List<Long> kills = new ArrayList<>();
        List<Long> stops = new ArrayList<>();
        long started = System.nanoTime();
        holdoff(PHASE4_HOLDOFF_MS);
        Throwable failed = null;
        try {
            for (int i = 0; i < TAKEOVERS; i++) {
                if (i % 2 == 0) {
                    takeover("kill -9 #" + (i / 2 + 1), this::kill9, SLOW_MS, kills);
                } else {
                    takeover("SIGSTOP #" + (i / 2 + 1), this::sigstop, SLOW_FROZEN_MS, stops);
                }
            }
        } catch (Throwable t) {
            failed = t;
            throw t;
        } finally {
            try {
                holdoff(HOLDOFF_MS);
            } catch (Throwable t) {
                if (failed == null) {
                    throw t;
                }
                failed.addSuppressed(t); // the takeover's failure is the one to report
            }
        }
        killStalls.addAll(kills);
        stopStalls.addAll(stops);
        List<Long> all = new ArrayList<>(kills);
        all.addAll(stops);
        String summary = String.format(Locale.ROOT, "%d takeovers in %d s: all %s; kill -9 %s; SIGSTOP %s. "
                + "With phases 1 and 2: kill -9 %s; SIGSTOP %s", all.size(),
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), stats(all), stats(kills), stats(stops),
                stats(killStalls), stats(stopStalls));
        Files.writeString(work.resolve("stalls.txt"), String.join("\n", stalls) + "\n" + summary + "\n",
                StandardCharsets.UTF_8);
        System.out.println("RbdHaIT stalls: " + summary);
        // the goal is < 2 s after a kill -9; these bounds catch a detection or takeover gone wrong
        // (a lock left to the watch timeout, a heartbeat not beating) on a loaded machine
        // the failure's message carries every takeover's line: CI keeps no files, and where the
        // time went (until ACTIVE, the load) is what tells a slow detection from a refused takeover
        String each = "\n" + String.join("\n", stalls);
        assertTrue("kill -9 stalls " + killStalls + each, median(killStalls) < 5_000 && max(killStalls) < 15_000);
        assertTrue("SIGSTOP stalls " + stopStalls + each, median(stopStalls) < 10_000 && max(stopStalls) < 20_000);
    }

    /**
     * Client 1 loses the active server while client 2 loses the standby: client 1 has the image
     * taken over; client 2, which reaches only the old server, is refused there for the hold-off
     * and waits; when its paths return it finds the new active server. No IO failed, one active
     * server at the end, and the image changed hands once, or, if the split outlasted the
     * hold-off on this machine (its paths come back when fileinstall next looks), at most once
     * more per hold-off: the bound docs/scale-out.md states.
     */
    @Test
    public void phase5_twoClientsEachLosingADifferentServerMoveTheImageOnce() throws Exception {
        awaitHoldoff();
        active = currentActive();
        KarafProcess old = active;
        KarafProcess next = other(old);
        String c1Old = old == a ? "c1a" : "c1b";
        String c2New = next == a ? "c2a" : "c2b";
        long generation = generation(old);
        io1.markFault();
        io2.markFault();
        long tookOver;
        long stillStalled = -1;
        long window = 0;
        c.delete("io.rnbd.rdma.soft-" + c1Old + ".cfg");
        c.delete("io.rnbd.rdma.soft-" + c2New + ".cfg");
        try {
            // the takeover as the server records it (its clock is this machine's): fileinstall
            // removes the devices only when it next looks, and until then both clients' IO flows
            // on the old server, which is no sign of anything
            long since = awaitActiveSince(next);
            tookOver = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(Math.max(0, System.currentTimeMillis() - since));
            // client 2 reaches only the old server, fenced now: it must not complete anything
            // until its paths to the new one return, for as long as the hold-off refuses the old
            // server the image back (a window ending a second before the hold-off does)
            long from = io2.completions();
            long start = System.nanoTime();
            long left = since + HOLDOFF_MS - 1000 - System.currentTimeMillis();
            Thread.sleep(Math.max(0, Math.min(2_000, left)));
            window = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            stillStalled = io2.completions() - from;
            assertTrue("client 1 stands still: " + io1.summary(), io1.progresses(200, 60_000));
        } finally {
            c.write("io.rnbd.rdma.soft-" + c1Old + ".cfg", "name = " + c1Old + "\naddress = "
                    + (c1Old.equals("c1a") ? "127.0.1.1" : "127.0.1.2") + "\n");
            c.write("io.rnbd.rdma.soft-" + c2New + ".cfg", "name = " + c2New + "\naddress = "
                    + (c2New.equals("c2a") ? "127.0.2.1" : "127.0.2.2") + "\n");
        }
        System.out.println("RbdHaIT two clients: client 2 completed " + stillStalled + " requests in the " + window
                + " ms after the takeover, with only the fenced server reachable");
        // a request or two answered in the instant of the takeover may count; a client 2 that
        // took the image back, or was served by the fenced server, completes hundreds a second
        assertTrue("client 2 moved on without a server: " + stillStalled + " in " + window + " ms",
                stillStalled < DEPTH);
        assertTrue("client 2 did not come back: " + io2.summary(), io2.progresses(200, 120_000));
        long splitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - tookOver);
        lastTakeover = System.nanoTime();
        active = currentActive();
        long moves = generation(active) - generation;
        String split = String.format(Locale.ROOT, "split %d ms, image moved %d time(s)", splitMs, moves);
        System.out.println("RbdHaIT two clients: " + split);
        assertTrue(split, moves >= 1 && moves <= 1 + splitMs / HOLDOFF_MS);
        if (splitMs < HOLDOFF_MS) {
            assertEquals("the image went back within the hold-off", next, active);
        }
        assertEquals("STANDBY", awaitRole(other(active), "STANDBY"));
        stalls.add(String.format(Locale.ROOT, "two clients, each losing a different server: client 1 %d ms, client 2 "
                + "%d ms (waited for its paths); %s", io1.longestSinceMarkMs(), io2.longestSinceMarkMs(), split));
        Files.writeString(work.resolve("stalls.txt"), stalls.get(stalls.size() - 1) + "\n", StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        assertClean();
    }

    /** What an operator sees, failback on request, and every acknowledged write read back. */
    @Test
    public void phase6_theConsoleShowsTheActiveServerFailbackMovesItAndEverythingReadsBack() throws Exception {
        active = currentActive();
        assertTrue("IO flows", io1.progresses(100, 60_000) && io2.progresses(100, 60_000));
        String devices = c.console("rnbd:devices");
        String activeSession = active == a ? "c1-a" : "c1-b";
        assertTrue(devices, devices.contains(activeSession + " since ") && devices.contains("takeovers"));
        String exports = active.console("rnbd:exports");
        assertTrue(exports, exports.contains("active") && exports.contains((active == a ? "A" : "B") + " since"));
        awaitHoldoff();
        String to = active == a ? "c1-b" : "c1-a";
        String failback = c.console("rnbd:failback --to " + to + " rnbd0");
        assertTrue(failback, failback.contains("IO goes to session " + to));
        active = other(active);
        assertEquals("ACTIVE", awaitRole(active, "ACTIVE"));
        assertTrue(io1.progresses(200, 60_000) && io2.progresses(200, 60_000));
        io1.stop();
        io2.stop();
        assertEquals("final read-back of client 1's blocks", 0, io1.verifyAll());
        assertEquals("final read-back of client 2's blocks", 0, io2.verifyAll());
        assertClean();
        System.out.println("RbdHaIT IO: client 1 " + io1.summary() + "; client 2 " + io2.summary());
    }

    // ---- a takeover

    @FunctionalInterface
    private interface Fault {
        /** Injects the fault on {@code victim}; returns what restores it once the other took over. */
        Restore inject(KarafProcess victim) throws Exception;
    }

    @FunctionalInterface
    private interface Restore {
        void run() throws Exception;
    }

    private void takeover(String what, Fault fault, long slowMs, List<Long> into) throws Exception {
        awaitHoldoff();
        active = currentActive();
        KarafProcess victim = active;
        KarafProcess next = other(victim);
        long generation = generation(next);
        io1.markFault();
        io2.markFault();
        long takerLog = next.logMark();
        long clientLog = c.logMark();
        long injected = System.nanoTime();
        Restore restore = fault.inject(victim);
        long activeSeen;
        try {
            // first the takeover: a fault that takes effect late (the paths cut: fileinstall
            // removes the devices when it next looks) would otherwise pass for IO resumed
            awaitRole(next, "ACTIVE");
            activeSeen = System.nanoTime();
            // the servers' hold-off counts from the takeover, which came before this: the next
            // fault is spaced from here, not from the end of IO's resumption and the restore
            lastTakeover = activeSeen;
            // the message only on failure: it asks the servers' consoles, one of them frozen
            if (!io1.progresses(200, 120_000) || !io2.progresses(200, 120_000)) {
                fail(what + ": IO did not resume\n" + diagnostics() + threads(next) + threads(c));
            }
        } finally {
            restore.run();
        }
        active = next;
        assertEquals(what + ": the other server is active", "ACTIVE", role(next));
        long now = generation(next);
        assertTrue(what + ": generation " + now + " after " + generation, now > generation);
        Thread.sleep(1000); // let the requests that waited through it complete and count
        long stall = Math.max(io1.longestSinceMarkMs(), io2.longestSinceMarkMs());
        into.add(stall);
        assertEquals(what + ": the old server did not come back as a standby", "STANDBY", awaitRole(victim, "STANDBY"));
        awaitClientPaths(what);
        // where a takeover's time goes, for whoever wants this test shorter: until the other
        // server said ACTIVE, then until the old one was a STANDBY (a killed one restarts) and
        // the client had its paths to it again
        long standbySeen = System.nanoTime();
        String line = String.format(Locale.ROOT, "%-14s %s -> %s: %5d ms (load average %s; ACTIVE seen after %d ms, "
                + "the old server a STANDBY with the client's paths %d ms later)", what, victim.name, next.name, stall,
                loadAverage(),
                TimeUnit.NANOSECONDS.toMillis(activeSeen - injected), TimeUnit.NANOSECONDS.toMillis(standbySeen - activeSeen));
        if (stall > slowMs) {
            // past the goal: how the client and the server that took over spent it, from their
            // logs, so that a failure's message tells a detection from a refusal or a slow cluster
            List<String> story = new ArrayList<>();
            c.logSince(clientLog, 12, "RnbdHaDevice").forEach(l -> story.add("    client: " + l));
            next.logSince(takerLog, 12, "ExportRole").forEach(l -> story.add("    " + next.name + ": " + l));
            line += "\n" + String.join("\n", story);
        }
        stalls.add(line);
        System.out.println("RbdHaIT " + stalls.get(stalls.size() - 1));
        assertClean();
    }

    private Restore kill9(KarafProcess victim) throws Exception {
        victim.kill9();
        return () -> victim.start();
    }

    private Restore sigstop(KarafProcess victim) throws Exception {
        victim.sigstop();
        return victim::sigcont;
    }

    /** The server's soft devices go away (link down): its paths to every client fail, it lives on. */
    private Restore cutPaths(KarafProcess victim) throws Exception {
        victim.delete("io.rnbd.rdma.soft-soft0.cfg");
        victim.delete("io.rnbd.rdma.soft-soft1.cfg");
        return () -> {
            victim.write("io.rnbd.rdma.soft-soft0.cfg", "name = soft0\naddress = 127.0.0.1\n");
            victim.write("io.rnbd.rdma.soft-soft1.cfg", "name = soft1\naddress = 127.0.0.2\n");
        };
    }

    // ---- helpers

    /**
     * Until the client has every path to both servers again, so that the next fault finds the
     * standby reachable, as the stalls assume: until now the time the test took between faults
     * gave the client its reconnect, by chance.
     */
    private static void awaitClientPaths(String what) throws Exception {
        String paths = c.ask("rtrs:session-wait --timeout-sec 60 c1-a c1-b c2-a c2-b");
        if (paths.contains("shows why")) {
            fail(what + ": the client's paths did not all come back within 60 s:\n" + paths + diagnostics());
        }
    }

    private static void assertClean() {
        assertEquals("failed requests, client 1: " + io1.summary(), 0, io1.failed());
        assertEquals("failed requests, client 2: " + io2.summary(), 0, io2.failed());
        assertEquals("verify errors, client 1: " + io1.summary(), 0, io1.mismatches());
        assertEquals("verify errors, client 2: " + io2.summary(), 0, io2.mismatches());
    }

    /**
     * Sets both servers' ha.holdoff.ms in their etc/ (which a killed server reads when it
     * restarts) and waits until their server component has it: it takes a change of it without
     * a restart (@Modified) and logs the settings it then has. ConfigAdmin has the change first
     * (config:property-get shows it); SCR hands it to the component later, on ConfigAdmin's
     * event thread, so that alone does not say the servers hold off for {@code ms} now.
     */
    private static void holdoff(long ms) throws Exception {
        long[] mark = {a.logMark(), b.logMark()};
        for (KarafProcess k : new KarafProcess[] {a, b}) {
            k.set("io.rnbd.server.cfg", "ha.holdoff.ms", Long.toString(ms));
        }
        String applied = "takeover hold-off " + ms + " ms";
        KarafProcess[] servers = {a, b};
        for (int i = 0; i < servers.length; i++) {
            KarafProcess k = servers[i];
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
            List<String> seen = List.of();
            while ((seen = k.logSince(mark[i], 4, "RnbdServerComponent")).stream().noneMatch(l -> l.contains(applied))) {
                if (System.nanoTime() > deadline) {
                    fail(k.name + ": the server component did not take ha.holdoff.ms = " + ms + " (ConfigAdmin has '"
                            + k.ask("config:property-get -p io.rnbd.server ha.holdoff.ms").trim() + "'; it logged "
                            + seen + ")" + diagnostics() + threads(k));
                }
                Thread.sleep(500); // fileinstall reads etc/ when it next looks
            }
        }
        holdoffMs = ms;
    }

    /** The servers refuse a takeover of a holder younger than the hold-off: faults here are spaced past it. */
    private static void awaitHoldoff() throws InterruptedException {
        long left = holdoffMs + 1000 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastTakeover);
        if (left > 0) {
            Thread.sleep(left);
        }
    }

    /** The server that says ACTIVE while the other says STANDBY (both asked until they agree). */
    private static KarafProcess currentActive() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        String ra = "";
        String rb = "";
        while (System.nanoTime() < deadline) {
            ra = role(a);
            rb = role(b);
            if (ra.equals("ACTIVE") && rb.equals("STANDBY")) {
                return a;
            }
            if (rb.equals("ACTIVE") && ra.equals("STANDBY")) {
                return b;
            }
            Thread.sleep(1000); // a takeover or a reopen after a fence is under way
        }
        throw new AssertionError("no single active server: A " + ra + ", B " + rb + diagnostics());
    }

    private static KarafProcess other(KarafProcess k) {
        return k == a ? b : a;
    }

    private static final Pattern ROLE = Pattern.compile("\"role\"\\s*:\\s*\"([A-Z_]+)\"");
    private static final Pattern ACTIVE_SINCE = Pattern.compile("\"active_since\"\\s*:\\s*(\\d+)");
    private static final Pattern GENERATION = Pattern.compile("\"generation\"\\s*:\\s*(\\d+)");

    private static String role(KarafProcess k) throws Exception {
        Matcher m = ROLE.matcher(k.ask("rnbd:exports --json"));
        return m.find() ? m.group(1) : "";
    }

    private static long generation(KarafProcess k) throws Exception {
        Matcher m = GENERATION.matcher(k.ask("rnbd:exports --json"));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** Waits until {@code k} is ACTIVE; when it took the image, by its clock (ms since the epoch). */
    private static long awaitActiveSince(KarafProcess k) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        String json = "";
        while (System.nanoTime() < deadline) {
            json = k.ask("rnbd:exports --json");
            Matcher r = ROLE.matcher(json);
            Matcher t = ACTIVE_SINCE.matcher(json);
            if (r.find() && r.group(1).equals("ACTIVE") && t.find()) {
                return Long.parseLong(t.group(1));
            }
            Thread.sleep(200); // the takeover is under way; no event reaches this JVM
        }
        fail(k.name + " is not ACTIVE within " + SETTLE_MS + " ms: " + json + diagnostics());
        return 0;
    }

    private static String awaitRole(KarafProcess k, String want) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                last = role(k);
                if (last.equals(want)) {
                    return last;
                }
            } catch (AssertionError notUpYet) {
                last = notUpYet.getMessage();
            }
            Thread.sleep(250); // a restarted server boots and opens the image; no event reaches this JVM
        }
        fail(k.name + " is not " + want + " within " + SETTLE_MS + " ms: " + last + diagnostics());
        return last;
    }

    private static String awaitConsole(KarafProcess k, String command) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        AssertionError last = null;
        while (System.nanoTime() < deadline) {
            try {
                return k.console(command);
            } catch (AssertionError e) {
                last = e;
                Thread.sleep(2000); // Karaf's console comes up during the boot
            }
        }
        throw new AssertionError(command + ": " + (last == null ? "" : last.getMessage()) + diagnostics());
    }

    /** The machine's load average over 1, 5 and 15 minutes, as uptime prints it: what the figures were measured under. */
    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String stats(List<Long> ms) {
        return ms.isEmpty() ? "none" : "median " + median(ms) + " ms, worst " + max(ms) + " ms over " + ms.size();
    }

    private static long median(List<Long> ms) {
        List<Long> s = new ArrayList<>(ms);
        s.sort(null);
        return s.isEmpty() ? 0 : s.get(s.size() / 2);
    }

    private static long max(List<Long> ms) {
        return ms.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    private static String diagnostics() {
        StringBuilder s = new StringBuilder("\nclient 1: " + (io1 == null ? "-" : io1.summary()) + "\nclient 2: "
                + (io2 == null ? "-" : io2.summary()));
        for (KarafProcess k : new KarafProcess[] {a, b, c}) {
            if (k == null) {
                continue;
            }
            s.append("\n").append(k.name).append(!k.alive() ? " not running" : k.stopped() ? " stopped (SIGSTOP)"
                    : " running");
            if (k.alive() && !k.stopped()) {
                for (String cmd : new String[] {"rnbd:exports", "rnbd:devices"}) {
                    try {
                        s.append("\n> ").append(cmd).append('\n').append(k.console(cmd));
                    } catch (Exception | AssertionError e) {
                        s.append("\n> ").append(cmd).append(": ").append(e.getMessage());
                    }
                }
            }
            s.append('\n').append(k.logTail(40));
        }
        return s.toString();
    }

    /** The client's threads, for a failure where IO stands still. */
    private static String threads(KarafProcess k) {
        return "\n" + k.jstack();
    }

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException("system property " + key + " is not set: run the itests through Maven");
        }
        return v;
    }
}
