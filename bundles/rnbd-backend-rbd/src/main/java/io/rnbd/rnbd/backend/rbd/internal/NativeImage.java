package io.rnbd.rnbd.backend.rbd.internal;

import java.nio.ByteBuffer;

/** An image opened through librbd, with the cluster connection and pool context it owns. */
final class NativeImage implements RbdImage, RbdLock {
    private final long cluster;
    private final long ioctx;
    private final long image;

    NativeImage(long cluster, long ioctx, long image) {
        this.cluster = cluster;
        this.ioctx = ioctx;
        this.image = image;
    }

    long handle() {
        return image;
    }

    @Override
    public void listen(Completions listener) {
        RbdNative.listen(image, listener);
    }

    @Override
    public int submit(int op, long cookie, long offset, long length, ByteBuffer buf, int flags) {
        return RbdNative.submit(image, op, cookie, offset, length, buf, buf == null ? 0 : buf.position(), flags);
    }

    @Override
    public int poll(long[] events, int timeoutMs) {
        return RbdNative.poll(image, events, timeoutMs);
    }

    @Override
    public void wakeup() {
        RbdNative.wakeup(image);
    }

    @Override
    public long size() throws RbdException {
        return RbdNative.size(image);
    }

    @Override
    public void resize(long bytes) throws RbdException {
        RbdNative.resize(image, bytes);
    }

    @Override
    public void close() throws RbdException {
        RbdNative.close(image);
    }

    @Override
    public String identity() throws RbdException {
        return RbdNative.clientAddress(cluster);
    }

    @Override
    public boolean owned() throws RbdException {
        return RbdNative.lockOwned(image);
    }

    @Override
    public String owner() throws RbdException {
        String owners = RbdNative.lockOwners(image);
        int comma = owners.indexOf(',');
        return comma < 0 ? owners : owners.substring(0, comma);
    }

    @Override
    public void breakLock(String owner) throws RbdException {
        RbdNative.lockBreak(image, owner);
    }

    @Override
    public void acquire() throws RbdException {
        RbdNative.lockAcquire(image);
    }

    @Override
    public String metadata(String key) throws RbdException {
        return RbdNative.metadataGet(image, key);
    }

    @Override
    public void metadata(String key, String value) throws RbdException {
        RbdNative.metadataSet(image, key, value);
    }

    @Override
    public void free() {
        RbdNative.free(image);
        RbdNative.ioctxDestroy(ioctx);
        RbdNative.shutdown(cluster);
    }
}
