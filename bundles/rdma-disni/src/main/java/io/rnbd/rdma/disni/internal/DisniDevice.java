package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.CmPrivateData;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.rdma.api.ConnectRequestHandler;
import io.rnbd.rdma.api.DeviceAttributes;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.LinkState;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One adapter through DiSNI. DiSNI opens devices only through rdma_cm, so the device's
 * verbs context comes from an "anchor" CM id bound to the device's first IPv4 address,
 * kept for the device's lifetime.
 *
 * <p>Threads per device: the CM thread ({@link DisniCmThread}) reads the event channel and
 * calls {@link CmTarget}s; each completion thread ({@link DisniCqThread}, {@code
 * completion.threads} of them) waits on a completion channel of its own and polls the CQs of
 * the queue pairs given to it (one CQ per queue pair), and is the only thread that calls their
 * {@code CompletionHandler}s, so each queue pair sees its completions one at a time and in
 * order, flushes included.
 *
 * <p>DiSNI's event channel keeps its ids in a plain HashMap, so every CM call, the
 * event read included, runs under {@link #cmLock} (fair, so callers get in between two
 * short event waits).
 */
public final class DisniDevice implements ManagedDevice {
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);
    /** What the provider offers on any adapter (DiSNI cannot query the device). */
    static final DeviceAttributes ATTRIBUTES = new DeviceAttributes(Integer.MAX_VALUE, 4096, 4, 4096, 65536);

    private volatile SysfsDevice info;
    private final DisniSettings settings;
    /** always_invalidate binds memory windows here (the setting, resolved for this device). */
    private final boolean memoryWindows;
    /** always_invalidate switches a chunk's remote access off and on ({@link MrNative}); dropped for good when the kernel refuses. */
    private volatile boolean accessToggle;
    private final RdmaEventChannel channel;
    private final RdmaCmId anchor;
    private final IbvContext context;
    private final InetAddress primary;
    private final ReentrantLock cmLock = new ReentrantLock(true);
    private final Map<RdmaCmId, CmTarget> targets = new ConcurrentHashMap<>();
    private final Set<DisniQueuePair> qps = ConcurrentHashMap.newKeySet();
    private final Set<DisniProtectionDomain> pds = ConcurrentHashMap.newKeySet();
    private final Set<DisniCmListener> listeners = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final AtomicBoolean removalSeen = new AtomicBoolean();
    private volatile Runnable removalHook;
    private final DisniCmThread cmThread;
    private final List<DisniCqThread> cqThreads = new ArrayList<>();

    private DisniDevice(SysfsDevice info, DisniSettings settings, RdmaEventChannel channel, RdmaCmId anchor,
                        IbvContext context, InetAddress primary) {
        this.info = info;
        this.settings = settings;
        this.memoryWindows = settings.windowsOn(DisniSettings.SYSFS.resolve(info.name()));
        // rxe only, and only where the setting is auto: its driver changes access in place, another
        // driver may make a new registration; off asks for plain re-registration
        this.accessToggle = settings.accessToggleOn(DisniSettings.SYSFS.resolve(info.name()));
        this.channel = channel;
        this.anchor = anchor;
        this.context = context;
        this.primary = primary;
        this.cmThread = new DisniCmThread(this, info.name(), channel, cmLock, targets);
    }

    /** A completion channel and its thread; the first is named after the device alone, as when there was one. */
    private void addCqThread(IbvCompChannel cc) {
        int n = cqThreads.size();
        cqThreads.add(new DisniCqThread(this, "rdma-disni-cq-" + name() + (n == 0 ? "" : "-" + n), cc));
    }

    /** Opens the adapter: event channel, anchor id, context, completion channel, threads. */
    public static DisniDevice open(SysfsDevice info, DisniSettings settings) throws RdmaException {
        InetAddress primary = info.addresses().stream().filter(a -> a instanceof Inet4Address).findFirst()
                .orElseThrow(() -> new RdmaException(Errno.EADDRNOTAVAIL,
                        "no IPv4 address on the device's netdev (DiSNI needs one to open it)"));
        RdmaEventChannel channel = null;
        RdmaCmId anchor = null;
        try {
            // libdisni binds the provider's own CM natives (CmNative) when a channel is made
            channel = CmNative.bindWhile(RdmaEventChannel::createEventChannel);
            try {
                CmNative.checkBound();
            } catch (RdmaException e) {
                destroyQuietly(null, channel);
                throw e;
            }
            anchor = channel.createId(RdmaCm.RDMA_PS_TCP);
            anchor.bindAddr(new InetSocketAddress(primary, 0));
            IbvContext context = anchor.getVerbs();
            DisniDevice d = new DisniDevice(info, settings, channel, anchor, context, primary);
            if (!d.memoryWindows && settings.memoryWindows() == DisniSettings.MemoryWindows.AUTO) {
                LOG.info("rdma-disni: {} is rxe, which runs a retried request's binds again: always_invalidate "
                        + "switches a chunk's remote access off and on (from Linux 6.5; re-registers it before) "
                        + "instead of binding memory windows (memory.windows)", info.name());
            }
            try {
                for (int i = 0; i < settings.completionThreads(); i++) {
                    d.addCqThread(context.createCompChannel());
                }
            } catch (IOException e) {
                d.cqThreads.forEach(DisniCqThread::destroyChannel);
                throw e;
            }
            d.targets.put(anchor, (type, id, data) -> {
                if (type == CmEvents.DEVICE_REMOVAL) {
                    d.removalDetected();
                }
            });
            d.cmThread.start();
            d.cqThreads.forEach(DisniCqThread::start);
            return d;
        } catch (IOException e) {
            destroyQuietly(anchor, channel);
            throw Errors.of("cannot open " + info.name() + " (is rdma_ucm loaded?)", e);
        }
    }

    private static void destroyQuietly(RdmaCmId anchor, RdmaEventChannel channel) {
        try {
            if (anchor != null) {
                anchor.destroyId();
            }
            if (channel != null) {
                channel.destroyEventChannel();
            }
        } catch (IOException e) {
            LOG.debug("rdma-disni: cleanup after failed open", e);
        }
    }

    @Override
    public void onRemoval(Runnable hook) {
        removalHook = hook;
    }

    /**
     * The kernel is removing the adapter (a DEVICE_REMOVAL on any of its CM ids). Every
     * id must go before the removal can finish, and the provider must unpublish first:
     * the hook does both; without one (the device used directly) it is closed here.
     */
    void removalDetected() {
        if (!removalSeen.compareAndSet(false, true)) {
            return;
        }
        LOG.info("rdma-disni: kernel removes {}", name());
        Runnable hook = removalHook;
        if (hook != null) {
            hook.run();
        } else {
            close();
        }
    }

    @Override
    public void update(SysfsDevice newer) {
        info = newer;
    }

    @Override
    public String name() {
        return info.name();
    }

    @Override
    public String provider() {
        return "disni";
    }

    @Override
    public String nodeId() {
        return info.nodeGuid();
    }

    @Override
    public LinkState linkState() {
        return info.linkState();
    }

    @Override
    public DeviceAttributes attributes() {
        return ATTRIBUTES;
    }

    @Override
    public List<InetAddress> addresses() {
        return info.addresses();
    }

    @Override
    public ProtectionDomain allocPd() throws RdmaException {
        checkOpen();
        try {
            DisniProtectionDomain pd = new DisniProtectionDomain(this, context.allocPd());
            pds.add(pd);
            return pd;
        } catch (IOException e) {
            throw Errors.of("ibv_alloc_pd", e);
        }
    }

    @Override
    public CmListener listen(InetSocketAddress address, ConnectRequestHandler handler) throws RdmaException {
        checkOpen();
        InetAddress a = address.getAddress();
        if (a == null || a.isAnyLocalAddress()) {
            // a wildcard id is bound to no device, and DiSNI needs the listener's device
            // for each request: listen on this device's address instead
            a = primary;
        } else if (!addresses().contains(a)) {
            throw new RdmaException(Errno.EADDRNOTAVAIL, a.getHostAddress() + " is not an address of " + name());
        }
        InetSocketAddress bind = new InetSocketAddress(a, address.getPort());
        cmLock.lock();
        RdmaCmId id = null;
        try {
            id = channel.createId(RdmaCm.RDMA_PS_TCP);
            id.bindAddr(bind);
            id.listen(128);
            InetSocketAddress actual = (InetSocketAddress) id.getSource();
            DisniCmListener l = new DisniCmListener(this, id, actual == null ? bind : actual, handler);
            targets.put(id, l);
            listeners.add(l);
            return l;
        } catch (IOException e) {
            destroyIdQuietly(id);
            int errno = Errors.errno(e, Errno.EIO);
            throw new RdmaException(errno, "listen on " + bind + ": " + e.getMessage(), e);
        } finally {
            cmLock.unlock();
        }
    }

    @Override
    public QueuePair connect(InetSocketAddress destination, QpInit init, byte[] privateData, CmEventHandler events)
            throws RdmaException {
        checkOpen();
        DisniProtectionDomain pd = ownPd(init);
        checkLimits(init);
        byte[] pdata = CmPrivateData.check(privateData, CmPrivateData.CONNECT_MAX, "connect");
        if (destination.getAddress() == null || !(destination.getAddress() instanceof Inet4Address)) {
            throw new RdmaException(Errno.EINVAL, "DiSNI connects to IPv4 addresses only: " + destination);
        }
        cmLock.lock();
        RdmaCmId id = null;
        try {
            id = channel.createId(RdmaCm.RDMA_PS_TCP);
            // binding first pins the connection to this device and gives the id a
            // context, so the QP exists (and takes RECVs) before the route is known
            id.bindAddr(new InetSocketAddress(primary, 0));
            DisniQueuePair qp = DisniQueuePair.create(this, pd, id, init, events, destination, pdata);
            targets.put(id, qp.cm());
            qps.add(qp);
            try {
                id.resolveAddr(null, destination, settings.cmTimeoutMs());
            } catch (IOException e) {
                closeQuietly(qp);
                throw e;
            }
            return qp;
        } catch (IOException e) {
            destroyIdQuietly(id);
            throw Errors.of("connect to " + destination, e);
        } finally {
            cmLock.unlock();
        }
    }

    /**
     * Accepts a connect request (see {@link DisniConnectRequest}): creates the QP, runs
     * {@code setup} on it (outside the CM lock: it posts RECVs, and the initiator cannot
     * send before the accept), then rdma_accept with {@code privateData} and infinite RNR
     * retry. If {@code setup} throws, the request is rejected (the initiator sees a
     * consumer reject) and the QP destroyed; nothing it posted completes.
     */
    DisniQueuePair accept(RdmaCmId id, QpInit init, CmEventHandler events, InetSocketAddress remote,
                          byte[] privateData, ConnectRequest.QpSetup setup) throws RdmaException {
        DisniQueuePair qp;
        cmLock.lock();
        try {
            checkOpen();
            DisniProtectionDomain pd = ownPd(init);
            checkLimits(init);
            qp = DisniQueuePair.create(this, pd, id, init, events, remote, null);
            targets.put(id, qp.cm());
            qps.add(qp);
        } catch (RdmaException e) {
            rejectQuietly(id, null);
            destroyIdQuietly(id);
            throw e;
        } finally {
            cmLock.unlock();
        }
        try {
            setup.setUp(qp);
        } catch (RdmaException | RuntimeException e) {
            cmLock.lock();
            try {
                rejectQuietly(id, null);
                qp.discardLocked();
            } finally {
                cmLock.unlock();
            }
            throw e;
        }
        cmLock.lock();
        try {
            CmNative.check(CmNative.accept(CmNative.liveHandle(id), privateData, DisniQpCm.RETRY_COUNT,
                    DisniQpCm.RNR_RETRY_INFINITE), "rdma_accept");
            return qp;
        } catch (IOException e) {
            qp.discardLocked();
            throw Errors.of("accept from " + remote, e);
        } finally {
            cmLock.unlock();
        }
    }

    /** Refuses a connect request with {@code privateData} (a consumer-defined IB reject), then drops its id. */
    void reject(RdmaCmId id, byte[] privateData) {
        cmLock.lock();
        try {
            rejectQuietly(id, privateData);
            destroyIdQuietly(id);
        } finally {
            cmLock.unlock();
        }
    }

    private void rejectQuietly(RdmaCmId id, byte[] privateData) {
        try {
            CmNative.check(CmNative.reject(CmNative.liveHandle(id), privateData), "rdma_reject");
        } catch (IOException e) {
            // destroying the id still makes the CM refuse the initiator, without our data
            LOG.debug("rdma-disni: {}", e.getMessage());
        }
    }

    private static void closeQuietly(DisniQueuePair qp) {
        try {
            qp.closeLocked();
        } catch (IOException e) {
            LOG.debug("rdma-disni: cleanup of a queue pair that never connected", e);
        }
    }

    private DisniProtectionDomain ownPd(QpInit init) throws RdmaException {
        if (!(init.pd() instanceof DisniProtectionDomain pd) || pd.device() != this || !pd.isOpen()) {
            throw new RdmaException(Errno.EINVAL, "protection domain is not an open one of " + name());
        }
        return pd;
    }

    private static void checkLimits(QpInit init) throws RdmaException {
        if (init.maxSendWr() > ATTRIBUTES.maxQpWr() || init.maxRecvWr() > ATTRIBUTES.maxQpWr()
                || init.maxSge() > ATTRIBUTES.maxSge()) {
            throw new RdmaException(Errno.EINVAL, "queue pair limits exceed " + ATTRIBUTES);
        }
    }

    boolean isOpen() {
        return open.get();
    }

    void checkOpen() throws RdmaException {
        if (!open.get()) {
            throw new RdmaException(Errno.ENODEV, name() + " is gone");
        }
    }

    IbvContext context() {
        return context;
    }

    /**
     * The completion thread a new queue pair's CQ goes to: the one serving the fewest (ties to the
     * first). Under the CM lock, where queue pairs are created, so two creations never pick alike.
     */
    DisniCqThread assignCqThread() {
        DisniCqThread best = cqThreads.get(0);
        for (DisniCqThread t : cqThreads) {
            if (t.load() < best.load()) {
                best = t;
            }
        }
        return best;
    }

    /** The completion threads (for tests: how the queue pairs were spread). */
    List<DisniCqThread> cqThreads() {
        return List.copyOf(cqThreads);
    }

    int cmTimeoutMs() {
        return settings.cmTimeoutMs();
    }

    /** Whether regions for remote access take memory windows (memory.windows, resolved for this device). */
    public boolean memoryWindows() {
        return memoryWindows;
    }

    /**
     * Whether always_invalidate kills and restores a chunk's rkey by switching its remote access
     * ({@link MrNative}): on rxe without windows, until the kernel refuses it.
     */
    public boolean accessToggle() {
        return accessToggle;
    }

    /** The kernel refused an access change ({@code errno}): re-registration from now on. */
    void noAccessToggle(int errno) {
        if (accessToggle) {
            accessToggle = false;
            LOG.info("rdma-disni: {} cannot change a registration's access (errno {}; rxe can since Linux 6.5): "
                    + "always_invalidate re-registers chunks", info.name(), errno);
        }
    }

    /** Runs a CM call under the CM lock. */
    <T> T cm(CmCall<T> call) throws IOException {
        cmLock.lock();
        try {
            return call.run();
        } finally {
            cmLock.unlock();
        }
    }

    @FunctionalInterface
    interface CmCall<T> {
        T run() throws IOException;
    }

    void forget(RdmaCmId id) {
        targets.remove(id);
    }

    void forget(DisniQueuePair qp) {
        qps.remove(qp);
        qp.cqThread().remove(qp);
    }

    void forget(DisniCmListener l) {
        listeners.remove(l);
    }

    void forget(DisniProtectionDomain pd) {
        pds.remove(pd);
    }

    void destroyIdQuietly(RdmaCmId id) {
        if (id == null) {
            return;
        }
        cmLock.lock();
        try {
            targets.remove(id);
            id.destroyId();
        } catch (IOException e) {
            LOG.debug("rdma-disni: destroy cm id", e);
        } finally {
            cmLock.unlock();
        }
    }

    @Override
    public void close() {
        if (!open.compareAndSet(true, false)) {
            return;
        }
        cmThread.join();
        cqThreads.forEach(DisniCqThread::join);
        // the threads are gone: from here on this thread delivers, one at a time
        cqThreads.forEach(DisniCqThread::runCompletionTasks);
        for (DisniCmListener l : new ArrayList<>(listeners)) {
            l.close();
        }
        for (DisniQueuePair qp : new ArrayList<>(qps)) {
            qp.pollAndDeliver(Integer.MAX_VALUE); // what already completed is reported as such, not as flushed
            qp.deviceRemoved();
        }
        for (DisniProtectionDomain pd : new ArrayList<>(pds)) {
            pd.close();
        }
        cqThreads.forEach(DisniCqThread::destroyChannel);
        destroyQuietly(anchor, channel);
        LOG.info("rdma-disni: device {} flushed and closed", name());
    }

    static void join(Thread t) {
        if (t == Thread.currentThread()) {
            return;
        }
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "disni:" + name();
    }
}
