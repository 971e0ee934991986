package io.rnbd.command.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.common.Errno;
import org.junit.jupiter.api.Test;

class FormatsTest {
    @Test
    void errnoByNameAndNumberAndBlankForNone() {
        assertEquals("", Formats.errno(0));
        assertEquals("ENOENT (2)", Formats.errno(Errno.ENOENT));
    }

    @Test
    void microsWithOneDecimalAndBlankWhenNotMeasured() {
        assertEquals("", Formats.micros(0));
        assertEquals("12.3", Formats.micros(12_345));
    }

    @Test
    void bytesInBinaryUnits() {
        assertEquals("1023 B", Formats.bytes(1023));
        assertEquals("1.5 KiB", Formats.bytes(1536));
        assertEquals("64.0 MiB", Formats.bytes(64L << 20));
        assertEquals("8.0 EiB", Formats.bytes(Long.MAX_VALUE));
    }

    @Test
    void enumsInLowerCase() {
        assertEquals("", Formats.lower(null));
        assertEquals("timed_waiting", Formats.lower(Thread.State.TIMED_WAITING));
    }
}
