package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.impl.NatIbvCompChannel;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of a device's completion threads ({@code completion.threads}), the only thread that calls
 * the {@code CompletionHandler}s of its queue pairs: waits on its own completion channel (one CQ
 * per queue pair, each on the channel of the thread the queue pair was given), polls the CQ each
 * event names, and runs the deliveries handed to it (flushes), so each queue pair sees its
 * completions one at a time and in order, flushes included. With several threads a device's
 * connections are spread over them, as Linux spreads a device's CQs over completion vectors.
 */
final class DisniCqThread {
    /** The device's logger: what it logged about its completions it still logs. */
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);
    private static final int CQ_WAIT_MS = 50;
    private static final int DELIVERY_WAIT_S = 30;
    /** Polls (of up to 32 completions) one queue pair gets before the others get their turn. */
    private static final int POLL_BUDGET = 16;

    private final DisniDevice device;
    private final IbvCompChannel compChannel;
    /** The ibv_comp_channel pointer, for {@link CmNative#cqEvent}; destroyed only after this thread ended. */
    private final long channel;
    /** The queue pairs whose CQs are on this thread's channel. */
    private final Set<DisniQueuePair> qps = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Runnable> completionTasks = new ConcurrentLinkedQueue<>();
    private final Thread cqThread;

    DisniCqThread(DisniDevice device, String name, IbvCompChannel compChannel) {
        this.device = device;
        this.compChannel = compChannel;
        this.channel = ((NatIbvCompChannel) compChannel).getObjId();
        this.cqThread = new Thread(this::completionLoop, name);
        cqThread.setDaemon(true);
    }

    /** The channel a queue pair given to this thread creates its CQ on. */
    IbvCompChannel compChannel() {
        return compChannel;
    }

    /** The queue pair's CQ is on this thread's channel: its events come here. */
    void add(DisniQueuePair qp) {
        qps.add(qp);
    }

    void remove(DisniQueuePair qp) {
        qps.remove(qp);
    }

    /** How many queue pairs this thread serves (a new one goes to the thread with the fewest). */
    int load() {
        return qps.size();
    }

    /** After the thread ended: the channel goes, its CQs destroyed before. */
    void destroyChannel() {
        try {
            compChannel.destroyCompChannel();
        } catch (IOException e) {
            LOG.debug("rdma-disni: destroy completion channel", e);
        }
    }

    void start() {
        cqThread.start();
    }

    /** Waits for the thread to end (after the device closed); returns at once on the thread itself. */
    void join() {
        DisniDevice.join(cqThread);
    }

    /**
     * Runs {@code task} (a delivery of completions) on the completion thread, so that it
     * never overlaps another delivery; inline when called from that thread or once it has
     * stopped. With {@code wait}, returns after the task ran.
     */
    void deliver(Runnable task, boolean wait) {
        if (Thread.currentThread() == cqThread || !cqThread.isAlive()) {
            task.run();
            return;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        completionTasks.add(() -> {
            try {
                task.run();
            } finally {
                done.complete(null);
            }
        });
        if (!wait) {
            return;
        }
        try {
            done.get(DELIVERY_WAIT_S, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("rdma-disni: {} flush not delivered within {} s (completion handler blocked?)", device.name(),
                    DELIVERY_WAIT_S);
        }
    }

    private void completionLoop() {
        // queue pairs whose CQ may hold completions that no event will announce (their poll
        // budget ran out): polled again before this thread waits
        ArrayDeque<DisniQueuePair> ready = new ArrayDeque<>();
        while (device.isOpen()) {
            runCompletionTasks();
            long fired = CmNative.cqEvent(channel, ready.isEmpty() ? CQ_WAIT_MS : 0);
            if (fired != 0) {
                // only the CQ that fired: every other CQ of the device is still armed
                for (DisniQueuePair qp : qps) {
                    if (qp.completesOn(fired)) {
                        if (!ready.contains(qp)) {
                            ready.addLast(qp);
                        }
                        break;
                    }
                }
            }
            for (int n = ready.size(); n > 0; n--) {
                DisniQueuePair qp = ready.pollFirst();
                if (qp.pollAndDeliver(POLL_BUDGET)) {
                    ready.addLast(qp);
                }
            }
        }
        runCompletionTasks();
    }

    /** Runs the deliveries handed over so far (the device's closing thread, once this one is gone). */
    void runCompletionTasks() {
        Runnable r;
        while ((r = completionTasks.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.warn("rdma-disni: {} completion handler failed", device.name(), e);
            }
        }
    }
}
