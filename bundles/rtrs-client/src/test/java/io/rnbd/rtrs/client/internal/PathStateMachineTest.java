package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.PathState;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static io.rnbd.rtrs.api.PathState.CLOSED;
import static io.rnbd.rtrs.api.PathState.CLOSING;
import static io.rnbd.rtrs.api.PathState.CONNECTED;
import static io.rnbd.rtrs.api.PathState.CONNECTING;
import static io.rnbd.rtrs.api.PathState.CONNECTING_ERR;
import static io.rnbd.rtrs.api.PathState.DEAD;
import static io.rnbd.rtrs.api.PathState.RECONNECTING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PathStateMachineTest {
    /** Every (from, to) pair; exactly these moves are allowed. */
    @Test
    void fullTable() {
        String[] allowed = {
            "CONNECTING>CONNECTED", "CONNECTING>CONNECTING_ERR", "CONNECTING>CLOSING",
            "CONNECTING_ERR>RECONNECTING", "CONNECTING_ERR>CLOSING",
            "RECONNECTING>CONNECTING", "RECONNECTING>CLOSING",
            "CONNECTED>RECONNECTING", "CONNECTED>CLOSING",
            "CLOSING>CLOSED",
            "CLOSED>RECONNECTING", "CLOSED>DEAD",
        };
        Set<String> yes = Set.of(allowed);
        int count = 0;
        for (PathState from : PathState.values()) {
            for (PathState to : PathState.values()) {
                boolean expect = yes.contains(from + ">" + to);
                assertEquals(expect, PathStateMachine.allowed(from, to), from + " -> " + to);
                count += expect ? 1 : 0;
            }
        }
        assertEquals(allowed.length, count);
    }

    @Test
    void refusedMoveLeavesStateUnchanged() {
        PathStateMachine sm = new PathStateMachine();
        assertEquals(CONNECTING, sm.state());
        assertFalse(sm.change(DEAD));
        assertEquals(CONNECTING, sm.state());
        for (PathState s : new PathState[] {CONNECTED, RECONNECTING, CONNECTING, CONNECTING_ERR, CLOSING, CLOSED, DEAD}) {
            assertTrue(sm.change(s), "-> " + s);
        }
        for (PathState s : EnumSet.allOf(PathState.class)) {
            assertFalse(sm.change(s), "DEAD is final, not -> " + s);
        }
    }
}
