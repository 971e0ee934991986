package io.rnbd.testkit;

import java.io.File;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs external tools (the Debian NBD tools, nbdkit, qemu-img, fio, openssl) as processes,
 * like nbdkit's test-*.sh scripts do; a test whose tool is missing skips with the reason.
 */
public final class ExternalTools {
    private ExternalTools() {
    }

    public record Result(int exit, String output) {
    }

    public static boolean installed(String tool) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    public static Result run(Duration timeout, String... cmd) throws IOException, InterruptedException {
        return run(timeout, List.of(cmd));
    }

    public static Result run(Duration timeout, List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        // Drain output on a side thread so a chatty tool never blocks on a full pipe.
        StringBuilder out = new StringBuilder();
        Thread drain = new Thread(() -> {
            try {
                out.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                out.append("[output lost: ").append(e).append(']');
            }
        });
        drain.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor();
            drain.join();
            return new Result(-1, "TIMEOUT after " + timeout + ": " + out);
        }
        drain.join();
        return new Result(p.exitValue(), out.toString());
    }

    public static int freePort() throws IOException {
        return freePortOn(InetAddress.getLoopbackAddress());
    }

    /**
     * A port that every one of {@code addresses} can bind now. A port free on one address may
     * be held on another by a connection bound there (rtrs-client's two soft devices listen
     * on the same port of 127.0.0.1 and 127.0.0.2).
     */
    public static int freePortOn(InetAddress first, InetAddress... more) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try (ServerSocket s = new ServerSocket(0, 1, first)) {
                int port = s.getLocalPort();
                try {
                    for (InetAddress a : more) {
                        new ServerSocket(port, 1, a).close();
                    }
                    return port;
                } catch (BindException taken) {
                    if (attempt == 20) {
                        throw taken;
                    }
                }
            }
        }
    }

    /** Waits until something accepts connections on {@code port} (a server process starting up). */
    public static boolean awaitListening(int port, Duration timeout, Process p) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && p.isAlive()) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
            } catch (IOException e) {
                // Not yet listening: poll again shortly.
                Thread.onSpinWait();
                TimeUnit.MILLISECONDS.sleep(20);
            }
        }
        return false;
    }
}
