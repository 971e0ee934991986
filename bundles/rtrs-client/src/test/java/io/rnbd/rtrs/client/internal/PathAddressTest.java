package io.rnbd.rtrs.client.internal;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PathAddressTest {
    @Test
    void parses() {
        PathAddress a = PathAddress.parse("127.0.0.2@127.0.0.1:4000", 1234);
        assertEquals("127.0.0.2", a.src().getHostAddress());
        assertEquals("127.0.0.1", a.dst().getHostAddress());
        assertEquals(4000, a.port());
        PathAddress b = PathAddress.parse("127.0.0.1", 1234);
        assertNull(b.src());
        assertEquals(1234, b.port());
        assertThrows(IllegalArgumentException.class, () -> PathAddress.parse("127.0.0.1:99999", 1234));
        assertThrows(IllegalArgumentException.class, () -> PathAddress.parse("@", 1234));
    }
}
