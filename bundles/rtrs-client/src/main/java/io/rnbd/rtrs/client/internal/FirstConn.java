package io.rnbd.rtrs.client.internal;

import java.util.List;

/**
 * Who may create the session on the server (CON_REQ first_conn). Until some path has been
 * accepted, only the creator connects (the first path, as Linux's rtrs_clt_open connects
 * path 0 before the others): the others' CON_REQs could not say first_conn, and a Linux
 * server racing two creating connects of one session makes two sessions of it. Once the
 * creator failed, the others may try too. Guarded by the session lock.
 */
final class FirstConn {
    private final List<ClientPath> paths;
    /** Some path's connection 0 was accepted: the server knows this session. */
    private boolean acceptedOnce;
    private boolean creatorFailed;

    /** @param paths the session's paths, in the order they were added */
    FirstConn(List<ClientPath> paths) {
        this.paths = paths;
    }

    /** Whether {@code p} may connect now. */
    boolean mayConnect(ClientPath p) {
        return acceptedOnce || creatorFailed || p == creator();
    }

    /** The CON_REQ's first_conn: Linux's for_new_clt, or the creator's right before any acceptance. */
    boolean mayCreate(ClientPath p) {
        return p.forNewClt || (!acceptedOnce && (p == creator() || creatorFailed));
    }

    private ClientPath creator() {
        return paths.isEmpty() ? null : paths.get(0);
    }

    /** The server accepted a path's connection 0, so it knows the session now. */
    void accepted() {
        if (!acceptedOnce) {
            acceptedOnce = true;
            kickDeferred();
        }
    }

    /** A connect attempt of {@code p} failed. */
    void connectFailed(ClientPath p) {
        if (!acceptedOnce && !creatorFailed && p == creator()) {
            creatorFailed = true;
            kickDeferred();
        }
    }

    private void kickDeferred() {
        for (ClientPath q : paths) {
            q.handshake.connectIfDeferred();
        }
    }
}
