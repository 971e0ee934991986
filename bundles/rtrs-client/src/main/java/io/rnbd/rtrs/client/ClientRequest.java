package io.rnbd.rtrs.client;

import io.rnbd.rtrs.api.IoDone;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;

/** One request of a session, from submission to its single completion. Guarded by the session lock. */
final class ClientRequest {
    final boolean write;
    final ByteBuffer usrHdr;
    final ByteBuffer data;
    final IoDone done;
    final int dataLen;
    final int usrLen;
    int permit = -1;
    ClientPath path;
    final Set<ClientPath> tried = new HashSet<>();
    long sentNanos;
    boolean finished;
    ScheduledFuture<?> expiry;

    ClientRequest(boolean write, ByteBuffer usrHdr, ByteBuffer data, IoDone done) {
        this.write = write;
        this.usrHdr = usrHdr.duplicate();
        this.data = data.duplicate();
        this.done = done;
        this.dataLen = data.remaining();
        this.usrLen = usrHdr.remaining();
    }
}
