package io.rnbd.nbd.gateway.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A throw-away CA, a server certificate for localhost / 127.0.0.1 and a client certificate, in
 * the layout nbdkit's {@code --tls-certificates}, libnbd's {@code tls-certificates} and qemu's
 * {@code tls-creds-x509} read ({@code ca-cert.pem}, {@code server-cert.pem},
 * {@code server-key.pem}, {@code client-cert.pem}, {@code client-key.pem}). Made with the
 * openssl tool: the JDK has no public API to issue certificates.
 */
public final class TestCerts {
    private TestCerts() {
    }

    /** Server side: CA, server key and chain. */
    public static void make(Path dir) throws IOException, InterruptedException {
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "ca-key.pem", "-out", "ca-cert.pem", "-days", "2", "-subj", "/CN=rnbd test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        issue(dir, "server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        issue(dir, "client", "/CN=rnbd test client", "extendedKeyUsage=clientAuth\n");
    }

    private static void issue(Path dir, String who, String subject, String ext)
            throws IOException, InterruptedException {
        Files.writeString(dir.resolve(who + ".ext"), ext);
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", who + "-key.pem", "-out", who + ".csr", "-subj", subject);
        openssl(dir, "x509", "-req", "-in", who + ".csr", "-CA", "ca-cert.pem", "-CAkey", "ca-key.pem",
                "-CAcreateserial", "-out", who + "-cert.pem", "-days", "2", "-extfile", who + ".ext");
    }

    /** A directory with only the CA: a client that trusts the server but has no certificate of its own. */
    public static Path caOnly(Path certs, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.copy(certs.resolve("ca-cert.pem"), dir.resolve("ca-cert.pem"));
        return dir;
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(Duration.ofSeconds(30).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                || p.exitValue() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
        }
    }
}
