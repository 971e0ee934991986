package io.rnbd.rnbd.backend.rbd.internal;

/**
 * What a shared open needs of an image besides IO: its exclusive lock and its metadata.
 * {@link NativeImage} is librbd's; tests use a scripted one. Every call waits for the cluster.
 */
interface RbdLock {
    /** This open's client address, as lock owners are named. */
    String identity() throws RbdException;

    /** rbd_is_exclusive_lock_owner: asks an OSD (ESHUTDOWN once blocklisted). */
    boolean owned() throws RbdException;

    /** The lock's owner, "" if none. */
    String owner() throws RbdException;

    /** Break {@code owner}'s lock, blocklisting it first (EBUSY: another owns it now). */
    void breakLock(String owner) throws RbdException;

    /** Take the lock; from then on librbd refuses to hand it over on request (EROFS, EBUSY: held by another). */
    void acquire() throws RbdException;

    /** Image metadata, null if the key is not set. */
    String metadata(String key) throws RbdException;

    void metadata(String key, String value) throws RbdException;
}
