package io.rnbd.rtrs.api;

import io.rnbd.common.Errno;

/**
 * Authentication failed. The errno decides what the client does next: ENOKEY (no key for
 * this host) and EKEYREJECTED (wrong key) are terminal, never retried. Messages must never
 * contain key material.
 */
public class AuthException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public AuthException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = Math.abs(errno);
    }

    public int errno() {
        return errno;
    }
}
