package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The provider's own CM natives (CmNative) live in libdisni.so, which DiSNI's class loader
 * loads; under OSGi the provider's classes come from another loader, where JNI would not
 * find them. libdisni binds them itself when the provider creates an event channel
 * ({@link CmNative#bindWhile}). This runs that in a child JVM with the two loaders Karaf
 * would have, and needs no RDMA device: the binding happens before the channel is created.
 */
class CmNativeBindingTest {
    @Test
    void theNativesAreBoundAcrossClassLoadersOnlyThroughTheProvidersContextLoader() throws Exception {
        Path lib = Path.of("target", "native", "libdisni.so");
        Assumptions.assumeTrue(Files.exists(lib), "libdisni.so not built (no rdma-core headers)");
        String out = run(List.of("-Djava.library.path=" + lib.getParent().toAbsolutePath(),
                CmNativeProbe.class.getName()));
        assertTrue(out.contains("SEPARATE true"), "DiSNI and the provider in different loaders: " + out);
        assertTrue(out.contains("WITHOUT ENOSYS"), "without the provider's context loader nothing is bound: " + out);
        assertTrue(out.contains("WITH bound"), out);
        assertTrue(out.contains("CONNECT57 EINVAL") && out.contains("ACCEPT197 EINVAL")
                && out.contains("REJECT149 EINVAL"), "oversized private data refused natively: " + out);
        assertTrue(out.contains("RECVNOQP EINVAL") && out.contains("RECV5 EINVAL"),
                "the receive native bound, refusing a null queue pair and too many SGEs: " + out);
        assertTrue(out.contains("TAKE null"), out);
        assertTrue(out.contains("LIVE 4096") && out.contains("DESTROYED EBADF"),
                "a destroyed CM id's pointer is refused before a native dereferences it: " + out);
    }

    private static String run(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path")));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "probe JVM finished");
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}
