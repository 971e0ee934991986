package io.rnbd.rtrs.server.internal;

import io.rnbd.rtrs.api.Authenticator;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.core.Heartbeat;

import java.net.InetAddress;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;

/**
 * The session as its paths see it: every call a {@link ServerPath} and its parts
 * ({@link ServerHandshake}, {@link ServerIo}, {@link ServerCon}, {@link ServerRequest}) make
 * onto their session, and nothing else of it, as rtrs-client's paths reach theirs. The
 * object is the session lock's monitor: a section is {@code synchronized (session) { ... }}
 * followed by {@link #afterUnlock()}, or {@link #locked}. {@link ServerSession} has the one
 * implementation (so the calls on the IO path stay monomorphic); unless said otherwise,
 * called under the session lock.
 */
interface PathSession extends Heartbeat.Clock {

    // ---- what the path belongs to ----------------------------------------------------

    ServerConfig cfg();

    /** The session's name (empty until its first path's INFO_REQ) and uuid, for the log. */
    String name();

    UUID uuid();

    /** The session as the upper layer sees it (a request's {@code session()}). */
    RtrsServerSession view();

    /** The authenticator now (null = none); any thread. */
    Authenticator authenticator();

    // ---- the lock and the clock ------------------------------------------------------

    /** Any thread: run {@code r} under the session lock, then what it left for after the lock. */
    void locked(Runnable r);

    /** After a {@code synchronized (session)} section: what it left for after the lock (not while still held). */
    void afterUnlock();

    /** Queue-pair teardown, which waits for a provider thread: run after the lock is released. */
    void closeAfterUnlock(Runnable teardown);

    /** Run {@code underLock} under the session lock in {@code delayMs}, on the session's timer. */
    ScheduledFuture<?> later(long delayMs, Runnable underLock);

    // ---- the chunks, shared by the session's paths ------------------------------------

    /** The session's chunks and who holds each (the failover rule: {@link ServerIo#onIoReq}). */
    Chunks chunks();

    ServerStats stats();

    // ---- the handshake -----------------------------------------------------------------

    /** A path from {@code source} left CONNECTING (connected, or closing): one half-open path less from there. */
    void handshakeEnded(InetAddress source);

    /** A path was closed at its handshake deadline (counted for the admin). */
    void handshakeTimedOut();

    /**
     * INFO_REQ names the session {@code name} and the path proved (or claimed) {@code host}:
     * null if it may join, else why not, with the errno in {@link Refusal}. Names the session
     * on its first path (Linux's exist_pathname: a name another session has is refused).
     */
    Refusal join(String name, String host, boolean proven, String method);

    /** Why a path may not join its session. */
    record Refusal(int errno, String why) {
    }

    /** The path finished its handshake: the upper layer hears of the session (once). */
    void connected();

    // ---- paths and requests -----------------------------------------------------------

    /** Another path of the session by its uuid (a FENCE's target), or null. */
    ServerPath path(UUID uuid);

    /** Outside the lock: hand {@code r} to the upper layer. */
    void dispatch(RtrsServerRequest r);

    /** A closed, drained path leaves; the last one takes the session along. */
    void pathGone(ServerPath p);
}
