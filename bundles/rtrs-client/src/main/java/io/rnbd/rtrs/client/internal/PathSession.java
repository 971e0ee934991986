package io.rnbd.rtrs.client.internal;

import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.core.Heartbeat;
import io.rnbd.rtrs.proto.ConRsp;
import io.rnbd.rtrs.proto.FenceRsp;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;

/**
 * The session as its paths see it: every call a {@link ClientPath} and its parts make onto
 * their session, and nothing else of it. {@link ClientSession} has the one implementation
 * (so the calls on the IO path stay monomorphic); unless said otherwise, called under the
 * session lock.
 */
interface PathSession extends Heartbeat.Clock {

    // ---- what the path belongs to ----------------------------------------------------

    ClientConfig cfg();

    /** The session's uuid, sent in every CON_REQ (Linux's paths_uuid). */
    UUID uuid();

    /** The device to reach a path from, among those the registry handed over; null if none. */
    RdmaDevice device(InetAddress src);

    /** The authenticator now (null = none). */
    Authenticator authenticator();

    ReconnectPolicy reconnectPolicy();

    // ---- the lock and the clock ------------------------------------------------------

    /** Any thread: run {@code r} under the session lock, then what it left for after the lock. */
    void locked(Runnable r);

    /** Run {@code underLock} under the session lock in {@code delayMs}, on the session's timer. */
    ScheduledFuture<?> later(long delayMs, Runnable underLock);

    /** Run {@code underLock} under the session lock every {@code periodMs}, on the session's timer. */
    @Override
    ScheduledFuture<?> every(long periodMs, Runnable underLock);

    /** Queue-pair teardown, which waits for a provider thread: run after the lock is released. */
    void closeAfterUnlock(Runnable teardown);

    @Override
    long nanoTime();

    // ---- connecting (CON_REQ first_conn, CON_RSP) ------------------------------------

    /** Whether {@code p} may connect now: until the server knows the session, one path at a time ({@link FirstConn}). */
    boolean mayConnect(ClientPath p);

    /** When a path that may not connect now should ask again, in milliseconds. */
    long mayConnectAgainInMs();

    /** The CON_REQ's first_conn for {@code p}. */
    boolean mayCreate(ClientPath p);

    /**
     * Connection {@code cid} of {@code p} was accepted with {@code rsp}: the first CON_RSP fixes
     * the session's queue depth and chunk size, later ones must agree. Returns an errno.
     */
    int accepted(ClientPath p, int cid, ConRsp rsp);

    // ---- the permits' buffer and IO --------------------------------------------------

    /** The session's buffer, a permit's chunk every {@link #slotSize} bytes; a fresh view. */
    ByteBuffer memory();

    int slotSize();

    int queueDepth();

    /** Ring {@code post} on this thread once the lock is released, or when its plug closes. */
    void ringAfterUnlock(PathIo.Post post);

    /** A response arrived for {@code r}. */
    void finish(ClientRequest r, int errno);

    // ---- what became of the path -----------------------------------------------------

    /** The path is up: fences first, then what queued, unless a fence is still out. */
    void connected(ClientPath p);

    /** A connect attempt of {@code p} failed with {@code errno}; unless {@code retrying}, it gave up. */
    void connectFailed(ClientPath p, int errno, boolean retrying);

    /** {@code p} failed with {@code orphans} in flight on instance {@code reconCnt}: fence it, resubmit them. */
    void failover(ClientPath p, int reconCnt, List<ClientRequest> orphans);

    /** The server answered a FENCE_REQ on {@code on}. */
    void fenced(ClientPath on, FenceRsp rsp);
}
