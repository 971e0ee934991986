package io.rnbd.rtrs.auth.chap.internal.osgi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapSecrets;
import java.lang.reflect.Proxy;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/** The DS wrapper with a hand-made BundleContext: registration, rotation, refusal. */
class ChapAuthenticatorComponentTest {
    @TempDir
    Path dir;
    private final List<Dictionary<String, ?>> registered = new ArrayList<>();
    private final List<String> unregistered = new ArrayList<>();
    private final String secret = ChapSecrets.generate(1, 32);

    @Test
    void registersWithOnlyTheMethodPropertyAndNoSecrets() throws Exception {
        ChapAuthenticatorComponent c = new ChapAuthenticatorComponent(context(), config(""), Map.of("host.h", secret));
        assertEquals(1, registered.size());
        assertEquals(Collections.list(registered.get(0).keys()), List.of(Authenticator.PROP_METHOD));
        assertEquals("chap", registered.get(0).get(Authenticator.PROP_METHOD));
        assertEquals("chap", c.method());
        c.initiate("h");
        c.deactivate();
        assertEquals(List.of("unregistered"), unregistered);
    }

    @Test
    void configUpdateRotatesKeysInPlace() throws Exception {
        ChapAuthenticatorComponent c = new ChapAuthenticatorComponent(context(), config(""), Map.of("host.h", secret));
        c.modified(config(""), Map.of("host.other", secret));
        assertEquals(Errno.ENOKEY, assertThrows(AuthException.class, () -> c.initiate("h")).errno());
        c.initiate("other");
        // an invalid update is refused and the previous keys stay in force
        c.modified(config(""), Map.of("host.other", "DHHC-1:09:garbage:"));
        c.initiate("other");
        assertEquals(1, registered.size(), "no re-registration on update");
    }

    @Test
    void refusesAnOpenKeysFileAtActivation() throws Exception {
        Assumptions.assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"), "POSIX fs");
        Path keys = dir.resolve("rnbd-chap.keys");
        Files.writeString(keys, "host.f=" + secret + "\n");
        Files.setPosixFilePermissions(keys, PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ChapAuthenticatorComponent(context(), config(keys.toString()), Map.of()));
        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        assertEquals(0, registered.size());

        Files.setPosixFilePermissions(keys, PosixFilePermissions.fromString("rw-------"));
        ChapAuthenticatorComponent c = new ChapAuthenticatorComponent(context(), config(keys.toString()), Map.of());
        c.initiate("f");
        ((ChapKeyAdmin) c).put("g", secret, null);
        c.initiate("g");
        // an update that finds the file opened up keeps the keys in force
        Files.setPosixFilePermissions(keys, PosixFilePermissions.fromString("rw-rw-rw-"));
        c.modified(config(keys.toString()), Map.of());
        c.initiate("g");
    }

    private BundleContext context() {
        return (BundleContext) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {BundleContext.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("registerService")) {
                        registered.add((Dictionary<String, ?>) args[2]);
                        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ServiceRegistration.class},
                                (p, m, a) -> {
                                    if (m.getName().equals("unregister")) {
                                        unregistered.add("unregistered");
                                    }
                                    return null;
                                });
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private static ChapAuthenticatorComponent.Config config(String keysFile) {
        Map<String, Object> values = new HashMap<>(Map.of("target_id", "tgt", "hashes", "sha256",
                "dhgroups", "null", "keys_file", keysFile));
        return (ChapAuthenticatorComponent.Config) Proxy.newProxyInstance(
                ChapAuthenticatorComponent.Config.class.getClassLoader(),
                new Class<?>[] {ChapAuthenticatorComponent.Config.class},
                (proxy, method, args) -> values.get(method.getName()));
    }
}
