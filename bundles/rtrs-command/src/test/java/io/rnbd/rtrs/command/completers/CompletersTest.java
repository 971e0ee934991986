package io.rnbd.rtrs.command.completers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.common.Provider;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;
import io.rnbd.rtrs.api.RtrsClientPathInfo;
import io.rnbd.rtrs.api.RtrsClientSessionInfo;
import io.rnbd.rtrs.api.SessionState;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CompletersTest {
    private static RtrsClientPathInfo p(String name) {
        return new RtrsClientPathInfo(name, "", name, PathState.CONNECTED, "", 0, 0, null);
    }

    private static final List<RtrsClientSessionInfo> SESSIONS = List.of(
            new RtrsClientSessionInfo("a", SessionState.CONNECTED, 0, 1, "", "", -1, List.of(p("1@2"), p("3@4"))),
            new RtrsClientSessionInfo("b", SessionState.CONNECTED, 0, 1, "", "", -1, List.of(p("5@6"))));

    private static final RtrsClientAdmin ADMIN = new RtrsClientAdmin() {
        @Override
        public List<RtrsClientSessionInfo> sessions() {
            return SESSIONS;
        }

        @Override
        public Optional<RtrsClientSessionInfo> session(String name) {
            return SESSIONS.stream().filter(s -> s.name().equals(name)).findFirst();
        }

        @Override
        public void addPath(String s, String p) {
        }

        @Override
        public void removePath(String s, String p) {
        }

        @Override
        public void reconnectPath(String s, String p) {
        }

        @Override
        public void disconnectPath(String s, String p) {
        }

        @Override
        public void setMpPolicy(String s, String p) {
        }

        @Override
        public void setMaxReconnectAttempts(String s, int a) {
        }

        @Override
        public void resetStats(String s) {
        }

        @Override
        public List<Provider> mpPolicies() {
            return List.of(new Provider("min-inflight", "rtrs-mp-min-inflight", "0.1.0", 50, 0),
                    new Provider("first-path", "org.example.rnbd.mp.firstpath", "1.0.0", 90, 0),
                    new Provider("first-path", "another-first-path", "1.0.0", 91, 0));
        }
    };

    /** A policy bundle of the user's own is offered, once, then the appliance's own that are not registered. */
    @Test
    void policiesRegisteredThenTheAppliancesOwn() {
        MpPolicyCompleter c = new MpPolicyCompleter();
        assertEquals(List.of("round-robin", "min-inflight", "min-latency"), c.names(), "no client: the own three");
        c.admin = ADMIN;
        assertEquals(List.of("min-inflight", "first-path", "round-robin", "min-latency"), c.names());
    }

    @Test
    void pathsOfTheSessionOnTheLineElseOfAll() {
        PathNameCompleter c = new PathNameCompleter();
        assertEquals(Set.of(), c.paths(List.of("rtrs:path-remove", "a")));
        c.admin = ADMIN;
        assertEquals(Set.of("1@2", "3@4"), c.paths(List.of("rtrs:path-remove", "a", "")));
        assertEquals(Set.of("5@6"), c.paths(List.of("rtrs:path-remove", "b")));
        assertEquals(Set.of("1@2", "3@4", "5@6"), c.paths(List.of("rtrs:path-remove", "zz")));
    }
}
