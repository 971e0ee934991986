package io.rnbd.rxe.interop;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The appliance's RNBD server as a process of its own, for the tests that kill it
 * ({@link ApplianceProcess}): the same wiring as {@link Appliance}, file exports only (what was
 * flushed must outlive the process).
 *
 * <pre>
 * java ... io.rnbd.rxe.interop.ApplianceServerMain ADDR[,ADDR2] PORT QUEUE_DEPTH NAME=PATH[,NAME=PATH...]
 * </pre>
 *
 * Prints {@code LISTENING} once every export is added and the server listens; runs until killed
 * (SIGTERM closes it as a stopping bundle would, SIGKILL leaves everything to the kernel).
 */
public final class ApplianceServerMain {
    private ApplianceServerMain() {
    }

    public static void main(String[] args) throws Exception {
        List<String> addresses = List.of(args[0].split(","));
        int port = Integer.parseInt(args[1]);
        int queueDepth = Integer.parseInt(args[2]);
        Appliance a = Appliance.onDisni(addresses, port, true, queueDepth);
        for (String e : args[3].split(",")) {
            String[] kv = e.split("=", 2);
            a.exportFile(kv[0], Path.of(kv[1]));
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
