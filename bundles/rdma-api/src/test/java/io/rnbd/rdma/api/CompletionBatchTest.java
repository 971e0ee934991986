package io.rnbd.rdma.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CompletionBatchTest {
    /** Runs {@code body} on a completion thread and rethrows what it threw. */
    private static void onCompletionThread(Runnable body) throws Exception {
        AtomicReference<Throwable> failed = new AtomicReference<>();
        CompletionThread t = new CompletionThread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failed.set(e);
            }
        }, "test-completion-thread");
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(t.isAlive(), "the completion thread did not finish");
        Throwable e = failed.get();
        if (e instanceof Error err) {
            throw err;
        }
        if (e instanceof Exception ex) {
            throw ex;
        }
    }

    @Test
    void outsideABatchDeferredWorkRunsAtOnce() throws Exception {
        List<String> ran = new ArrayList<>();
        assertSame(CompletionBatch.NONE, CompletionBatch.ofCurrentThread(), "not a completion thread");
        assertFalse(CompletionBatch.ofCurrentThread().open());
        CompletionBatch.ofCurrentThread().defer(() -> ran.add("now"));
        assertEquals(List.of("now"), ran);
        assertThrows(IllegalStateException.class, CompletionBatch.NONE::begin, "NONE never opens");
        onCompletionThread(() -> {
            CompletionBatch.ofCurrentThread().defer(() -> ran.add("closed"));
            assertEquals(List.of("now", "closed"), ran, "a completion thread's batch that is not open runs it at once");
        });
    }

    @Test
    void inABatchItRunsOnceAtTheEndInTheOrderFirstDeferred() throws Exception {
        onCompletionThread(() -> {
            List<String> ran = new ArrayList<>();
            Runnable a = () -> ran.add("a");
            Runnable b = () -> ran.add("b");
            CompletionBatch batch = CompletionBatch.ofCurrentThread();
            assertSame(batch, CompletionBatch.ofCurrentThread());
            assertTrue(batch != CompletionBatch.NONE, "a completion thread has its own batch");
            batch.begin();
            assertTrue(CompletionBatch.ofCurrentThread().open());
            batch.defer(a);
            batch.defer(b);
            CompletionBatch.ofCurrentThread().defer(a);
            assertEquals(List.of(), ran, "nothing before the end");
            batch.end();
            assertEquals(List.of("a", "b"), ran);
            assertFalse(batch.open());
            batch.begin();
            batch.end();
            assertEquals(List.of("a", "b"), ran, "the next batch starts empty");
        });
    }

    @Test
    void anotherThreadsBatchIsNotThisOnes() throws Exception {
        List<String> ran = new ArrayList<>();
        onCompletionThread(() -> {
            CompletionBatch batch = CompletionBatch.ofCurrentThread();
            batch.begin();
            try {
                CompletableFuture.runAsync(() -> {
                    assertFalse(batch.open(), "open only for its own thread");
                    batch.defer(() -> ran.add("there"));
                    CompletionBatch.ofCurrentThread().defer(() -> ran.add("there too"));
                }).join();
                assertEquals(List.of("there", "there too"), ran, "ran at once on the thread without a batch");
            } finally {
                batch.end();
            }
            assertEquals(List.of("there", "there too"), ran, "nothing left for the end");
        });
        CompletionThread[] owner = new CompletionThread[1];
        onCompletionThread(() -> owner[0] = (CompletionThread) Thread.currentThread());
        assertThrows(IllegalStateException.class, owner[0].completionBatch()::begin, "only its thread opens it");
        assertThrows(IllegalStateException.class, owner[0].completionBatch()::end, "only its thread closes it");
    }

    @Test
    void aFailingOneDoesNotStopTheOthersAndIsThrownAfter() throws Exception {
        onCompletionThread(() -> {
            List<String> ran = new ArrayList<>();
            CompletionBatch batch = CompletionBatch.ofCurrentThread();
            batch.begin();
            batch.defer(() -> {
                throw new IllegalStateException("first");
            });
            batch.defer(() -> ran.add("second"));
            batch.defer(() -> {
                throw new IllegalArgumentException("third");
            });
            IllegalStateException e = assertThrows(IllegalStateException.class, batch::end);
            assertEquals("first", e.getMessage());
            assertEquals(1, e.getSuppressed().length, "the later failure rides along");
            assertEquals(List.of("second"), ran);
            assertFalse(batch.open());
            batch.begin();
            batch.end(); // the failed ones are gone
        });
    }

    @Test
    void workDeferredWhileTheBatchEndsRunsAtOnce() throws Exception {
        onCompletionThread(() -> {
            List<String> ran = new ArrayList<>();
            CompletionBatch batch = CompletionBatch.ofCurrentThread();
            batch.begin();
            batch.defer(() -> {
                batch.defer(() -> ran.add("inner"));
                ran.add("outer");
            });
            batch.end();
            assertEquals(List.of("inner", "outer"), ran);
        });
    }
}
