package io.rnbd.rdma.disni.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A bind that never reaches the adapter gives its window's key count back: the provider names
 * the key a bind replaces itself (the window's own field may lag behind another thread's post),
 * so a count left one ahead would make the window's next bind name a key the adapter never gave
 * it, and fail. No native code: clear and truncate drop records without posting.
 */
class SendChainTest {
    /** A window's key count, as DisniMemoryRegion keeps it. */
    private static final class Window implements SendChain.BindOwner {
        int key;
        final List<String> told = new ArrayList<>();

        Window(int key) {
            this.key = key;
        }

        int next() {
            int from = key;
            key = SendChain.nextKey(key);
            return from;
        }

        @Override
        public void bindNotPosted(int fromKey, int rkey) {
            told.add(Integer.toHexString(fromKey) + "->" + Integer.toHexString(rkey));
            if (key == rkey) {
                key = fromKey;
            }
        }
    }

    private static void bind(SendChain chain, Window w, long wrId) {
        int from = w.next();
        chain.bind(w, wrId, false, 1, 2, 0, 4096, 0, from, w.key);
    }

    @Test
    void aTornDownChainGivesEveryUnpostedBindsKeysBackLastFirst() {
        SendChain chain = new SendChain();
        Window a = new Window(0x1200ff);
        Window b = new Window(0x3400);
        bind(chain, a, 1);                                  // ff -> 00: the tag wraps, the index stays
        chain.add(2, 0, false, 0, 0, 0);                    // a send between: no owner
        bind(chain, b, 3);
        bind(chain, a, 4);                                  // a's kill, then its rebind, in one chain
        assertEquals(0x120001, a.key);
        chain.clear();
        assertEquals(0x1200ff, a.key, "a's count back to the key its window still has");
        assertEquals(0x3400, b.key);
        assertEquals(List.of("120000->120001", "1200ff->120000"), a.told, "last first");
        assertEquals(0, chain.size());
    }

    @Test
    void truncateGivesBackOnlyWhatItDrops() {
        SendChain chain = new SendChain();
        Window a = new Window(0x500);
        Window b = new Window(0x600);
        bind(chain, a, 1);
        bind(chain, b, 2);
        chain.truncate(1);
        assertEquals(0x501, a.key, "kept: still counted");
        assertEquals(0x600, b.key, "dropped: given back");
        assertEquals(List.of(), a.told);
        // a record slot reused by another request has no owner left to tell
        chain.add(3, 0, false, 0, 0, 0);
        chain.clear();
        assertEquals(0x500, a.key);
        assertEquals(List.of("600->601"), b.told);
    }

    @Test
    void aBindOfAWindowThatMovedOnSinceIsNotUndone() {
        SendChain chain = new SendChain();
        Window a = new Window(0x700);
        bind(chain, a, 1);
        a.key = 0x705; // counted on by binds that did reach the adapter meanwhile
        chain.clear();
        assertEquals(0x705, a.key);
    }
}
