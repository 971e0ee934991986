package io.rnbd.rxe.interop;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The appliance's RNBD server as a process of its own, for the tests that kill it
 * ({@link ApplianceProcess}) and for bench/linux-peer: the same wiring as {@link Appliance} but
 * for its {@link OpTap} (no test reads one in another process, and the bench measures the path as
 * shipped), file exports (what was flushed must outlive the process) and, for the benchmark,
 * exports on the shipped memory backend.
 *
 * <pre>
 * java ... io.rnbd.rxe.interop.ApplianceServerMain ADDR[,ADDR2] PORT QUEUE_DEPTH NAME=SPEC[,NAME=SPEC...]
 *   SPEC: a file or block device's path, or memory:BYTES
 * </pre>
 *
 * Prints {@code LISTENING} once every export is added and the server listens; runs until killed
 * (SIGTERM closes it as a stopping bundle would, SIGKILL leaves everything to the kernel).
 */
public final class ApplianceServerMain {
    private static final String MEMORY = "memory:";

    private ApplianceServerMain() {
    }

    public static void main(String[] args) throws Exception {
        List<String> addresses = List.of(args[0].split(","));
        int port = Integer.parseInt(args[1]);
        int queueDepth = Integer.parseInt(args[2]);
        // always_invalidate on unless -DalwaysInvalidate=false: what it costs per request is a bench question
        boolean alwaysInvalidate = Boolean.parseBoolean(System.getProperty("alwaysInvalidate", "true"));
        Appliance a = Appliance.process(addresses, port, alwaysInvalidate, queueDepth);
        for (String e : args[3].split(",")) {
            String[] kv = e.split("=", 2);
            if (kv[1].startsWith(MEMORY)) {
                a.exportShippedMemory(kv[0], Long.parseLong(kv[1].substring(MEMORY.length())));
            } else {
                a.exportFile(kv[0], Path.of(kv[1]));
            }
        }
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                a.close();
            } catch (Exception ex) {
                ex.printStackTrace();
            } finally {
                closed.countDown();
            }
        }));
        System.out.println("LISTENING " + a.listening(addresses.get(0)));
        System.out.flush();
        closed.await();
    }
}
