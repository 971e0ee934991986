package io.rnbd.rdma.core.internal;

import io.rnbd.rdma.api.IbClient;
import io.rnbd.rdma.api.RdmaDevice;
import java.util.Arrays;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.RdmaDeviceInfo;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

class DeviceRegistryTest {

    /** The 8 events of 2 devices and 2 clients: index = entity * 2 + (0 register, 1 unregister). */
    private static void permutations(int[] prefix, int depth, boolean[] used, List<int[]> out) {
        if (depth == prefix.length) {
            out.add(prefix.clone());
            return;
        }
        for (int e = 0; e < prefix.length; e++) {
            // an entity's unregister only after its register
            if (!used[e] && (e % 2 == 0 || used[e - 1])) {
                used[e] = true;
                prefix[depth] = e;
                permutations(prefix, depth + 1, used, out);
                used[e] = false;
            }
        }
    }

    @Test
    void everyInterleavingOfTwoDevicesAndTwoClientsAddsAndRemovesEachPairExactlyOnce() {
        List<int[]> orders = new ArrayList<>();
        permutations(new int[8], 0, new boolean[8], orders);
        assertEquals(2520, orders.size(), "8! / 2^4 orders");
        for (int[] order : orders) {
            Recorder rec = new Recorder();
            DeviceRegistry registry = new DeviceRegistry();
            Recorder.Device[] devices = {rec.new Device("d0"), rec.new Device("d1")};
            Recorder.Client[] clients = {rec.new Client("c0"), rec.new Client("c1")};
            int[] registeredAt = new int[4];
            int[] unregisteredAt = new int[4];
            for (int step = 0; step < order.length; step++) {
                int entity = order[step] / 2;
                boolean up = order[step] % 2 == 0;
                if (up) {
                    registeredAt[entity] = step;
                } else {
                    unregisteredAt[entity] = step;
                }
                if (entity < 2) {
                    if (up) {
                        rec.register(registry, devices[entity]);
                    } else {
                        rec.unregister(registry, devices[entity]);
                    }
                } else if (up) {
                    rec.register(registry, clients[entity - 2]);
                } else {
                    rec.unregister(registry, clients[entity - 2]);
                }
            }
            String where = Arrays.toString(order) + " " + rec.log;
            assertTrue(rec.violations.isEmpty(), rec.violations + " in " + where);
            for (int c = 0; c < 2; c++) {
                for (int d = 0; d < 2; d++) {
                    boolean overlap = registeredAt[2 + c] < unregisteredAt[d] && registeredAt[d] < unregisteredAt[2 + c];
                    int expected = overlap ? 1 : 0;
                    assertEquals(expected, clients[c].adds("d" + d), "adds c" + c + "/d" + d + " " + where);
                    assertEquals(expected, clients[c].removes("d" + d), "removes c" + c + "/d" + d + " " + where);
                }
                assertTrue(clients[c].held.isEmpty(), where);
            }
        }
    }

    @Test
    void concurrentRandomChurnKeepsEveryInvariant() throws Exception {
        Recorder rec = new Recorder();
        DeviceRegistry registry = new DeviceRegistry();
        int n = 4;
        Recorder.Device[] devices = new Recorder.Device[n];
        Recorder.Client[] clients = new Recorder.Client[n];
        Object[] locks = new Object[2 * n];
        for (int i = 0; i < n; i++) {
            devices[i] = rec.new Device("d" + i);
            clients[i] = rec.new Client("c" + i);
        }
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new Object();
        }
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> jobs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = 42 + t;
            jobs.add(pool.submit(() -> {
                Random rnd = new Random(seed);
                start.await();
                for (int i = 0; i < 3000; i++) {
                    int e = rnd.nextInt(2 * n);
                    // one toggle per entity at a time, as the service registry delivers them
                    synchronized (locks[e]) {
                        if (e < n) {
                            Recorder.Device d = devices[e];
                            if (d.registered) {
                                rec.unregister(registry, d);
                            } else {
                                rec.register(registry, d);
                            }
                        } else {
                            Recorder.Client c = clients[e - n];
                            if (c.active) {
                                rec.unregister(registry, c);
                            } else {
                                rec.register(registry, c);
                            }
                        }
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : jobs) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        assertTrue(rec.violations.isEmpty(), rec.violations.toString());
        // quiescent: every active client holds exactly the registered devices
        for (Recorder.Client c : clients) {
            for (Recorder.Device d : devices) {
                assertEquals(c.active && d.registered, c.held.contains(d), c + "/" + d);
            }
        }
        for (Recorder.Device d : devices) {
            if (d.registered) {
                rec.unregister(registry, d);
            }
        }
        for (Recorder.Client c : clients) {
            assertTrue(c.held.isEmpty(), c + " still holds " + c.held);
            for (Recorder.Device d : devices) {
                assertEquals(c.adds(d.name), c.removes(d.name), c + "/" + d);
            }
        }
        assertTrue(rec.violations.isEmpty(), rec.violations.toString());
    }

    @Test
    void aThrowingClientIsIsolatedAndNotConsideredAdded() {
        Recorder rec = new Recorder();
        DeviceRegistry registry = new DeviceRegistry();
        Recorder.Client bad = rec.new Client("bad");
        bad.throwOnAdd = "d0";
        Recorder.Client good = rec.new Client("good");
        rec.register(registry, bad);
        rec.register(registry, good);
        Recorder.Device d0 = rec.new Device("d0");
        Recorder.Device d1 = rec.new Device("d1");
        rec.register(registry, d0);
        rec.register(registry, d1);
        assertEquals(List.of("good"), info(registry, "d0").clients());
        assertEquals(List.of("bad", "good"), info(registry, "d1").clients());
        rec.unregister(registry, d0);
        assertEquals(0, bad.removes("d0"), "no remove for a failed add");
        assertEquals(1, good.removes("d0"));
        rec.unregister(registry, bad);
        assertEquals(1, bad.removes("d1"));
        assertTrue(rec.violations.isEmpty(), rec.violations.toString());
    }

    @Test
    void lateClientGetsEveryExistingDeviceAndTheAdminViewShowsIt() {
        Recorder rec = new Recorder();
        DeviceRegistry registry = new DeviceRegistry();
        rec.register(registry, rec.new Device("mlx5_0"));
        rec.register(registry, rec.new Device("soft0"));
        Recorder.Client late = rec.new Client("rtrs-server");
        rec.register(registry, late);
        assertEquals(2, late.held.size());
        List<RdmaDeviceInfo> infos = registry.devices();
        assertEquals(List.of("mlx5_0", "soft0"), infos.stream().map(RdmaDeviceInfo::name).toList());
        RdmaDeviceInfo soft = infos.get(1);
        assertEquals("fake", soft.provider());
        assertEquals("node-soft0", soft.nodeId());
        assertEquals(LinkState.ACTIVE, soft.linkState());
        assertEquals(List.of("127.0.0.1"), soft.addresses());
        assertEquals(List.of("rtrs-server"), soft.clients());
        assertEquals(List.of("z_first", "a_second"), List.copyOf(soft.counters().keySet()), "the provider's order");
        assertEquals(5L, soft.counters().get("a_second"));
    }

    @Test
    void closeRemovesEverythingAndIgnoresLaterArrivals() {
        Recorder rec = new Recorder();
        DeviceRegistry registry = new DeviceRegistry();
        Recorder.Client c = rec.new Client("c");
        rec.register(registry, c);
        rec.register(registry, rec.new Device("d"));
        registry.close();
        assertTrue(c.held.isEmpty());
        c.active = false;
        Recorder.Device late = rec.new Device("late");
        late.registered = true;
        registry.addDevice(late);
        assertTrue(registry.devices().isEmpty());
        assertTrue(rec.violations.isEmpty(), rec.violations.toString());
    }

    @Test
    void deviceReRegisteredAtOnceIsRemovedBeforeItIsAddedAgain() {
        Recorder rec = new Recorder();
        DeviceRegistry registry = new DeviceRegistry();
        Recorder.Client c = rec.new Client("c");
        rec.register(registry, c);
        Recorder.Device d = rec.new Device("d");
        for (int i = 0; i < 5; i++) {
            rec.register(registry, d);
            rec.unregister(registry, d);
        }
        assertEquals(5, c.adds("d"));
        assertEquals(5, c.removes("d"));
        assertEquals(List.of("c.add(d)", "c.remove(d)"), new ArrayList<>(rec.log).subList(0, 2));
        assertTrue(rec.violations.isEmpty(), rec.violations.toString());
    }

    @Test
    void theAdminViewDoesNotWaitForASlowClient() throws Exception {
        DeviceRegistry registry = new DeviceRegistry();
        Recorder rec = new Recorder();
        rec.register(registry, rec.new Device("d0"));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        IbClient slow = new IbClient() {
            @Override
            public void add(RdmaDevice device) {
                entered.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void remove(RdmaDevice device) {
            }
        };
        Thread t = new Thread(() -> registry.addClient(slow));
        t.start();
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        assertEquals(List.of(), info(registry, "d0").clients(), "answers at once, before the add finished");
        release.countDown();
        t.join(10_000);
        assertEquals(1, info(registry, "d0").clients().size());
    }

    private static RdmaDeviceInfo info(DeviceRegistry r, String name) {
        return r.devices().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
    }
}
