package io.rnbd.rnbd.server.internal;

import io.rnbd.rnbd.api.AccessMode;

/**
 * One session's open of one export (the kernel's rnbd_srv_sess_dev).
 *
 * @param leg the client maps the export over several servers and finds the active one itself
 *            (OPEN's F_LEG): a standby answers its IO ENOLINK rather than take over at a write
 */
record Opening(int deviceId, ServerSession session, Export export, AccessMode mode, boolean leg) {
    Opening(int deviceId, ServerSession session, Export export, AccessMode mode) {
        this(deviceId, session, export, mode, false);
    }

    boolean writable() {
        return mode != AccessMode.RO;
    }
}
