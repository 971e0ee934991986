package io.rnbd.rtrs.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.command.support.Out;
import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;
import io.rnbd.rtrs.auth.chap.api.ChapKeyInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuthKeyStoresTest {
    private static final ChapKeyAdmin ADMIN = new ChapKeyAdmin() {
        @Override
        public List<ChapKeyInfo> list() {
            return List.of(new ChapKeyInfo("h1", "none", 32, false, ChapKeyInfo.SOURCE_FILE));
        }

        @Override
        public void put(String hostId, String hostSecret, String ctrlSecret) {
        }

        @Override
        public boolean remove(String hostId) {
            return false;
        }
    };

    @Test
    void findsTheChapAdminByNameAndReleasesIt() {
        FakeContext ctx = new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, ADMIN);
        try (AuthKeyStores.Held held = AuthKeyStores.open(ctx.context, null)) {
            assertEquals(List.of(new AuthKeyStore.KeyInfo("h1", "none", 32, false, "file")), held.store().list());
        }
        assertEquals(1, ctx.gets.get());
        assertEquals(1, ctx.ungets.get());
    }

    @Test
    void noServiceMeansNotInstalled() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> AuthKeyStores.open(new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, null).context, null));
        assertEquals("the chap authentication bundle is not installed", e.getMessage());
        assertThrows(IllegalStateException.class, () -> AuthKeyStores.open(null, null));
    }

    @Test
    void aServiceThisBundleCannotUseAsksForARefreshAndIsReleased() {
        FakeContext ctx = new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, "not a ChapKeyAdmin");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> AuthKeyStores.open(ctx.context, null));
        assertEquals("the chap authentication bundle was installed after rtrs-command; run bundle:refresh rtrs-command",
                e.getMessage());
        assertEquals(1, ctx.ungets.get());
    }

    @Test
    void theKeyCommandsUseTheServiceFromTheContext() {
        AuthKeysCommand c = new AuthKeysCommand();
        c.bundleContext = new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, ADMIN).context;
        assertEquals("HOST ID  TRANSFORM  KEY BYTES  CTRL KEY  SOURCE\nh1       none       32         no        file\n",
                Out.run(c));
        AuthKeyRemoveCommand r = new AuthKeyRemoveCommand();
        r.bundleContext = new FakeContext(AuthKeyStores.CHAP_KEY_ADMIN, null).context;
        r.hostId = "h1";
        assertEquals("Error: the chap authentication bundle is not installed\n", Out.run(r));
    }
}
