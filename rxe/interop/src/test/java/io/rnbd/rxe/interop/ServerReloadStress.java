package io.rnbd.rxe.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.client.internal.ClientSession;
import io.rnbd.testkit.Await;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * By hand, not in CI (its name is no test's, so neither surefire nor the default RXE_TESTS run
 * it): Linux's rnbd-server and rtrs-server reloaded {@code -Dreloads=N} times (default 30) under
 * a mapped two-path appliance session, each time both paths back and the session made once
 * ({@link LinuxRnbd#serverSessionMadeTwice}); every reload's kernel log is printed. What it found
 * on 7.3 before {@code FirstConn} made the paths come back one at a time: docs/interop.md, run 13.
 *
 * <pre>RXE_KERNEL=newest RXE_TESTS=io.rnbd.rxe.interop.ServerReloadStress RXE_JAVA_OPTS=-Dreloads=40 rxe/run-rxe-tests.sh</pre>
 */
class ServerReloadStress {
    @RegisterExtension
    static final LinuxModules linux = LinuxModules.eachTest().unloading("brd");

    @Test
    void reloadsUnderAMappedTwoPathSession() throws Exception {
        int n = Integer.getInteger("reloads", 30);
        String sess = "interop-reload";
        LinuxRnbd.unloadAll();
        Guest.unload("brd");
        Guest.modprobe("brd", "rd_nr=1", "rd_size=" + 32 * 1024);
        LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
        int twice = 0;
        try (Appliance a = Appliance.onDisni(List.of(Guest.addr(), Guest.addr2()), 0)) {
            ClientSession s = a.connect(sess, List.of(new InetSocketAddress(Guest.addr(), LinuxRnbd.DEFAULT_PORT),
                    new InetSocketAddress(Guest.addr2(), LinuxRnbd.DEFAULT_PORT)));
            RemoteBlockDevice dev = a.map("rnbd-" + sess, s, "ram0", AccessMode.RW);
            for (int i = 0; i < n; i++) {
                Guest.check("dmesg", "-C");
                Guest.unload("rnbd-server", "rtrs-server");
                Await.until("paths gone", () -> s.pathInfo().stream().noneMatch(p -> p.state() == PathState.CONNECTED),
                        Guest.timeout(Duration.ofSeconds(20)));
                LinuxRnbd.loadServer(LinuxRnbd.DEFAULT_PORT, "/dev", true);
                Await.until("reload " + i + ": both paths back", () -> s.pathInfo().stream()
                        .allMatch(p -> p.state() == PathState.CONNECTED), Guest.timeout(Duration.ofSeconds(30)));
                long made = LinuxRnbd.serverSessionMadeTwice();
                twice += made > 0 ? 1 : 0;
                System.out.printf("reload %d: both paths back, session made twice: %s%n", i, made > 0);
                for (String l : Guest.check("dmesg").split("\n")) {
                    if (!l.contains("speed is unknown")) {
                        System.out.println("  " + l);
                    }
                }
            }
            a.rnbdClient().unmap(dev.name(), false);
        }
        assertEquals(0, twice, "reloads after which Linux's server had made the session twice, of " + n);
    }
}
