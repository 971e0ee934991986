package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device's CM thread: reads its rdma_cm event channel under the device's CM lock, a
 * short wait at a time, takes what libdisni kept of each event (status, private data),
 * and hands the event to the {@link CmTarget} of its CM id, a CONNECT_REQUEST to its
 * listener's. The only thread that calls CM targets.
 */
final class DisniCmThread {
    /** The device's logger: what it logged about its CM events it still logs. */
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);
    private static final int CM_WAIT_MS = 20;

    private final DisniDevice device;
    private final RdmaEventChannel channel;
    private final ReentrantLock cmLock;
    private final Map<RdmaCmId, CmTarget> targets;
    private final Thread thread;

    DisniCmThread(DisniDevice device, String name, RdmaEventChannel channel, ReentrantLock cmLock,
                  Map<RdmaCmId, CmTarget> targets) {
        this.device = device;
        this.channel = channel;
        this.cmLock = cmLock;
        this.targets = targets;
        this.thread = new Thread(this::cmLoop, "rdma-disni-cm-" + name);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Waits for the thread to end (after the device closed); returns at once on the thread itself. */
    void join() {
        DisniDevice.join(thread);
    }

    private void cmLoop() {
        while (device.isOpen()) {
            RdmaCmEvent ev = null;
            CmNative.EventData data = null;
            cmLock.lock();
            try {
                ev = channel.getCmEvent(CM_WAIT_MS);
                // what libdisni kept of it (status, private data): taken for every event, so nothing stays behind
                data = ev == null ? null : CmNative.take(ev.getConnIdPriv());
            } catch (IOException e) {
                LOG.debug("rdma-disni: {} CM event read failed", device.name(), e);
            } finally {
                cmLock.unlock();
            }
            if (ev != null) {
                dispatch(ev, data);
            }
        }
    }

    private void dispatch(RdmaCmEvent ev, CmNative.EventData data) {
        int type = ev.getEvent();
        try {
            if (type == CmEvents.CONNECT_REQUEST) {
                CmTarget l = ev.getListenIdPriv() == null ? null : targets.get(ev.getListenIdPriv());
                if (l == null) {
                    device.destroyIdQuietly(ev.getConnIdPriv());
                } else {
                    l.onCmEvent(type, ev.getConnIdPriv(), data);
                }
                return;
            }
            CmTarget t = ev.getConnIdPriv() == null ? null : targets.get(ev.getConnIdPriv());
            if (t != null) {
                t.onCmEvent(type, ev.getConnIdPriv(), data);
            }
        } catch (RuntimeException e) {
            LOG.warn("rdma-disni: {} CM event {} handler failed", device.name(), type, e);
        }
    }
}
