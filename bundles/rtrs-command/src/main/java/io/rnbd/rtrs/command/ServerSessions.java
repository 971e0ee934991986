package io.rnbd.rtrs.command;

import io.rnbd.rtrs.api.RtrsServerAdmin;

final class ServerSessions {
    private ServerSessions() {
    }

    static RtrsServerAdmin require(RtrsServerAdmin admin) {
        if (admin == null) {
            throw new IllegalStateException("the RTRS server is not running (bundle rtrs-server)");
        }
        return admin;
    }
}
