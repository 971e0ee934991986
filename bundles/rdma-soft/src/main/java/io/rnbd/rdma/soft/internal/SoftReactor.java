package io.rnbd.rdma.soft.internal;

import io.rnbd.common.AdaptivePoll;
import io.rnbd.common.SpareCpu;
import io.rnbd.rdma.api.CompletionBatch;
import io.rnbd.rdma.api.CompletionThread;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One of the device's IO threads: one selector for its listeners and connections, a task
 * queue for calls from other threads, and a queue of callbacks (completions, CM events)
 * delivered only between IO steps so that a callback may call back into the provider. The
 * thread is a {@link CompletionThread}: the callbacks one ready channel brought are one
 * completion pass, inside the thread's {@link CompletionBatch}.
 */
final class SoftReactor implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SoftReactor.class);
    private static final long TICK_MS = 500;

    /** A channel's readiness handler. */
    interface Channel {
        void onReady(SelectionKey key);

        /** {@link #onReady} threw: give up this channel, keep the device running. */
        void failed(RuntimeException e);
    }

    private final Selector selector;
    /** A completion thread: the pass over each ready channel opens its batch. */
    private final CompletionThread thread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<SoftQp> dirty = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Runnable> callbacks = new ArrayDeque<>();
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    private final Consumer<SoftReactor> onTick;
    private final Consumer<SoftReactor> onStop;
    /** The busy poll before each sleep ({@link #idle}); its window adapts to the traffic. */
    private final AdaptivePoll poll;
    private final SpareCpu.Ready somethingReady = this::somethingReady;
    /** Callbacks run since the last wake (what {@link AdaptivePoll#served} is told). */
    private int delivered;
    private volatile boolean running = true;
    private boolean cancelledKeys;

    /**
     * {@code onTick} and {@code onStop} run on this reactor's thread and get it as argument;
     * {@code poll} is its busy poll before each sleep ({@link #idle}; closed with this reactor).
     */
    SoftReactor(String name, AdaptivePoll poll, Consumer<SoftReactor> onTick, Consumer<SoftReactor> onStop)
            throws IOException {
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            poll.close();
            throw e;
        }
        this.poll = poll;
        this.onTick = onTick;
        this.onStop = onStop;
        this.thread = new CompletionThread(this, "rdma-soft-" + name);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Release the selector of a reactor that never started. */
    void closeUnstarted() {
        closePoll();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.debug("closing selector", e);
        }
    }

    Selector selector() {
        return selector;
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** Run {@code task} on the IO thread (inline when already there). */
    void execute(Runnable task) {
        if (inLoop()) {
            task.run();
            return;
        }
        tasks.add(task);
        wakeup();
    }

    /** Run {@code task} on the IO thread and wait for it and the callbacks it queued. */
    void executeAndWait(Runnable task) {
        if (inLoop()) {
            task.run();
            return;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable wrapper = () -> {
            try {
                task.run();
            } finally {
                callbacks.add(() -> done.complete(null));
            }
        };
        tasks.add(wrapper);
        wakeup();
        await(done, wrapper, task);
    }

    private void await(CompletableFuture<Void> done, Runnable wrapper, Runnable task) {
        while (true) {
            try {
                done.get(100, TimeUnit.MILLISECONDS);
                return;
            } catch (TimeoutException e) {
                if (!thread.isAlive()) {
                    // the loop ended before taking the task: nothing else touches the state now
                    if (tasks.remove(wrapper)) {
                        task.run();
                    }
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException e) {
                return;
            }
        }
    }

    /** Ask the IO thread to service {@code qp} (move posted work, transmit). */
    void markDirty(SoftQp qp) {
        dirty.add(qp);
        if (!inLoop()) {
            wakeup();
        }
    }

    /**
     * A channel was closed while registered: the kernel socket (and its port) is released
     * only when the selector next deregisters the key, which happens before the current
     * IO step's callbacks run. IO thread only.
     */
    void flushCancelled() {
        cancelledKeys = true;
    }

    private void flushCancelledNow() throws IOException {
        if (cancelledKeys) {
            cancelledKeys = false;
            selector.selectNow();
        }
    }

    /** Queue a callback; IO thread only. */
    void callback(Runnable r) {
        callbacks.add(r);
    }

    private void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    /** Stop the loop; {@code onStop} runs on the IO thread first. Waits unless called from it. */
    void stop() {
        if (!running) {
            return;
        }
        if (inLoop()) {
            running = false;
            return;
        }
        tasks.add(() -> running = false);
        selector.wakeup();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("{} did not stop within 30 s", thread.getName());
        }
    }

    @Override
    public void run() {
        long nextTick = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TICK_MS);
        CompletionBatch batch = thread.completionBatch();
        try {
            while (running) {
                step();
                if (!running) {
                    break;
                }
                boolean woke = false;
                if (!tasks.isEmpty() || !dirty.isEmpty()) {
                    selector.selectNow();
                } else {
                    idle();
                    woke = true;
                    delivered = 0;
                }
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    Channel channel = (Channel) key.attachment();
                    // the completions one channel brings are one batch: what the layers above
                    // defer to its end (the NBD gateway's replies) goes out together
                    batch.begin();
                    try {
                        try {
                            if (key.isValid()) {
                                channel.onReady(key);
                            }
                        } catch (RuntimeException e) {
                            LOG.error("{}: channel failed, dropping it", thread.getName(), e);
                            channel.failed(e);
                        }
                        drainCallbacks();
                        // the answers this channel's requests posted leave now, not after every
                        // other ready channel was served too (a selectNow here, as step() may
                        // do, would change the selected-key set under this iterator)
                        serviceDirty();
                        drainCallbacks();
                    } finally {
                        endBatch(batch);
                    }
                }
                if (woke) {
                    poll.served(delivered);
                }
                flushCancelledNow();
                long now = System.nanoTime();
                if (now - nextTick >= 0) {
                    nextTick = now + TimeUnit.MILLISECONDS.toNanos(TICK_MS);
                    onTick.accept(this);
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            LOG.error("{} failed", thread.getName(), e);
        } catch (RuntimeException | Error e) {
            LOG.error("{} crashed", thread.getName(), e);
        } finally {
            running = false;
            try {
                onStop.accept(this);
                step();
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: teardown failed", thread.getName(), e);
            } finally {
                closePoll();
                try {
                    selector.close();
                } catch (IOException e) {
                    LOG.debug("closing selector", e);
                }
                Runnable t;
                while ((t = tasks.poll()) != null) {
                    safeRun(t);
                }
                drainCallbacks();
            }
        }
    }

    /** Runs what the batch's completions deferred; a failure there is a bug above, logged like a callback's. */
    private void endBatch(CompletionBatch batch) {
        try {
            batch.end();
        } catch (RuntimeException e) {
            LOG.error("{}: work deferred to the end of a completion batch failed", thread.getName(), e);
        }
    }

    /**
     * Nothing to do: busy-poll, then sleep in the selector. The poll (the device's
     * {@code poll.usec}, like {@code net.core.busy_poll}) looks for ready sockets and queued work
     * for as long as {@link AdaptivePoll}'s window says, which grows while work keeps coming back
     * soon after the thread went idle (depth 1: the next request, the answer to our request) and
     * closes when it does not, when it comes in batches, or when the selector merely ticks; so an
     * idle device never polls. Work that arrives meanwhile is picked up without the wakeup of a
     * sleeping thread, which on a VM costs an exit and most of the depth-1 latency. A poll begins
     * only if a CPU is spare ({@link SpareCpu}): at depth the other threads of the stack are busy
     * and a polling thread would take their CPU (a fifth of the IOPS at depth 32 on two vCPUs before
     * this check). It yields between looks, so a thread woken on this CPU (typically the one our
     * completion woke) runs at once, and ends when a yield kept it off the CPU. Posters skip the
     * selector wakeup meanwhile ({@link #wakeupPending} stays set until the queues are looked at
     * once more below).
     */
    private void idle() throws IOException {
        wakeupPending.set(true);
        boolean event = true;
        if (!poll.idle(somethingReady)) {
            wakeupPending.set(false);
            if (!tasks.isEmpty() || !dirty.isEmpty()) {
                selector.selectNow();
            } else {
                event = selector.select(TICK_MS) > 0 || !tasks.isEmpty() || !dirty.isEmpty();
            }
        }
        poll.woke(event);
    }

    /** What a busy poll looks for: a ready socket, or work queued by other threads. */
    private boolean somethingReady() throws IOException {
        return selector.selectNow() > 0 || !tasks.isEmpty() || !dirty.isEmpty();
    }

    /** This thread's busy poll, for its counters. */
    AdaptivePoll poll() {
        return poll;
    }

    private void closePoll() {
        poll.close();
    }

    private void step() throws IOException {
        for (int guard = 0; guard < 64; guard++) {
            Runnable t;
            while ((t = tasks.poll()) != null) {
                safeRun(t);
            }
            serviceDirty();
            if (selector.isOpen()) {
                flushCancelledNow();
            }
            drainCallbacks();
            if (tasks.isEmpty() && dirty.isEmpty()) {
                return;
            }
        }
    }

    private void serviceDirty() {
        SoftQp qp;
        while ((qp = dirty.poll()) != null) {
            qp.service();
        }
    }

    private void drainCallbacks() {
        Runnable r;
        while ((r = callbacks.poll()) != null) {
            delivered++;
            safeRun(r);
        }
    }

    private static void safeRun(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.error("callback failed (a bug in the handler)", e);
        }
    }
}
