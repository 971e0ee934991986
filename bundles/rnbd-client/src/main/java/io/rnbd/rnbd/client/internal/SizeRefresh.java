package io.rnbd.rnbd.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.SizeWatch;
import io.rnbd.rnbd.proto.Open;
import io.rnbd.rnbd.proto.OpenRsp;
import io.rnbd.rtrs.api.RtrsClientSession;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;

/**
 * The live size of one mapped device: the server sends nothing when an export grows (nor
 * does Linux's), so the device asks, one OPEN at a time, and this tells the watchers when
 * an answer brings another size. The device adopts the answer like any OPEN_RSP.
 */
final class SizeRefresh {
    private final RnbdClientDevice device;
    private final List<LongConsumer> listeners = new CopyOnWriteArrayList<>();
    /** The refresh OPEN out now, if any: callers asking meanwhile share its answer (guarded by this). */
    private CompletableFuture<Long> refreshing;

    SizeRefresh(RnbdClientDevice device) {
        this.device = device;
    }

    /**
     * Ask the server for the export's size now and adopt it: an OPEN of the export this
     * session has open already, which Linux's rnbd-server and ours answer with the same device
     * id and the device's current size (docs/protocol.md, "Resize"). Unlike
     * {@link RnbdClientDevice#open()}, a failure leaves a MAPPED device as it is: a refresh
     * that did not get through says nothing about the mapping, and IO finds out for itself.
     * Completes with the size known afterwards; only a MAPPED device refreshes, others
     * complete with the size they know.
     */
    CompletableFuture<Long> refresh() {
        RtrsClientSession rtrs;
        CompletableFuture<Long> f;
        synchronized (this) {
            rtrs = device.refreshable();
            if (rtrs == null) {
                return CompletableFuture.completedFuture(device.knownSize());
            }
            if (refreshing != null) {
                return refreshing;
            }
            refreshing = f = new CompletableFuture<>();
        }
        ByteBuffer rsp = ByteBuffer.allocate(OpenRsp.SIZE);
        rtrs.read(device.openMsg(false).toBuffer(), rsp, errno -> {
            synchronized (this) {
                refreshing = null;
            }
            if (errno == 0) {
                device.opened(rtrs, 0, rsp);
            } else {
                RnbdClientDevice.LOG.debug("device {}: size refresh answered {}", device.name(), Errno.name(errno));
            }
            f.complete(device.knownSize());
        });
        return f;
    }

    SizeWatch watch(LongConsumer listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** The device adopted another size. */
    void changed(long size) {
        for (LongConsumer l : listeners) {
            l.accept(size);
        }
    }
}
