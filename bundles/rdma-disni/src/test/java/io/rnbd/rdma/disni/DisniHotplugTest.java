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
 * CM ids and verbs objects go, so the kernel can finish the removal), go dormant, and
 * publish the device again when the link is re-added. Runs only where it may delete the
 * device ({@code -Drnbd.rdma.hotplug=true}, set in the rxe VM) and the device is rxe.
 */
class DisniHotplugTest {
    private static final Duration WAIT = RdmaTestEnv.timeout(Duration.ofSeconds(5));

    private final BlockingQueue<String> log = new LinkedBlockingQueue<>();

    private String next() throws InterruptedException {
        String s = log.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(s != null, "nothing happened within " + WAIT);
        return s;
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
        SysfsDevice info = RdmaTestEnv.device();
        assumeTrue(Boolean.getBoolean("rnbd.rdma.hotplug") && info.name().startsWith("rxe"),
                "deletes and re-creates the soft-RoCE link: only in the rxe VM (-Drnbd.rdma.hotplug=true)");
        String netdev = Files.readString(Path.of("/sys/class/infiniband", info.name(), "ports/1/gid_attrs/ndevs/0")).trim();
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        BlockingQueue<RdmaDevice> published = new LinkedBlockingQueue<>();
        DisniProvider provider = new DisniProvider(new SysfsScanner(Path.of("/sys/class/infiniband")),
                new DisniRuntime(), i -> DisniDevice.open(i, new DisniSettings((int) WAIT.toMillis())),
                new DeviceListener() {
                    @Override
                    public void deviceAdded(RdmaDevice d) {
                        log.add("published " + d.name());
                        published.add(d);
                    }

                    @Override
                    public void deviceRemoved(RdmaDevice d) {
                        log.add("unpublished " + d.name());
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
            CmListener l = dev.listen(new InetSocketAddress(RdmaTestEnv.address(), 0), (ConnectRequest r) -> {
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

            assertEquals(0, run("rdma", "link", "delete", info.name()), "rdma link delete finished");
            assertEquals("unpublished " + info.name(), next(), "unpublished before anything is flushed");
            List<String> after = List.of(next(), next(), next());
            assertTrue(after.containsAll(List.of("server DEVICE_REMOVAL", "client DEVICE_REMOVAL",
                    "server " + WcStatus.WR_FLUSH_ERR)), after.toString());
            client.close();
            assertTrue(Files.notExists(Path.of("/sys/class/infiniband", info.name())));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (provider.status().active() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(provider.status().line().startsWith("dormant: no RDMA adapter"), provider.status().line());
        } finally {
            // put the link back whatever happened, for whatever runs next in the VM
            if (Files.notExists(Path.of("/sys/class/infiniband", info.name()))) {
                assertEquals(0, run("rdma", "link", "add", info.name(), "type", "rxe", "netdev", netdev));
            }
        }
        try {
            assertEquals("published " + info.name(), next(), "the provider wakes up when the adapter is back");
            assertTrue(provider.status().active());
        } finally {
            scheduler.submit(provider::close).get();
            scheduler.shutdown();
            assertTrue(scheduler.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        }
    }
}
