package io.rnbd.rdma.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SendSignalerTest {
    @Test
    void signalsExactlyEveryIntervalThPost() {
        SendSignaler s = new SendSignaler(4);
        StringBuilder seen = new StringBuilder();
        for (int i = 0; i < 12; i++) {
            seen.append(s.next() ? 'S' : '.');
        }
        assertEquals("...S...S...S", seen.toString());
    }

    @Test
    void intervalOneSignalsEveryPostAndZeroIsRefused() {
        SendSignaler s = new SendSignaler(1);
        assertTrue(s.next() && s.next());
        assertThrows(IllegalArgumentException.class, () -> new SendSignaler(0));
    }
}
