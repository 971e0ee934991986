package io.rnbd.rtrs.auth.chap.command;

import io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin;

/** The key commands' one check: is the chap bundle's key admin there. */
final class ChapKeys {
    static final String NOT_INSTALLED = "the chap authentication bundle is not installed";

    private ChapKeys() {
    }

    static ChapKeyAdmin require(ChapKeyAdmin admin) {
        if (admin == null) {
            throw new IllegalStateException(NOT_INSTALLED);
        }
        return admin;
    }
}
