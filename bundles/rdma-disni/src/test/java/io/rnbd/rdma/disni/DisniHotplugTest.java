package io.rnbd.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.disni.internal.DeviceListener;
import io.rnbd.rdma.disni.internal.DisniDevice;
import io.rnbd.rdma.disni.internal.DisniProvider;
import io.rnbd.rdma.disni.internal.DisniRuntime;
import io.rnbd.rdma.disni.internal.DisniSettings;
import io.rnbd.rdma.disni.internal.SysfsDevice;
import io.rnbd.rdma.disni.internal.SysfsScanner;
import io.rnbd.testkit.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Hot-unplug of a soft-RoCE device under the provider: {@code rdma link delete} while a
 * connection is up. The provider must unpublish the device first, then flush it (its
 * CM ids and verbs objects go, so the kernel can finish the removal), and publish the
 * device again when the link is re-added. Runs only where it may delete a device: in the
 * rxe VM ({@code -Drnbd.rdma.hotplug=true}), on the second soft-RoCE device carrying
 * $RDMA_HOTPLUG_ADDR. A second device, because librdmacm never releases the last
 * adapter of a process (its device-list sync gives up on an empty list), and a driver
 * without context disassociation (rxe, siw) waits for that release.
 */
class DisniHotplugTest {
    private static final Duration WAIT = RdmaTestEnv.timeout(Duration.ofSeconds(5));

    private final BlockingQueue<String> log = new LinkedBlockingQueue<>();

    private String next() throws InterruptedException {
        String s = log.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(s != null, "nothing happened within " + WAIT);
        return s;
    }

    /** The RDMA character devices this JVM has open (what a hot-unplug waits for). */
    private static List<String> rdmaFds() {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.map(f -> {
                try {
                    return Files.readSymbolicLink(f).toString();
                } catch (IOException e) {
                    return "";
                }
            }).filter(t -> t.startsWith("/dev/infiniband")).sorted().toList();
        } catch (IOException e) {
            return List.of("(cannot list /proc/self/fd: " + e.getMessage() + ")");
        }
    }

    private static int run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        if (!p.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }

    @Test
    void deletingTheLinkUnpublishesFlushesAndReaddingPublishesAgain() throws Exception {
        RdmaTestEnv.device();
        String hotplugAddr = System.getenv("RDMA_HOTPLUG_ADDR");
        assumeTrue(Boolean.getBoolean("rnbd.rdma.hotplug") && hotplugAddr != null,
                "deletes and re-creates a soft-RoCE link: only in the rxe VM (-Drnbd.rdma.hotplug=true, $RDMA_HOTPLUG_ADDR)");
        java.net.InetAddress victim = java.net.InetAddress.getByName(hotplugAddr);
        SysfsDevice info = new SysfsScanner(Path.of("/sys/class/infiniband")).scan().values().stream()
                .filter(d -> d.addresses().contains(victim)).findFirst().orElseThrow(
                        () -> new AssertionError("no RDMA device carries " + hotplugAddr));
        assumeTrue(info.name().startsWith("rxe"), "only soft-RoCE links can be deleted and re-added");
        String netdev = Files.readString(Path.of("/sys/class/infiniband", info.name(), "ports/1/gid_attrs/ndevs/0")).trim();
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        BlockingQueue<RdmaDevice> published = new LinkedBlockingQueue<>();
        DisniProvider provider = new DisniProvider(new SysfsScanner(Path.of("/sys/class/infiniband")),
                new DisniRuntime(), i -> DisniDevice.open(i, new DisniSettings((int) WAIT.toMillis())),
                new DeviceListener() {
                    @Override
                    public void deviceAdded(RdmaDevice d) {
                        if (d.name().equals(info.name())) {
                            log.add("published " + d.name());
                            published.add(d);
                        }
                    }

                    @Override
                    public void deviceRemoved(RdmaDevice d) {
                        if (d.name().equals(info.name())) {
                            log.add("unpublished " + d.name());
                        }
                    }
                }, scheduler, Duration.ofMillis(200));
        try {
            provider.start();
            assertEquals("published " + info.name(), next());
            RdmaDevice dev = published.take();

            ProtectionDomain pd = dev.allocPd();
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(4096), java.util.Set.of(
                    io.rnbd.rdma.api.Access.LOCAL_WRITE));
            CompletableFuture<QueuePair> server = new CompletableFuture<>();
            CmListener l = dev.listen(new InetSocketAddress(victim, 0), (ConnectRequest r) -> {
                try {
                    QueuePair qp = r.accept(new QpInit(pd, 4, 4, 1, (q, wc) -> log.add("server " + wc.status())),
                            (q, ev) -> log.add("server " + ev.type()));
                    qp.postRecv(new RecvWr(1, List.of(new Sge(mr, 0, 64))));
                    server.complete(qp);
                } catch (Exception e) {
                    server.completeExceptionally(e);
                }
            });
            QueuePair client = dev.connect(l.localAddress(), new QpInit(pd, 4, 4, 1,
                    (q, wc) -> log.add("client " + wc.status())), null, (q, ev) -> log.add("client " + ev.type()));
            server.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            List<String> up = List.of(next(), next());
            assertTrue(up.contains("client ESTABLISHED") && up.contains("server ESTABLISHED"), up.toString());

            Process delete = new ProcessBuilder("rdma", "link", "delete", info.name()).inheritIO().start();
            // the kernel tears the connection down too, so DISCONNECTED (and the flush it
            // causes) may come first; the provider's own part is: unpublish, then DEVICE_REMOVAL
            List<String> seen = new java.util.ArrayList<>();
            List<String> wanted = List.of("unpublished " + info.name(), "server DEVICE_REMOVAL",
                    "client DEVICE_REMOVAL", "server " + WcStatus.WR_FLUSH_ERR);
            while (!seen.containsAll(wanted)) {
                seen.add(next());
            }
            int unpublished = seen.indexOf("unpublished " + info.name());
            assertTrue(unpublished < seen.indexOf("server DEVICE_REMOVAL")
                    && unpublished < seen.indexOf("client DEVICE_REMOVAL"), "unpublished first: " + seen);
            client.close();
            boolean done = delete.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(done && delete.exitValue() == 0, "rdma link delete finished once the provider let go; "
                    + "this JVM still holds " + rdmaFds());
            assertTrue(Files.notExists(Path.of("/sys/class/infiniband", info.name())));
            Await.until(() -> "the provider let " + info.name() + " go: " + provider.status().line(),
                    () -> !provider.status().devices().contains(info.name()), WAIT);
        } finally {
            // put the link back whatever happened, for whatever runs next in the VM
            if (Files.notExists(Path.of("/sys/class/infiniband", info.name()))) {
                assertEquals(0, run("rdma", "link", "add", info.name(), "type", "rxe", "netdev", netdev));
            }
        }
        try {
            assertEquals("published " + info.name(), next(), "the provider takes the adapter back");
            assertTrue(provider.status().devices().contains(info.name()), provider.status().line());
        } finally {
            scheduler.submit(provider::close).get();
            scheduler.shutdown();
            assertTrue(scheduler.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        }
    }
}
