package io.rnbd.rnbd.backend.rbd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rnbd.common.Errno;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What needs no cluster: the dormant backend, the reasons it gives, FUA and connect errors. */
class RbdBackendTest {

    @Test
    void aDormantBackendFailsEveryOpenWithItsReason() {
        RbdBackend b = new RbdBackend(RbdSettings.DEFAULTS, "librbd is not installed on this machine", 100);
        assertEquals("librbd is not installed on this machine", b.dormantReason());
        assertEquals(null, b.librbdVersion());
        IOException e = assertThrows(IOException.class, () -> b.open(Map.of("image", "x"), false));
        assertEquals("rbd backend is dormant: librbd is not installed on this machine", e.getMessage());
        b.close();
    }

    @Test
    void linkErrorsAreTranslatedIntoWhatToDo() {
        assertEquals("librbd is not installed on this machine (apt-get install librbd1): /x/librnbd-rbd.so: librbd.so.1: "
                + "cannot open shared object file: No such file or directory", RbdNative.reason(
                "/x/librnbd-rbd.so: librbd.so.1: cannot open shared object file: No such file or directory"));
        assertEquals("this build of rnbd-backend-rbd has no librnbd-rbd.so (it was built where the Ceph headers were "
                + "missing; rebuild it with librbd-dev and librados-dev installed)",
                RbdNative.reason("no rnbd-rbd in java.library.path: /usr/lib"));
        assertEquals("librnbd-rbd.so is still held by an earlier copy of this bundle; restart Karaf",
                RbdNative.reason("Native Library /a/librnbd-rbd.so already loaded in another classloader"));
    }

    @Test
    void fuaIsTheOpFlagExceptBehindAWriteBackCache() {
        assertEquals(RbdBlockDevice.Fua.FLAG, RbdBackend.fuaMode("true", "writearound"));
        assertEquals(RbdBlockDevice.Fua.FLAG, RbdBackend.fuaMode("false", "writeback"));
        assertEquals(RbdBlockDevice.Fua.FLUSH, RbdBackend.fuaMode("true", "writeback"));
        assertEquals(RbdBlockDevice.Fua.FLUSH, RbdBackend.fuaMode(null, null), "unknown: the safe way");
    }

    @Test
    void connectErrorsSayWhatToCheck() throws IOException {
        RbdParams p = RbdParams.parse(Map.of("image", "x", "connect.timeout.sec", "3"), RbdSettings.DEFAULTS);
        assertEquals("no answer from the monitors of Ceph's default ceph.conf ($CEPH_CONF, /etc/ceph/ceph.conf) "
                + "within 3 s (connect.timeout.sec)",
                RbdBackend.describeConnect(new RbdException(Errno.ETIMEDOUT, "rados_connect"), p));
        assertEquals("no keyring for client.admin (give backend.keyring)",
                RbdBackend.describeConnect(new RbdException(Errno.ENOENT, "rados_connect"), p));
        assertEquals("the cluster refused client.admin (wrong key in its keyring?)",
                RbdBackend.describeConnect(new RbdException(Errno.EACCES, "rados_connect"), p));
        assertEquals("cannot read Ceph's default ceph.conf ($CEPH_CONF, /etc/ceph/ceph.conf) (ENOENT); give "
                + "backend.conf", RbdBackend.describeConnect(new RbdException(Errno.ENOENT, "rados_conf_read_file"), p));
    }
}
