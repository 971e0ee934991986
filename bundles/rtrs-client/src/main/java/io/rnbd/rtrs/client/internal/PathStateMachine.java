package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.PathState;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static io.rnbd.rtrs.api.PathState.CLOSED;
import static io.rnbd.rtrs.api.PathState.CLOSING;
import static io.rnbd.rtrs.api.PathState.CONNECTED;
import static io.rnbd.rtrs.api.PathState.CONNECTING;
import static io.rnbd.rtrs.api.PathState.CONNECTING_ERR;
import static io.rnbd.rtrs.api.PathState.DEAD;
import static io.rnbd.rtrs.api.PathState.RECONNECTING;

/** The allowed moves of a client path (rtrs_clt_change_state's switch, as a table). */
public final class PathStateMachine {
    private static final Map<PathState, Set<PathState>> ALLOWED = new EnumMap<>(PathState.class);

    static {
        ALLOWED.put(CONNECTING, EnumSet.of(CONNECTED, CONNECTING_ERR, CLOSING));
        ALLOWED.put(CONNECTING_ERR, EnumSet.of(RECONNECTING, CLOSING));
        ALLOWED.put(RECONNECTING, EnumSet.of(CONNECTING, CLOSING));
        ALLOWED.put(CONNECTED, EnumSet.of(RECONNECTING, CLOSING));
        ALLOWED.put(CLOSING, EnumSet.of(CLOSED));
        ALLOWED.put(CLOSED, EnumSet.of(RECONNECTING, DEAD));
        ALLOWED.put(DEAD, EnumSet.noneOf(PathState.class));
    }

    private PathState state = CONNECTING;

    public PathState state() {
        return state;
    }

    public static boolean allowed(PathState from, PathState to) {
        return ALLOWED.get(from).contains(to);
    }

    /** The one way a path changes state; false (and no change) if the move is not allowed. */
    public boolean change(PathState to) {
        if (!allowed(state, to)) {
            return false;
        }
        state = to;
        return true;
    }
}
