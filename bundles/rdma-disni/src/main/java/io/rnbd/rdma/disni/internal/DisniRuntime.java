package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaVerbs;
import java.io.IOException;
import java.util.Optional;

/**
 * Probes DiSNI's native library once. The answer is final for this JVM: a failed
 * {@code System.loadLibrary} in DiSNI's static initialiser leaves its dispatcher class
 * unusable until restart, and a loaded library cannot be unloaded.
 */
public final class DisniRuntime implements VerbsRuntime {
    private Optional<String> reason;

    @Override
    public synchronized Optional<String> unavailableReason() {
        if (reason == null) {
            reason = probe();
        }
        return reason;
    }

    private static Optional<String> probe() {
        try {
            RdmaCm.open();
            RdmaVerbs.open();
            return Optional.empty();
        } catch (UnsatisfiedLinkError e) {
            return Optional.of(explain(e));
        } catch (NoClassDefFoundError e) {
            return Optional.of("DiSNI's native library failed to load earlier in this JVM; restart after installing it");
        } catch (IOException e) {
            return Optional.of("DiSNI refused the native library: " + e.getMessage());
        } catch (LinkageError e) {
            return Optional.of("DiSNI native library unusable: " + e);
        }
    }

    static String explain(UnsatisfiedLinkError e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains("librdmacm") || m.contains("libibverbs")) {
            return "rdma-core missing (install rdma-core and ibverbs-providers): " + m;
        }
        if (m.contains("no disni")) {
            return "native library libdisni.so not found in java.library.path ("
                    + System.getProperty("java.library.path") + "); copy it to $KARAF_HOME/lib";
        }
        return "native library libdisni.so not loadable: " + m;
    }
}
