package io.rnbd.testkit.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CompletionHandler;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WorkCompletion;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One side of a test connection: records its completions and CM events in arrival order
 * (the provider calls it on its own thread; the test thread polls with a timeout).
 */
public final class Endpoint implements CompletionHandler, CmEventHandler {
    /** How long a test waits for something that must happen. */
    public static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final String name;
    private final BlockingQueue<WorkCompletion> completions = new LinkedBlockingQueue<>();
    private final BlockingQueue<CmEvent> events = new LinkedBlockingQueue<>();
    private volatile QueuePair qp;

    public Endpoint(String name) {
        this.name = name;
    }

    public QueuePair qp() {
        return qp;
    }

    public void qp(QueuePair queuePair) {
        this.qp = queuePair;
    }

    @Override
    public void onCompletion(QueuePair from, WorkCompletion wc) {
        completions.add(wc);
    }

    @Override
    public void onEvent(QueuePair from, CmEvent event) {
        events.add(event);
    }

    /** The next completion; fails the test if none comes within {@link #TIMEOUT}. */
    public WorkCompletion nextWc() throws InterruptedException {
        WorkCompletion wc = completions.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(wc, name + ": no completion within " + TIMEOUT);
        return wc;
    }

    /** The next completion, which must have {@code status}. */
    public WorkCompletion nextWc(WcStatus status) throws InterruptedException {
        WorkCompletion wc = nextWc();
        assertEquals(status, wc.status(), name + ": " + wc);
        return wc;
    }

    /** The next CM event, which must be of {@code type}. */
    public CmEvent nextEvent(CmEvent.Type type) throws InterruptedException {
        CmEvent ev = events.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(ev, name + ": no " + type + " event within " + TIMEOUT);
        assertEquals(type, ev.type(), name + ": " + ev);
        return ev;
    }

    /** Asserts that nothing completes during {@code window} (used to observe RNR holding a SEND back). */
    public void assertNoWcFor(Duration window) throws InterruptedException {
        WorkCompletion wc = completions.poll(window.toMillis(), TimeUnit.MILLISECONDS);
        assertNull(wc, name + ": unexpected completion " + wc);
    }

    public int pendingCompletions() {
        return completions.size();
    }
}
