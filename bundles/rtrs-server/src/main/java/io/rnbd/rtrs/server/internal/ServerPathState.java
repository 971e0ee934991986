package io.rnbd.rtrs.server.internal;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The states of a server path (Linux's enum rtrs_srv_state) and the only moves between them,
 * rtrs_srv_change_state's switch as a table: a path connects once, and closing is for good.
 */
enum ServerPathState {
    CONNECTING, CONNECTED, CLOSING, CLOSED;

    private static final Map<ServerPathState, Set<ServerPathState>> MOVES = new EnumMap<>(ServerPathState.class);

    static {
        MOVES.put(CONNECTING, EnumSet.of(CONNECTED, CLOSING));
        MOVES.put(CONNECTED, EnumSet.of(CLOSING));
        MOVES.put(CLOSING, EnumSet.of(CLOSED));
        MOVES.put(CLOSED, EnumSet.noneOf(ServerPathState.class));
    }

    /** Whether Linux moves a path from this state to {@code to}. */
    boolean canMoveTo(ServerPathState to) {
        return MOVES.get(this).contains(to);
    }
}
