package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.proto.FenceRsp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Failover and fencing (the README's failover ordering rule): the requests a failed path
 * instance had in flight wait in a fence group, keeping their permits, until the server has
 * fenced that instance (FENCE_REQ/FENCE_RSP on a healthy path's connection 0); only then are
 * they resubmitted, and nothing newer reaches the server meanwhile ({@link #barrier}).
 * Guarded by the session lock.
 */
final class Failover {
    /** The session's logger: these lines were always the session's. */
    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);

    private final ClientSession session;
    private final List<FenceGroup> unfenced = new ArrayList<>();
    private final Map<Integer, FenceGroup> sent = new HashMap<>();
    private int fenceSeq;

    /** Requests of one failed path instance, waiting for the server to fence it. */
    private static final class FenceGroup {
        final int id;
        final UUID pathUuid;
        final int reconCnt;
        final List<ClientRequest> requests;
        ClientPath sentOn;

        FenceGroup(int id, UUID pathUuid, int reconCnt, List<ClientRequest> requests) {
            this.id = id;
            this.pathUuid = pathUuid;
            this.reconCnt = reconCnt;
            this.requests = requests;
        }
    }

    Failover(ClientSession session) {
        this.session = session;
    }

    /**
     * A path failed with {@code orphans} in flight: fence it, then resubmit them. A server
     * without the extensions (Linux's) cannot fence: as Linux's client does
     * (fail_all_outstanding_reqs), the requests go to another path at once.
     */
    void failover(ClientPath failed, int reconCnt, List<ClientRequest> orphans) {
        for (FenceGroup g : new ArrayList<>(sent.values())) {
            if (g.sentOn == failed) {
                sent.remove(g.id);
                g.sentOn = null;
            }
        }
        if (!failed.serverFences()) {
            for (ClientRequest r : orphans) {
                r.path = null;
                session.permits.dispatch(r);
            }
        } else if (!orphans.isEmpty()) {
            FenceGroup g = new FenceGroup(++fenceSeq, failed.uuid, reconCnt, new ArrayList<>(orphans));
            for (ClientRequest r : orphans) {
                r.path = null;
            }
            unfenced.add(g);
            LOG.info("session {}: {} requests of path {} wait for its fence", session.name(), orphans.size(),
                    failed.name());
        }
        sendFences();
    }

    /** Send each group's FENCE_REQ on a path whose server fences; without one, its requests time out. */
    void sendFences() {
        // Over a copy: a FENCE that cannot be posted fails its path at once, and that path's
        // failover adds its own group and sends fences itself, under this very loop. (Iterating
        // unfenced itself threw ConcurrentModificationException out of the failing path's
        // callback and left that path neither failed over nor reconnecting, found by SoakIT.)
        for (FenceGroup g : new ArrayList<>(unfenced)) {
            if (g.sentOn != null || !unfenced.contains(g)) {
                continue; // sent or answered by the nested failover meanwhile
            }
            ClientPath p = null;
            for (ClientPath c : session.paths) {
                if (c.usable() && c.serverFences()) {
                    p = c;
                    break;
                }
            }
            if (p == null) {
                for (ClientRequest r : g.requests) {
                    if (session.cfg.ioTimeoutMs() == 0) {
                        session.permits.complete(r, Errno.EIO, false);
                    } else {
                        session.permits.expireLater(r);
                    }
                }
                continue;
            }
            g.sentOn = p;
            sent.put(g.id, g);
            p.sendFence(g.id, g.pathUuid, g.reconCnt);
        }
    }

    /** The server fenced a path instance: its group's requests go out again (or fail, if the fence did). */
    void fenced(FenceRsp rsp) {
        FenceGroup g = sent.remove(rsp.fenceId());
        if (g == null) {
            return;
        }
        unfenced.remove(g);
        LOG.info("session {}: path fenced (waited for {}, dropped {}), resubmitting {}", session.name(),
                rsp.completed(), rsp.dropped(), g.requests.size());
        for (ClientRequest r : g.requests) {
            if (r.finished || rsp.status() != 0) {
                session.permits.complete(r, Errno.EIO, true);
            } else {
                session.permits.send(r); // fenced: no stale copy of it can land any more
            }
        }
        session.permits.releasePending();
    }

    /**
     * The second half of the failover ordering rule: while the server has not fenced a
     * failed path instance, requests of it may still land, so nothing newer may reach the
     * server — not queued IO, not new IO, not after a full outage in which those requests
     * were failed to the caller (their group stays until its fence is answered). Requests of
     * a fenced group themselves go out at once ({@link #fenced}).
     */
    boolean barrier() {
        return !unfenced.isEmpty();
    }

    /** Whether {@code r} waits for a fence (and so keeps its permit). */
    boolean holds(ClientRequest r) {
        for (FenceGroup g : unfenced) {
            if (g.requests.contains(r)) {
                return true;
            }
        }
        return false;
    }

    /** Every request waiting for a fence, the groups kept. */
    List<ClientRequest> waiting() {
        List<ClientRequest> all = new ArrayList<>();
        for (FenceGroup g : unfenced) {
            all.addAll(g.requests);
        }
        return all;
    }

    /** Close: every request waiting for a fence, the groups forgotten. */
    List<ClientRequest> takeAll() {
        List<ClientRequest> all = new ArrayList<>();
        for (FenceGroup g : unfenced) {
            all.addAll(g.requests);
        }
        unfenced.clear();
        sent.clear();
        return all;
    }
}
