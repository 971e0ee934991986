package io.rnbd.rnbd.server;

import io.rnbd.rnbd.api.AccessMode;

/** One session's open of one export (the kernel's rnbd_srv_sess_dev). */
record Opening(int deviceId, ServerSession session, Export export, AccessMode mode) {
    boolean writable() {
        return mode != AccessMode.RO;
    }
}
