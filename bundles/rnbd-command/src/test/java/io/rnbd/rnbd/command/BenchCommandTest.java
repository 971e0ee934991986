package io.rnbd.rnbd.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.command.support.MiniJson;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.DeviceClaim;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.testkit.block.ForwardingBlockDevice;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.ServiceReference;

class BenchCommandTest {
    private final Mapped rnbd0 = new Mapped("rnbd0", memory(), false);
    private final Mapped ro = new Mapped("rnbd1", memory(), true);
    private final AtomicInteger gets = new AtomicInteger();
    private final AtomicInteger ungets = new AtomicInteger();
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    @AfterEach
    void close() {
        rnbd0.under().close();
        ro.under().close();
    }

    private static BlockDevice memory() {
        for (BlockBackend b : ServiceLoader.load(BlockBackend.class)) {
            if (b.type().equals("memory")) {
                try {
                    return BlockRequests.checked(b.open(Map.of("size", "4m"), false));
                } catch (java.io.IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        throw new IllegalStateException("no memory backend");
    }

    private BenchCommand command(String device) {
        BenchCommand c = new BenchCommand();
        c.bundleContext = context(List.of(rnbd0, ro));
        c.device = device;
        c.out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        return c;
    }

    private String output() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void printsTheResultsTableAndReleasesTheDevice() {
        BenchCommand c = command("rnbd0");
        c.rw = "randrw";
        c.verify = true;
        c.ios = 5000;
        c.execute();
        String out = output();
        assertTrue(out.startsWith("rnbd0: randrw 50% reads, bs 4k, qd 32, batch 4, 5000 IOs, verify\n"), out);
        assertTrue(out.contains("\nop "), out);
        assertTrue(out.contains("\nread "), out);
        assertTrue(out.contains("\nwrite "), out);
        assertTrue(out.matches("(?s).*\ntotal +5000 .*"), out);
        assertTrue(out.contains("ended by io count, errors 0, verified reads "), out);
        assertTrue(out.contains(", mismatches 0\n"), out);
        assertEquals(1, rnbd0.claims.get());
        assertEquals(0, rnbd0.held.get(), "the claim is released");
        assertEquals(gets.get(), ungets.get(), "the service is released");
        assertFalse(rnbd0.closed, "a mapping belongs to the client: bench never closes it");
    }

    @Test
    void jsonHasNoProgressAndOneObject() {
        BenchCommand c = command("rnbd0");
        c.json = true;
        c.rw = "write";
        c.ios = 100;
        c.blockSize = "64k";
        c.execute();
        String out = output();
        assertTrue(out.startsWith("{\"device\":\"rnbd0\",\"workload\":\"write\",\"read_percent\":0,\"block_size\":65536,"), out);
        assertTrue(out.endsWith("\"problems\":[]}\n"), out);
        assertTrue(out.contains("\"write\":{\"ios\":100,"), out);
        assertEquals(1, out.split("\n").length);

        Map<String, Object> result = MiniJson.object(out);
        assertEquals(List.of("device", "workload", "read_percent", "block_size", "queue_depth", "batch", "verify", "seconds",
                "ended_by", "read", "write", "total", "errors", "verified_reads", "mismatches", "problems"),
                List.copyOf(result.keySet()));
        @SuppressWarnings("unchecked")
        Map<String, Object> write = (Map<String, Object>) result.get("write");
        assertEquals(List.of("ios", "iops", "mib_per_second", "p50_us", "p99_us", "p99_9_us", "mean_us", "max_us"),
                List.copyOf(write.keySet()));
        assertEquals(100L, write.get("ios"));
    }

    @Test
    void unknownDevicesAndBadOptionsAreOneLineErrors() {
        command("nope").execute();
        command("a(b)*").execute();
        BenchCommand badBs = command("rnbd0");
        badBs.blockSize = "1000";
        badBs.execute();
        BenchCommand badRw = command("rnbd0");
        badRw.rw = "sideways";
        badRw.execute();
        BenchCommand badTime = command("rnbd0");
        badTime.runtime = "soon";
        badTime.execute();
        BenchCommand readOnly = command("rnbd1");
        readOnly.rw = "randwrite";
        readOnly.execute();
        assertEquals(List.of(
                "Error: no mapped device 'nope' (mapped: rnbd0, rnbd1)",
                "Error: no mapped device 'a(b)*' (mapped: rnbd0, rnbd1)",
                "Error: block size 1000 is not a multiple of the device's 512-byte logical block",
                "Error: unknown workload sideways (randread, randwrite, randrw, read, write, rw)",
                "Error: runtime soon is not a duration (e.g. 500ms, 10s, 2m)",
                "Error: the device is read-only: use a read-only workload (randread, read)"),
                List.of(output().split("\n")));
        assertEquals(gets.get(), ungets.get());
        assertEquals(0, rnbd0.held.get() + ro.held.get());
    }

    @Test
    void anInterruptLikeCtrlCEndsTheRunAndStillPrintsResults() throws Exception {
        BenchCommand c = command("rnbd0");
        c.runtime = "1h";
        Thread t = new Thread(c::execute, "console");
        t.start();
        assertTrue(rnbd0.firstIo.await(30, TimeUnit.SECONDS));
        t.interrupt();
        t.join(30_000);
        assertFalse(t.isAlive());
        assertTrue(output().contains("ended by stopped"), output());
        assertEquals(0, rnbd0.held.get());
    }

    private BundleContext context(List<Mapped> devices) {
        List<ServiceReference<?>> refs = new ArrayList<>();
        for (Mapped m : devices) {
            Dictionary<String, Object> props = new Hashtable<>(Map.of(RemoteBlockDevice.PROP_NAME, m.name()));
            refs.add((ServiceReference<?>) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {ServiceReference.class}, (p, method, args) -> switch (method.getName()) {
                        case "getProperty" -> props.get((String) args[0]);
                        case "compareTo" -> 0;
                        case "hashCode" -> System.identityHashCode(p);
                        case "equals" -> p == args[0];
                        case "toString" -> "ref " + m.name();
                        default -> throw new UnsupportedOperationException(method.getName());
                    }));
        }
        return (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {BundleContext.class},
                (p, method, args) -> switch (method.getName()) {
                    case "getServiceReferences" -> {
                        List<ServiceReference<?>> hits = new ArrayList<>();
                        for (int i = 0; i < refs.size(); i++) {
                            Dictionary<String, Object> props = new Hashtable<>(
                                    Map.of(RemoteBlockDevice.PROP_NAME, devices.get(i).name()));
                            if (args[1] == null || FrameworkUtil.createFilter((String) args[1]).match(props)) {
                                hits.add(refs.get(i));
                            }
                        }
                        yield hits;
                    }
                    case "getService" -> {
                        gets.incrementAndGet();
                        yield devices.get(refs.indexOf(args[0]));
                    }
                    case "ungetService" -> {
                        ungets.incrementAndGet();
                        yield true;
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A mapped device as the RNBD client would register it, over a memory device. */
    static final class Mapped extends ForwardingBlockDevice implements RemoteBlockDevice {
        final String name;
        final boolean readOnly;
        final AtomicInteger claims = new AtomicInteger();
        final AtomicInteger held = new AtomicInteger();
        final CountDownLatch firstIo = new CountDownLatch(1);
        volatile boolean closed;

        Mapped(String name, BlockDevice next, boolean readOnly) {
            super(next);
            this.name = name;
            this.readOnly = readOnly;
        }

        /** The memory device under it, which the test closes: users never close a mapping. */
        BlockDevice under() {
            return next;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String exportName() {
            return "export-" + name;
        }

        @Override
        public String sessionName() {
            return "sess";
        }

        @Override
        public AccessMode accessMode() {
            return readOnly ? AccessMode.RO : AccessMode.RW;
        }

        @Override
        public DeviceClaim claim(String user) {
            claims.incrementAndGet();
            held.incrementAndGet();
            AtomicInteger once = new AtomicInteger();
            return () -> {
                if (once.getAndIncrement() == 0) {
                    held.decrementAndGet();
                }
            };
        }

        @Override
        public Capabilities capabilities() {
            return readOnly ? Capabilities.READ_ONLY : next.capabilities();
        }

        @Override
        public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            firstIo.countDown();
            return next.read(offset, dst);
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            firstIo.countDown();
            return next.write(offset, src, fua);
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
