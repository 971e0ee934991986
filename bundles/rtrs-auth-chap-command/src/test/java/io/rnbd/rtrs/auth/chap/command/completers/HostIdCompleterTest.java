package io.rnbd.rtrs.auth.chap.command.completers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rtrs.auth.chap.command.FakeChapKeyAdmin;
import java.util.List;
import org.junit.jupiter.api.Test;

class HostIdCompleterTest {
    @Test
    void hostIdsFromTheChapServiceOrNone() {
        HostIdCompleter c = new HostIdCompleter();
        assertEquals(List.of(), c.hostIds());
        FakeChapKeyAdmin admin = new FakeChapKeyAdmin();
        admin.put("h1", "DHHC-1:00:x:", null);
        admin.put("cfg-h2", "DHHC-1:00:y:", null);
        c.admin = admin;
        assertEquals(List.of("cfg-h2", "h1"), c.hostIds());
    }
}
