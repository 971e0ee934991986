package io.rnbd.rxe.host;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rnbd.rxe.interop.FioOutput;
import org.junit.jupiter.api.Test;

/**
 * The rule SlowBackendPathFailureTest's fio loop uses to tell a run an IO error ended from one a
 * wrong block ended, on fio's own output (fio 3.33, the guest's, which is the host's): the
 * verify failure as fio printed it here for a block overwritten after the write pass, the IO
 * error as it printed it in the 7.3 guest for a device-mapper "error" target (2026-12-06).
 */
class FioOutputTest {
    private static final String TERSE = "3;fio-3.33;verify5;0;5;1792;99555;777;18;0;0;0.000000;0.000000;7;16183";

    private static final String IO_ERROR = """
            fio: io_u error on file /dev/mapper/errdev: Input/output error: write offset=17694720, buflen=131072
            fio: io_u error on file /dev/mapper/errdev: Input/output error: write offset=29097984, buflen=131072
            fio: pid=294, err=5/file:io_u.c:1876, func=io_u error, error=Input/output error
            3;fio-3.33;verify1;0;5;0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;1.000000%=0
            """;

    private static final String VERIFY_FAILED = """
            crc32c: verify failed at file /tmp/vf.img offset 4063232, length 131072 (requested block: offset=4063232, length=131072, flags=88)
                   Expected CRC: e6a8e06a
                   Received CRC: 510c1095
            fio: pid=30747, err=84/file:io_u.c:2152, func=io_u_sync_complete, error=Invalid or incomplete multibyte or wide character
            """ + TERSE.replace(";0;5;", ";0;84;");

    @Test
    void anIoErrorWithNoVerifyMessageIsAnIoErrorAlone() {
        assertTrue(FioOutput.ioErrorAlone(IO_ERROR));
    }

    @Test
    void aBlockReadBackWrongIsNeverAnIoErrorAlone() {
        assertFalse(FioOutput.ioErrorAlone(VERIFY_FAILED));
        // an IO error in the write pass and a bad block in the read pass of one run
        assertFalse(FioOutput.ioErrorAlone(IO_ERROR + "\n" + VERIFY_FAILED));
        assertFalse(FioOutput.ioErrorAlone("fio: Input/output error\nverify: bad magic header 0, wanted acca at file /dev/rnbd0 offset 0, length 131072"));
    }

    @Test
    void theJobsNameAndOtherErrorsAreNotAnIoErrorAlone() {
        // "verify5" in the terse line must not count as a verify message; with no EIO it is no IO error
        assertFalse(FioOutput.ioErrorAlone(TERSE));
        assertFalse(FioOutput.ioErrorAlone(
                "fio: io_u error on file /dev/rnbd0: Connection timed out: write offset=0, buflen=131072\n" + TERSE));
    }
}
