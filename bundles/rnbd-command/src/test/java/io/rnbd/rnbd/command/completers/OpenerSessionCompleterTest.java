package io.rnbd.rnbd.command.completers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rnbd.api.AccessMode;
import io.rnbd.rnbd.api.BlockIoStats;
import io.rnbd.rnbd.api.RnbdServerAdmin;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportInfo;
import io.rnbd.rnbd.api.RnbdServerAdmin.ExportState;
import io.rnbd.rnbd.api.RnbdServerAdmin.Opener;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OpenerSessionCompleterTest {
    @Test
    void sessionsOfTheExportOnTheLineElseOfAll() {
        OpenerSessionCompleter c = new OpenerSessionCompleter();
        assertEquals(Set.of(), c.sessions(List.of("rnbd:force-close", "a")));
        c.admin = new RnbdServerAdmin() {
            @Override
            public List<ExportInfo> exports() {
                return List.of(
                        new ExportInfo("a", "memory", 1, ExportState.ONLINE, false,
                                List.of(new Opener("s1", AccessMode.RW, 0)), BlockIoStats.ZERO, ""),
                        new ExportInfo("b", "memory", 1, ExportState.ONLINE, false,
                                List.of(new Opener("s2", AccessMode.RO, 0), new Opener("s3", AccessMode.RO, 1)),
                                BlockIoStats.ZERO, ""));
            }

            @Override
            public void forceClose(String export, String session) {
            }

            @Override
            public void resetStats(String export) {
            }
        };
        assertEquals(Set.of("s1"), c.sessions(List.of("rnbd:force-close", "a", "")));
        assertEquals(Set.of("s2", "s3"), c.sessions(List.of("rnbd:force-close", "b")));
        assertEquals(Set.of("s1", "s2", "s3"), c.sessions(List.of("rnbd:force-close", "c")));
    }
}
