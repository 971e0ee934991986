package io.rnbd.nbd.gateway.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Found by the fuzzers: export names reach the log, and a client chooses them. */
class LogLineTest {

    @Test
    void aClientsNewlineCannotStartALogLine() {
        assertEquals("disk\\x0a12:00:00 WARN forged", NbdConnection.printable("disk\n12:00:00 WARN forged"));
        assertEquals("a\\x0db\\x1bc\\x7f", NbdConnection.printable("a\rb\u001bc\u007f"));
    }

    @Test
    void ordinaryNamesAreUntouched() {
        assertEquals("rnbd0 é/x", NbdConnection.printable("rnbd0 é/x"));
        assertEquals("", NbdConnection.printable(null));
    }
}
