package io.rnbd.rnbd.command;

import static io.rnbd.rnbd.command.FakeClientAdmin.device;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.command.support.Out;
import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdClientAdmin.DeviceState;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.RnbdServerAdmin.Opener;
import java.util.List;
import org.junit.jupiter.api.Test;

/** rnbd:resize, rnbd:remap (faces of the client admin's operations: ClientAdminTest tests those), rnbd:force-close. */
class DeviceVerbCommandsTest {
    private final FakeClientAdmin client = new FakeClientAdmin().put(device("rnbd0", DeviceState.FAILED, 0, Errno.EBUSY));

    private ResizeCommand resize(String dev) {
        ResizeCommand c = new ResizeCommand();
        c.admin = client;
        c.device = dev;
        return c;
    }

    private RemapCommand remap(String dev) {
        RemapCommand c = new RemapCommand();
        c.admin = client;
        c.device = dev;
        return c;
    }

    @Test
    void resizeAndRemapPrintTheOutcomeOrTheFailure() {
        client.answer = "rnbd0: 2.0 GiB (2147483648 bytes)";
        assertEquals("rnbd0: 2.0 GiB (2147483648 bytes)\n", Out.run(resize("rnbd0")));
        client.answer = "rnbd0 remapped: mapped, 1.0 GiB";
        assertEquals("rnbd0 remapped: mapped, 1.0 GiB\n", Out.run(remap("rnbd0")));
        client.failOp = new BlockIoException(Errno.ENOTCONN, "rnbd0: session sess1 is disconnected");
        assertEquals("Error: ENOTCONN: rnbd0: session sess1 is disconnected\n", Out.run(resize("rnbd0")));
        client.failOp = new BlockIoException(Errno.EACCES, "rnbd0: export vol1 refused RW");
        assertEquals("Error: EACCES: rnbd0: export vol1 refused RW\n", Out.run(remap("rnbd0")));
        assertEquals(List.of("resizeDevice rnbd0", "remapDevice rnbd0", "resizeDevice rnbd0", "remapDevice rnbd0"),
                client.calls);
        assertEquals("Error: the RNBD client is not running (bundle rnbd-client)\n", Out.run(new RemapCommand()));
        assertEquals("Error: the RNBD client is not running (bundle rnbd-client)\n", Out.run(new ResizeCommand()));
    }

    @Test
    void forceCloseChecksExportAndOpener() {
        FakeServerAdmin server = new FakeServerAdmin().put(new ExportInfo("vol1", "memory", 4096, ExportState.ONLINE,
                false, List.of(new Opener("s1", AccessMode.RW, 0), new Opener("stuck", AccessMode.RO, 1)),
                BlockIoStats.ZERO, ""));
        ForceCloseCommand c = new ForceCloseCommand();
        c.admin = server;
        c.export = "vol1";
        c.session = "s1";
        assertEquals("export vol1: closed for session s1\n", Out.run(c));
        c.session = "s9";
        assertEquals("Error: session 's9' does not have vol1 open (open by s1, stuck)\n", Out.run(c));
        c.session = "stuck";
        assertEquals("Error: EIO: close of vol1 failed\n", Out.run(c));
        c.export = "vol9";
        assertEquals("Error: no export 'vol9'\n", Out.run(c));
        assertEquals(List.of("force-close vol1 s1", "force-close vol1 stuck"), server.calls);
    }
}
