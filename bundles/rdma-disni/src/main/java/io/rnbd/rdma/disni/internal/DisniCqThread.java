package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.impl.NatIbvCompChannel;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device's completion thread, the only thread that calls {@code CompletionHandler}s:
 * waits on the device's completion channel (one CQ per queue pair, all on that channel),
 * polls the CQ each event names, and runs the deliveries handed to it (flushes), so each
 * queue pair sees its completions one at a time and in order, flushes included.
 */
final class DisniCqThread {
    /** The device's logger: what it logged about its completions it still logs. */
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);
    private static final int CQ_WAIT_MS = 50;
    private static final int DELIVERY_WAIT_S = 30;
    /** Polls (of up to 32 completions) one queue pair gets before the others get their turn. */
    private static final int POLL_BUDGET = 16;

    private final DisniDevice device;
    /** The ibv_comp_channel pointer, for {@link CmNative#cqEvent}; destroyed only after this thread ended. */
    private final long channel;
    private final Set<DisniQueuePair> qps;
    private final ConcurrentLinkedQueue<Runnable> completionTasks = new ConcurrentLinkedQueue<>();
    private final Thread cqThread;

    DisniCqThread(DisniDevice device, String name, IbvCompChannel compChannel, Set<DisniQueuePair> qps) {
        this.device = device;
        this.channel = ((NatIbvCompChannel) compChannel).getObjId();
        this.qps = qps;
        this.cqThread = new Thread(this::completionLoop, "rdma-disni-cq-" + name);
        cqThread.setDaemon(true);
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
