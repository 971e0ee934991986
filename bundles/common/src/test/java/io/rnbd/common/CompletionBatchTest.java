package io.rnbd.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

@SuppressWarnings("removal")
class CompletionBatchTest {
    @Test
    void outsideABatchDeferredWorkRunsAtOnce() {
        List<String> ran = new ArrayList<>();
        assertFalse(CompletionBatch.active());
        CompletionBatch.defer(() -> ran.add("now"));
        assertEquals(List.of("now"), ran);
    }

    @Test
    void inABatchItRunsOnceAtTheEndInTheOrderFirstDeferred() {
        List<String> ran = new ArrayList<>();
        Runnable a = () -> ran.add("a");
        Runnable b = () -> ran.add("b");
        CompletionBatch batch = CompletionBatch.ofThisThread();
        assertSame(batch, CompletionBatch.ofThisThread());
        batch.begin();
        assertTrue(CompletionBatch.active());
        CompletionBatch.defer(a);
        CompletionBatch.defer(b);
        CompletionBatch.defer(a);
        assertEquals(List.of(), ran, "nothing before the end");
        batch.end();
        assertEquals(List.of("a", "b"), ran);
        assertFalse(CompletionBatch.active());
        batch.begin();
        batch.end();
        assertEquals(List.of("a", "b"), ran, "the next batch starts empty");
    }

    @Test
    void anotherThreadsBatchIsNotThisOnes() throws Exception {
        CompletionBatch batch = CompletionBatch.ofThisThread();
        batch.begin();
        try {
            List<String> ran = new ArrayList<>();
            CompletableFuture.runAsync(() -> CompletionBatch.defer(() -> ran.add("there"))).get();
            assertEquals(List.of("there"), ran, "ran at once on the thread without a batch");
        } finally {
            batch.end();
        }
    }

    @Test
    void aFailingOneDoesNotStopTheOthersAndIsThrownAfter() {
        List<String> ran = new ArrayList<>();
        CompletionBatch batch = CompletionBatch.ofThisThread();
        batch.begin();
        CompletionBatch.defer(() -> {
            throw new IllegalStateException("first");
        });
        CompletionBatch.defer(() -> ran.add("second"));
        IllegalStateException e = assertThrows(IllegalStateException.class, batch::end);
        assertEquals("first", e.getMessage());
        assertEquals(List.of("second"), ran);
        assertFalse(CompletionBatch.active());
    }

    @Test
    void workDeferredWhileTheBatchEndsRunsAtOnce() {
        List<String> ran = new ArrayList<>();
        CompletionBatch batch = CompletionBatch.ofThisThread();
        batch.begin();
        CompletionBatch.defer(() -> CompletionBatch.defer(() -> ran.add("inner")));
        batch.end();
        assertEquals(List.of("inner"), ran);
    }
}
