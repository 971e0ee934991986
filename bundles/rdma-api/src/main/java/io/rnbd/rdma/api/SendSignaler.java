package io.rnbd.rdma.api;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The verbs idiom for sends nothing waits on: post them unsignaled but one in
 * {@code interval}, whose completion retires the send-queue slots of those before it (a
 * queue pair completes in order). The interval must stay well below the send queue's depth.
 */
public final class SendSignaler {
    private final int interval;
    private final AtomicInteger count = new AtomicInteger();

    public SendSignaler(int interval) {
        if (interval < 1) {
            throw new IllegalArgumentException("signal interval must be at least 1: " + interval);
        }
        this.interval = interval;
    }

    /** Whether the next post is the signaled one; thread-safe. */
    public boolean next() {
        return count.incrementAndGet() % interval == 0;
    }
}
