package io.rnbd.rtrs.server.internal;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

class ServerPathStateTest {
    /** Every (from, to) pair: exactly rtrs_srv_change_state's moves are allowed. */
    @Test
    void fullTable() {
        String[] allowed = {
            "CONNECTING>CONNECTED", "CONNECTING>CLOSING",
            "CONNECTED>CLOSING",
            "CLOSING>CLOSED",
        };
        Set<String> yes = Set.of(allowed);
        int count = 0;
        for (ServerPathState from : ServerPathState.values()) {
            for (ServerPathState to : ServerPathState.values()) {
                boolean expect = yes.contains(from + ">" + to);
                assertEquals(expect, from.canMoveTo(to), from + " -> " + to);
                count += expect ? 1 : 0;
            }
        }
        assertEquals(allowed.length, count);
    }

    @Test
    void aPathNeitherReconnectsNorLeavesClosed() {
        assertFalse(ServerPathState.CONNECTED.canMoveTo(ServerPathState.CONNECTING), "no reconnect in place");
        assertFalse(ServerPathState.CONNECTING.canMoveTo(ServerPathState.CLOSED), "closed only through closing");
        for (ServerPathState to : ServerPathState.values()) {
            assertFalse(ServerPathState.CLOSED.canMoveTo(to), "CLOSED is final, not -> " + to);
        }
    }
}
