package io.rnbd.rxe.interop;

import java.util.regex.Pattern;

/** What a failed fio run's output says about how it ended. */
public final class FioOutput {
    /**
     * fio's verify messages (verify.c): "verify: bad magic header", "crc32c: verify failed at
     * file", "verify type mismatch", and the run's err=84 (EILSEQ, "Invalid or incomplete
     * multibyte or wide character"), which is how a failed verify ends a run.
     */
    private static final Pattern VERIFY_FAILED =
            Pattern.compile("verify failed|verify: |verify type mismatch|err=84\\b|wide character");

    private FioOutput() {
    }

    /**
     * Whether an IO error (EIO) ended the run and no block was read back wrong: "Input/output
     * error" and none of the verify messages. A job's name ("verifyN" in the terse line) is not
     * one of them.
     */
    public static boolean ioErrorAlone(String output) {
        return output.contains("Input/output error") && !VERIFY_FAILED.matcher(output).find();
    }
}
