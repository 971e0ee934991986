package io.rnbd.rtrs.client.internal;

import io.rnbd.rtrs.api.PathState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Who may create the session on the server (CON_REQ first_conn), and when the others may
 * connect. While the server may not know the session, one path connects at a time: the first
 * to try when the session is opened (path 0, as Linux's rtrs_clt_open connects it first), and
 * again after the session lost every path, since the server may have restarted and forgotten
 * it. The others wait until that path's connection 0 is accepted, or its attempt fails and the
 * next one tries, or {@link #HOLD_MS} pass: a path that cannot reach the server (its link is
 * down) must not keep the ones that can waiting out its whole connect timeout. A server that has
 * not answered a connect in that time is not in the middle of making the session.
 *
 * <p>Why not all at once: a Linux server given two creating connects of one session at the same
 * moment makes two sessions of it ({@code get_or_create_srv} looks the session up and adds it
 * under two separate locks). A path whose connections then land on different ones is closed at
 * its INFO_REQ ("Conn not set for N"), and 7.3's rtrs_server oopses closing it
 * ({@code list_del corruption} in {@code rtrs_srv_close_work}; docs/interop.md, run 13, where
 * the guest reproduces it). Every path of a session that was connected asks to create it when it
 * reconnects (Linux's {@code for_new_clt}), and the paths of a session whose server went away
 * fail and retry on the same timer, so a server restarted under a two-path session got exactly
 * that. (Linux's own client adds at most 8 ms of jitter to a path's reconnect delay, so its
 * paths can race the same way.)
 *
 * <p>Guarded by the session lock.
 */
final class FirstConn {
    /** How long one path's creating connect holds the others off. */
    static final long HOLD_MS = 5_000;

    private final List<ClientPath> paths;
    private final LongSupplier nanos;
    /** A path's connection 0 was accepted since the session last lost every path: the server knows it. */
    private boolean known;
    /** The one path connecting while the server may not know the session, or null. */
    private ClientPath creating;
    private long creatingSince;

    /** @param paths the session's paths, in the order they were added; {@code nanos} the session's clock */
    FirstConn(List<ClientPath> paths, LongSupplier nanos) {
        this.paths = paths;
        this.nanos = nanos;
    }

    /**
     * Whether {@code p} may connect now; if not, it asks again when another path's attempt ends
     * ({@link PathHandshake#connectIfDeferred}) or after {@link #holdLeftMs()}.
     */
    boolean mayConnect(ClientPath p) {
        if (known || creating == p) {
            return true;
        }
        if (creating != null && (creating.state() != PathState.CONNECTING || holdLeftMs() == 0)) {
            // closed or removed mid-attempt (it will neither be accepted nor fail), or held too long
            creating = null;
        }
        if (creating == null) {
            creating = p;
            creatingSince = nanos.getAsLong();
            return true;
        }
        return false;
    }

    /** What is left of the creating path's hold, in milliseconds (0: none). */
    long holdLeftMs() {
        long held = TimeUnit.NANOSECONDS.toMillis(nanos.getAsLong() - creatingSince);
        return creating == null ? 0 : Math.max(0, HOLD_MS - held);
    }

    /** The CON_REQ's first_conn: Linux's for_new_clt, or the path connecting for a session the server may not know. */
    boolean mayCreate(ClientPath p) {
        return p.forNewClt || p == creating;
    }

    /** The server accepted a connection 0 of some path, so it knows the session now. */
    void accepted() {
        if (!known) {
            known = true;
            creating = null;
            kickDeferred();
        }
    }

    /** A connect attempt of {@code p} failed: if it was the one connecting, the next may try. */
    void connectFailed(ClientPath p) {
        if (creating == p) {
            creating = null;
            kickDeferred();
        }
    }

    /** The session lost every path: the server may have restarted and forgotten it. */
    void lost() {
        known = false;
        creating = null;
    }

    private void kickDeferred() {
        for (ClientPath q : paths) {
            q.handshake.connectIfDeferred();
        }
    }
}
