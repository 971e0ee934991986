package io.rnbd.rtrs.auth.chap.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Assumptions;

class KeyFileTest {
    @TempDir
    Path dir;
    private Path path;
    private final String hostSecret = Chaps.secret(1, 32);
    private final String ctrlSecret = Chaps.secret(0, 64);

    @BeforeEach
    void posixOnly() {
        Assumptions.assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"),
                "file permission checks need a POSIX file system");
        path = dir.resolve("rnbd-chap.keys");
    }

    private void write(String content, String perms) throws Exception {
        Files.writeString(path, content);
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(perms));
    }

    @Test
    void missingFileMeansNoKeys() throws Exception {
        assertEquals(Map.of(), new KeyFile(path).load());
    }

    @Test
    void loadsOwnerOnlyFile() throws Exception {
        write("# comment\n\nhost.nqn.2014-08.org:uuid:1=" + hostSecret + "\nctrl.nqn.2014-08.org:uuid:1 = " + ctrlSecret
                + "\nhost.b=" + hostSecret + "\n", "rw-------");
        Map<String, HostKeys> keys = new KeyFile(path).load();
        assertEquals(2, keys.size());
        assertTrue(keys.get("nqn.2014-08.org:uuid:1").hasCtrlKey());
        assertFalse(keys.get("b").hasCtrlKey());
    }

    @Test
    void refusesAFileReadableByGroupOrOthers() throws Exception {
        for (String perms : new String[] {"rw-r--r--", "rw-r-----", "rw----r--", "rw--w----"}) {
            write("host.a=" + hostSecret + "\n", perms);
            ChapKeyException e = assertThrows(ChapKeyException.class, () -> new KeyFile(path).load(), perms);
            assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
            assertTrue(e.getMessage().contains(perms), e.getMessage());
            DhchapKeyTest.assertNoLeak(hostSecret, e.getMessage());
        }
    }

    @Test
    void malformedLinesAreReportedWithoutTheirContent() throws Exception {
        write("host.a " + hostSecret + "\n", "rw-------");
        ChapKeyException e = assertThrows(ChapKeyException.class, () -> new KeyFile(path).load());
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
        DhchapKeyTest.assertNoLeak(hostSecret, e.getMessage());

        write("host.a=" + hostSecret + "\nhost.a=" + hostSecret + "\n", "rw-------");
        assertTrue(assertThrows(ChapKeyException.class, () -> new KeyFile(path).load()).getMessage().contains("duplicate"));

        write("ctrl.a=" + ctrlSecret + "\n", "rw-------");
        assertTrue(assertThrows(ChapKeyException.class, () -> new KeyFile(path).load()).getMessage().contains("needs host.a"));

        String badCrc = hostSecret.substring(0, 20) + (hostSecret.charAt(20) == 'A' ? 'B' : 'A') + hostSecret.substring(21);
        write("host.a=" + badCrc + "\n", "rw-------");
        ChapKeyException crc = assertThrows(ChapKeyException.class, () -> new KeyFile(path).load());
        assertTrue(crc.getMessage().contains("host.a"), crc.getMessage());
        DhchapKeyTest.assertNoLeak(badCrc, crc.getMessage());
    }

    @Test
    void putAndRemoveRewriteTheFileOwnerOnly() throws Exception {
        KeyFile file = new KeyFile(path);
        file.put("h1", new HostKeys(Chaps.key(hostSecret), Chaps.key(ctrlSecret)));
        file.put("h2", new HostKeys(Chaps.key(hostSecret), null));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
        assertEquals(2, file.load().size());
        file.put("h1", new HostKeys(Chaps.key(hostSecret), null)); // replacing drops the old ctrl key
        assertFalse(file.load().get("h1").hasCtrlKey());
        assertTrue(file.remove("h1"));
        assertFalse(file.remove("h1"));
        assertNull(file.load().get("h1"));
        assertNotNull(file.load().get("h2"));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary files left behind");
        }
    }
}
