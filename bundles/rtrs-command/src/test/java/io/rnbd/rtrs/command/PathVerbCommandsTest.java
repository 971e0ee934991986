package io.rnbd.rtrs.command;

import static io.rnbd.rtrs.command.FakeClientAdmin.path;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.command.support.Out;
import io.rnbd.rtrs.api.PathState;
import java.util.List;
import org.junit.jupiter.api.Test;

/** rtrs:path-add, path-remove, path-reconnect, path-disconnect. */
class PathVerbCommandsTest {
    private final FakeClientAdmin admin = new FakeClientAdmin()
            .add("blk1", path("10.0.0.1", "10.0.0.2", PathState.CONNECTED, 0));

    private String run(PathCommand c, String session, String p) {
        c.admin = admin;
        c.session = session;
        c.path = p;
        return Out.run(c);
    }

    @Test
    void addShowsTheNewPathConnecting() {
        // echoed as rtrs:paths lists it, with the port the client gave it (issue 20, item 4)
        assertEquals("path added: session blk1 path 10.0.1.1@10.0.1.2:1234 connecting\n",
                run(new PathAddCommand(), "blk1", "10.0.1.1@10.0.1.2"));
        assertEquals(2, admin.sessions.get("blk1").paths().size());
        assertEquals("path disconnected: session blk1 path 10.0.1.1@10.0.1.2:1234 closed\n",
                run(new PathDisconnectCommand(), "blk1", "10.0.1.1@10.0.1.2"));
        assertEquals("path removed: session blk1 path 10.0.1.1@10.0.1.2:1234\n",
                run(new PathRemoveCommand(), "blk1", "10.0.1.1@10.0.1.2"));
    }

    @Test
    void anAddressNamesItsPathWithOrWithoutSourceAndPort() {
        var p = path("10.0.0.1", "10.0.0.2:1234", PathState.CONNECTED, 0);
        for (String typed : List.of("10.0.0.1@10.0.0.2", "10.0.0.2", "10.0.0.2:1234", "10.0.0.1@10.0.0.2:1234")) {
            assertEquals(true, PathCommand.names(typed, p), typed);
        }
        for (String typed : List.of("10.0.0.3@10.0.0.2", "10.0.0.2:99", "10.0.0.1")) {
            assertEquals(false, PathCommand.names(typed, p), typed);
        }
    }

    @Test
    void reconnectDisconnectAndRemoveActOnThePath() {
        assertEquals("path disconnected: session blk1 path 10.0.0.1@10.0.0.2 closed\n",
                run(new PathDisconnectCommand(), "blk1", "10.0.0.1@10.0.0.2"));
        assertEquals("path reconnecting: session blk1 path 10.0.0.1@10.0.0.2 reconnecting\n",
                run(new PathReconnectCommand(), "blk1", "10.0.0.1@10.0.0.2"));
        assertEquals("path removed: session blk1 path 10.0.0.1@10.0.0.2\n",
                run(new PathRemoveCommand(), "blk1", "10.0.0.1@10.0.0.2"));
        assertEquals(List.of("disconnect blk1 10.0.0.1@10.0.0.2", "reconnect blk1 10.0.0.1@10.0.0.2",
                "remove blk1 10.0.0.1@10.0.0.2"), admin.calls);
    }

    @Test
    void unknownSessionOrPathAndBadInputAreOneErrorLine() {
        assertEquals("Error: no session 'x' (sessions: blk1)\n", run(new PathAddCommand(), "x", "a@b"));
        assertEquals("Error: session blk1 has no path 1@2\n", run(new PathRemoveCommand(), "blk1", "1@2"));
        assertEquals("Error: malformed path 'junk'\n", run(new PathAddCommand(), "blk1", "junk"));
        assertEquals("Error: the path must not be empty\n", run(new PathAddCommand(), "blk1", " "));
        PathAddCommand noClient = new PathAddCommand();
        noClient.session = "blk1";
        noClient.path = "a@b";
        assertEquals("Error: the RTRS client is not running (bundle rtrs-client)\n", Out.run(noClient));
    }

    @Test
    void anUnexpectedFailureIsStillOneLine() {
        PathReconnectCommand c = new PathReconnectCommand() {
            @Override
            void apply(io.rnbd.rtrs.api.RtrsClientAdmin a, String s, String p) {
                throw new UnsupportedOperationException("boom");
            }
        };
        assertEquals("Error: java.lang.UnsupportedOperationException: boom\n", run(c, "blk1", "10.0.0.1@10.0.0.2"));
    }
}
