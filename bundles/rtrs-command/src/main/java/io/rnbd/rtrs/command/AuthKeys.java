package io.rnbd.rtrs.command;

final class AuthKeys {
    private AuthKeys() {
    }

    static AuthKeyStore require(AuthKeyStore store) {
        if (store == null) {
            throw new IllegalStateException("the chap authentication bundle is not installed");
        }
        return store;
    }
}
