package io.rnbd.rnbd.backend.rbd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RbdParamsTest {
    private static final RbdSettings DEFAULTS = RbdSettings.DEFAULTS;
    @TempDir
    Path dir;

    private static String error(Map<String, String> params) {
        return assertThrows(IOException.class, () -> RbdParams.parse(params, DEFAULTS)).getMessage();
    }

    @Test
    void theExportsKeysOverrideTheBackendsSettings() throws IOException {
        Path conf = Files.writeString(dir.resolve("ceph.conf"), "[global]\n");
        Path keyring = Files.writeString(dir.resolve("k"), "");
        RbdSettings settings = new RbdSettings("fast", conf.toString(), "client.rnbd", keyring.toString(), 30, 5);
        assertEquals(new RbdParams("fast", "disk0", conf.toString(), "rnbd", keyring.toString(), 0, 30, 5),
                RbdParams.parse(Map.of("image", "disk0"), settings));
        Map<String, String> own = new HashMap<>(Map.of("image", "disk1", "pool", "slow", "id", "admin",
                "create.size", "1g", "op.timeout.sec", "0", "connect.timeout.sec", "60"));
        own.put("conf", "");
        assertEquals(new RbdParams("slow", "disk1", conf.toString(), "admin", keyring.toString(), 1L << 30, 0, 60),
                RbdParams.parse(own, settings));
        assertEquals("slow/disk1", RbdParams.parse(own, settings).spec());
    }

    @Test
    void badParametersAreRefusedWithOneLineSayingWhatIsExpected() {
        assertEquals("rbd backend: unknown parameter 'size' (takes: pool, image, conf, id, keyring, create.size, "
                + "op.timeout.sec, connect.timeout.sec)", error(Map.of("image", "x", "size", "1g")));
        assertEquals("rbd backend: parameter 'image' is required (e.g. image=disk0, in pool rbd unless pool= is given)",
                error(Map.of()));
        assertEquals("rbd backend: image=rbd/x must not contain '/' or '@' (give pool= and image= apart; snapshots "
                + "are not exported)", error(Map.of("image", "rbd/x")));
        assertEquals("rbd backend: image=x@snap must not contain '/' or '@' (give pool= and image= apart; snapshots "
                + "are not exported)", error(Map.of("image", "x@snap")));
        assertEquals("rbd backend: create.size=1000 must be a positive multiple of 512 bytes",
                error(Map.of("image", "x", "create.size", "1000")));
        assertEquals("rbd backend: create.size=2000000t exceeds the largest device size (1 EiB, 2^60 bytes)",
                error(Map.of("image", "x", "create.size", "2000000t")));
        assertEquals("rbd backend: create.size=1x is not a size (e.g. 512, 64k, 1m, 1g, 1t)",
                error(Map.of("image", "x", "create.size", "1x")));
        assertEquals("rbd backend: op.timeout.sec=-1 must be a whole number of seconds from 0 to 86400",
                error(Map.of("image", "x", "op.timeout.sec", "-1")));
        assertEquals("rbd backend: connect.timeout.sec=0 must be a whole number of seconds from 1 to 86400",
                error(Map.of("image", "x", "connect.timeout.sec", "0")));
        assertEquals("rbd backend: conf=/nonexistent/ceph.conf is not a readable file",
                error(Map.of("image", "x", "conf", "/nonexistent/ceph.conf")));
        assertEquals("rbd backend: keyring=/nonexistent/k is not a readable file",
                error(Map.of("image", "x", "keyring", "/nonexistent/k")));
    }

    @Test
    void settingsAreValidatedWhenTheBackendIsConfigured() {
        assertEquals("op.timeout.sec=-5 must be between 0 and 86400", assertThrows(IllegalArgumentException.class,
                () -> new RbdSettings("rbd", "", "admin", "", -5, 10)).getMessage());
        assertEquals("connect.timeout.sec=0 must be between 1 and 86400", assertThrows(IllegalArgumentException.class,
                () -> new RbdSettings("rbd", "", "admin", "", 0, 0)).getMessage());
        assertEquals("admin", new RbdSettings("rbd", null, " ", null, 0, 10).id());
    }
}
