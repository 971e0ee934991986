package io.rnbd.rtrs.auth.chap.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChapKeyAdminImplTest {
    @TempDir
    Path dir;
    private final String secret = Chaps.secret(2, 48);

    @Test
    void putListRemoveWithoutEverShowingSecrets() throws Exception {
        Assumptions.assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"), "POSIX fs");
        ChapKeyStore store = new ChapKeyStore();
        store.setConfigKeys(Map.of("cfg-host", new HostKeys(Chaps.key(Chaps.secret(0, 32)), null)));
        ChapKeyAdminImpl admin = new ChapKeyAdminImpl(store, new KeyFile(dir.resolve("keys")));

        admin.put("file-host", secret, Chaps.secret(1, 32));
        List<ChapKeyInfo> list = admin.list();
        assertEquals(List.of(
                new ChapKeyInfo("cfg-host", "none", 32, false, ChapKeyInfo.SOURCE_CONFIG),
                new ChapKeyInfo("file-host", "sha384", 48, true, ChapKeyInfo.SOURCE_FILE)), list);
        assertFalse(list.toString().contains(secret.substring(10, 30)));
        assertTrue(store.lookup("file-host") != null, "in force at once");

        assertTrue(admin.remove("file-host"));
        assertEquals(null, store.lookup("file-host"));
        assertFalse(admin.remove("nobody"));
        IllegalStateException cfg = assertThrows(IllegalStateException.class, () -> admin.remove("cfg-host"));
        assertTrue(cfg.getMessage().contains("io.rnbd.rtrs.auth.chap"), cfg.getMessage());
    }

    @Test
    void invalidInputIsRejectedWithoutEcho() {
        ChapKeyAdminImpl admin = new ChapKeyAdminImpl(new ChapKeyStore(), new KeyFile(dir.resolve("keys")));
        String broken = secret.replace("DHHC-1:02", "DHHC-1:07");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> admin.put("h", broken, null));
        DhchapKeyTest.assertNoLeak(broken, e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> admin.put("has space", secret, null));
        assertThrows(IllegalArgumentException.class, () -> admin.put("h", secret, "DHHC-1:00:nope:"));
    }

    @Test
    void withoutAKeysFileTheAdminIsReadOnly() {
        ChapKeyAdminImpl admin = new ChapKeyAdminImpl(new ChapKeyStore(), null);
        assertEquals(List.of(), admin.list());
        assertThrows(IllegalStateException.class, () -> admin.put("h", secret, null));
        assertThrows(IllegalStateException.class, () -> admin.remove("h"));
    }

    @Test
    void rotationThroughTheAdminAppliesToTheNextExchange() throws Exception {
        Assumptions.assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"), "POSIX fs");
        ChapKeyStore targetStore = new ChapKeyStore();
        ChapKeyAdminImpl admin = new ChapKeyAdminImpl(targetStore, new KeyFile(dir.resolve("keys")));
        ChapSettings s = Chaps.settings("t", ChapHash.SHA256, DhGroup.NULL);
        ChapAuthenticator target = Chaps.auth(targetStore, s);
        ChapAuthenticator host = Chaps.auth(Chaps.store("h", secret, null), s);

        AuthException none = assertThrows(AuthException.class, () -> Chaps.run(host.initiate("h"), target.respond()));
        assertEquals(Errno.ENOKEY, none.errno());
        admin.put("h", secret, null);
        Chaps.run(host.initiate("h"), target.respond());
        admin.put("h", Chaps.secret(1, 32), null);
        AuthException rejected = assertThrows(AuthException.class, () -> Chaps.run(host.initiate("h"), target.respond()));
        assertEquals(Errno.EKEYREJECTED, rejected.errno());
    }
}
