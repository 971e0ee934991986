package io.rnbd.rnbd.backend.rbd.internal;

import java.nio.ByteBuffer;

/** An image opened through librbd, with the cluster connection and pool context it owns. */
final class NativeImage implements RbdImage {
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
    public void free() {
        RbdNative.free(image);
        RbdNative.ioctxDestroy(ioctx);
        RbdNative.shutdown(cluster);
    }
}
