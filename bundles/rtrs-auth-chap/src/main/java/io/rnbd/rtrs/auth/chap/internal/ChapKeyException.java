package io.rnbd.rtrs.auth.chap.internal;

/** A secret, key entry or key file is unusable. The message names the problem, never the secret. */
public class ChapKeyException extends Exception {
    private static final long serialVersionUID = 1L;

    public ChapKeyException(String message) {
        super(message);
    }
}
