package io.rnbd.rnbd.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.proto.ProtoException;
import io.rnbd.rnbd.proto.RnbdMsg;
import io.rnbd.rnbd.proto.SessInfo;
import io.rnbd.rnbd.proto.SessInfoRsp;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsSessionListener;
import io.rnbd.rtrs.api.SessionState;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RNBD side of one RTRS client session (the kernel's rnbd_clt_session): SESS_INFO on
 * every (re)connect, then OPEN of every device mapped over it.
 */
public final class RnbdClientSession implements RtrsSessionListener {
    private static final Logger LOG = LoggerFactory.getLogger(RnbdClientSession.class);

    private final RtrsClientSession rtrs;
    private final Set<RnbdClientDevice> devices = ConcurrentHashMap.newKeySet();
    private volatile boolean ready;
    private volatile int version;
    /** The server speaks the several-servers extension (SESS_INFO_RSP's EXT_HA): an appliance server. */
    private volatile boolean ha;

    public RnbdClientSession(RtrsClientSession rtrs) {
        this.rtrs = rtrs;
    }

    public RtrsClientSession rtrs() {
        return rtrs;
    }

    public String name() {
        return rtrs.name();
    }

    /** SESS_INFO answered on the current connection: OPENs may go. */
    boolean ready() {
        return ready;
    }

    /** The protocol version agreed with the server (0 before SESS_INFO). */
    public int version() {
        return version;
    }

    /** Whether the server answered the several-servers extension (an appliance server does, Linux's does not). */
    boolean ha() {
        return ha;
    }

    void start() {
        rtrs.addListener(this);
        if (rtrs.state() == SessionState.CONNECTED) {
            handshake();
        }
    }

    /** The session service went away: devices wait for another one. */
    void stop() {
        rtrs.removeListener(this);
        ready = false;
        for (RnbdClientDevice d : List.copyOf(devices)) {
            devices.remove(d);
            d.detach();
        }
    }

    void attach(RnbdClientDevice d) {
        devices.add(d);
        d.attach(this);
        if (ready) {
            d.open();
        }
    }

    void detach(RnbdClientDevice d) {
        devices.remove(d);
    }

    @Override
    public void onStateChange(RtrsClientSession session, SessionState state, int errno) {
        switch (state) {
            case CONNECTED:
                handshake();
                break;
            case DISCONNECTED:
            case CONNECTING:
                ready = false;
                devices.forEach(RnbdClientDevice::disconnected);
                break;
            default:
                ready = false;
                LOG.warn("session {} is {} ({}): its devices wait for it to come back", name(), state,
                        Errno.name(errno));
                devices.forEach(RnbdClientDevice::lost);
        }
    }

    private void handshake() {
        ByteBuffer rsp = ByteBuffer.allocate(SessInfoRsp.SIZE);
        // EXT_HA always: a Linux server ignores the reserved byte and answers it 0
        rtrs.read(new SessInfo(RnbdMsg.VERSION_MAJOR, true).toBuffer(), rsp, errno -> {
            if (errno != 0) {
                LOG.warn("session {}: SESS_INFO failed: {}", name(), Errno.name(errno));
                return;
            }
            try {
                SessInfoRsp r = SessInfoRsp.decode(rsp);
                version = r.version();
                ha = r.ha();
            } catch (ProtoException e) {
                LOG.warn("session {}: bad SESS_INFO_RSP: {}", name(), e.getMessage());
                return;
            }
            ready = true;
            LOG.info("session {}: RNBD protocol version {}", name(), version);
            devices.forEach(RnbdClientDevice::open);
        });
    }
}
