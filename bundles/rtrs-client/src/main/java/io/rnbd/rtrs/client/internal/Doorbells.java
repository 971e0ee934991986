package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rtrs.api.RtrsPlug;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A session's IO posts between the lock that prepared them and the provider: queued under
 * the lock, rung after its release (or held by the submitting thread's plug, the block
 * layer's {@code blk_plug}, until it closes), each connection's share as one chain — one
 * doorbell, one socket write on the soft provider.
 */
final class Doorbells {
    /** The session's logger: these lines were always the session's. */
    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);
    private static final PathIo.Post[] NO_POSTS = {};

    /** The session: its name for the log, its monitor for the assertion that IO is never posted under it. */
    private final ClientSession session;
    /** Prepared under the lock, to be rung after it. Guarded by the session lock. */
    private final Deque<PathIo.Post> queued = new ArrayDeque<>();
    /** The plug each thread holds on this session, if any: thread-confined. */
    private final ThreadLocal<SessionPlug> plugs = new ThreadLocal<>();

    Doorbells(ClientSession session) {
        this.session = session;
    }

    /** Under the lock: ring {@code post} on this thread once the lock is released, or when its plug closes. */
    void add(PathIo.Post post) {
        queued.add(post);
    }

    /** Under the lock. */
    boolean isEmpty() {
        return queued.isEmpty();
    }

    /** Under the lock: what is queued, in order. */
    PathIo.Post[] take() {
        if (queued.isEmpty()) {
            return NO_POSTS;
        }
        PathIo.Post[] posts = queued.toArray(NO_POSTS);
        queued.clear();
        return posts;
    }

    /** Outside the lock: whether this thread's plug took {@code posts} (to ring them when it closes). */
    boolean hold(PathIo.Post[] posts) {
        SessionPlug plug = plugs.get();
        if (plug == null) {
            return false;
        }
        plug.held.addAll(Arrays.asList(posts));
        return true;
    }

    RtrsPlug plug() {
        if (plugs.get() != null) {
            return RtrsPlug.NONE;
        }
        SessionPlug p = new SessionPlug();
        plugs.set(p);
        return p;
    }

    /**
     * Outside the lock: post each connection's share of {@code posts} as one chain, in order.
     * On the soft provider a chain is one socket write, where each post alone was one.
     */
    void ring(PathIo.Post[] posts) {
        if (posts.length == 1) {
            ring(posts[0].con, List.of(posts[0]));
            return;
        }
        Map<ClientCon, List<PathIo.Post>> byCon = new LinkedHashMap<>();
        for (PathIo.Post p : posts) {
            byCon.computeIfAbsent(p.con, c -> new ArrayList<>()).add(p);
        }
        byCon.forEach(this::ring);
    }

    private void ring(ClientCon con, List<PathIo.Post> posts) {
        List<SendWr> chain = new ArrayList<>(posts.size());
        List<PathIo.Post> prepared = new ArrayList<>(posts.size());
        for (PathIo.Post p : posts) {
            try {
                chain.add(p.prepare());
                prepared.add(p);
            } catch (RuntimeException e) {
                LOG.error("session {}: preparing a post failed", session.name(), e);
                p.failed(Errno.EIO);
            }
        }
        if (chain.isEmpty()) {
            return;
        }
        int errno;
        try {
            // completions of other IO need the lock meanwhile
            assert !Thread.holdsLock(session) : "IO posted under the session lock";
            con.postIo(chain);
            prepared.forEach(PathIo.Post::posted);
            return;
        } catch (RdmaException e) {
            errno = e.errno();
        } catch (RuntimeException e) {
            LOG.error("session {}: provider failed a post", session.name(), e);
            errno = Errno.EIO;
        }
        // some of the chain may be out: failing the path fails over all of it, posted or not
        for (PathIo.Post p : prepared) {
            p.failed(errno);
        }
    }

    /** What one thread's plug holds back: its posts, rung together when it closes. */
    final class SessionPlug implements RtrsPlug {
        private final Thread owner = Thread.currentThread();
        /** Owner thread only; package-visible for tests, which look at where posts go. */
        final List<PathIo.Post> held = new ArrayList<>();
        private boolean closed;

        @Override
        public void close() {
            if (Thread.currentThread() != owner) {
                throw new IllegalStateException("a plug is closed by the thread that took it");
            }
            if (closed) {
                return;
            }
            closed = true;
            plugs.remove();
            if (!held.isEmpty()) {
                ring(held.toArray(NO_POSTS));
            }
        }
    }
}
