package io.rnbd.rdma.disni.internal;

/**
 * A registration's access changed in place (libdisni.so's extension native, bound with {@link
 * CmNative}'s): always_invalidate on rxe, which binds no windows by default ({@link
 * DisniSettings.MemoryWindows}). Switching a chunk's remote access off kills its rkey at once,
 * as a deregistration would, and switching it on gives the key back, with no page unpinned or
 * pinned and no registration made: two system calls per request where deregistering and
 * registering the chunk again cost about a third of a 4 KiB request's time in the guest
 * (docs/perf.md §8).
 */
final class MrNative {
    private MrNative() {
    }

    /**
     * The uverbs REREG_MR command with only the access changed, on the ibv_mr {@code mr}: 0, or an
     * errno (EOPNOTSUPP or ENOSYS where the kernel's driver cannot: rxe before Linux 6.5; EPROTO if
     * the driver made a new registration, whose keys the caller does not know).
     */
    static native int reregAccess(long mr, int access);
}
