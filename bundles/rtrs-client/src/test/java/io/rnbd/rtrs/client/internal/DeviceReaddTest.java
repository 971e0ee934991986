package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.SessionState;
import io.rnbd.testkit.Await;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeviceReaddTest {
    @Test
    void deviceRemovedAndAddedAgainPathReconnects() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.smallServer(true, SoftFixture.freePort()))) {
            ClientSession s = f.open(f.config("readd", f.path(f.dev1), f.path(f.dev2)));
            Await.until("both connected", () -> s.pathInfo().stream().allMatch(p -> p.state() == PathState.CONNECTED));
            // the registry takes the device from every IB client (server and client)
            f.registry.removeDevice(f.dev2);
            Await.until("path 2 down", () -> s.pathInfo().get(1).state() != PathState.CONNECTED);
            assertEquals(SessionState.CONNECTED, s.state());
            for (int i = 0; i < 20; i++) {
                CompletableFuture<Integer> w = new CompletableFuture<>();
                s.write(MemoryOps.hdr(i * 4096L), Patterns.block(i, 1, 4096), w::complete);
                assertEquals(0, w.get(10, TimeUnit.SECONDS));
            }
            Await.until("an attempt failed while the device is gone",
                    () -> s.pathInfo().get(1).stats().reconnectsFailed() >= 1);
            assertEquals(io.rnbd.common.Errno.ENODEV, s.pathInfo().get(1).lastError());
            f.registry.addDevice(f.dev2);
            Await.until("path 2 back", () -> s.pathInfo().get(1).state() == PathState.CONNECTED);
            assertTrue(s.pathInfo().get(1).stats().reconnectsOk() >= 1);
            for (int i = 0; i < 40; i++) {
                CompletableFuture<Integer> w = new CompletableFuture<>();
                s.write(MemoryOps.hdr(i * 4096L), Patterns.block(i, 2, 4096), w::complete);
                assertEquals(0, w.get(10, TimeUnit.SECONDS));
            }
            assertTrue(s.pathInfo().get(1).stats().io().writes() > 0, "path 2 carries IO again");
        }
    }
}
