package io.rnbd.rdma.disni.internal;

import io.rnbd.rdma.api.RdmaDevice;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Run in a child JVM by {@link NoNativeLibraryTest}: the real runtime probe and the real
 * device factory over a fake sysfs tree, one scan, the status line on stdout.
 */
public final class DormancyProbe {
    private DormancyProbe() {
    }

    public static void main(String[] args) throws Exception {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        DisniProvider p = new DisniProvider(new SysfsScanner(Path.of(args[0])), new DisniRuntime(),
                info -> DisniDevice.open(info, new DisniSettings(2000)), new DeviceListener() {
                    @Override
                    public void deviceAdded(RdmaDevice device) {
                        System.out.println("REGISTERED " + device.name());
                    }

                    @Override
                    public void deviceRemoved(RdmaDevice device) {
                        System.out.println("UNREGISTERED " + device.name());
                    }
                }, scheduler, Duration.ofSeconds(60));
        p.scan();
        p.scan();
        System.out.println("STATUS " + p.status().line());
        p.close();
        scheduler.shutdown();
    }
}
