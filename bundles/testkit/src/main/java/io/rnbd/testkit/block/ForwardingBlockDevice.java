package io.rnbd.testkit.block;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockPlug;
import io.rnbd.rnbd.api.Capabilities;
import io.rnbd.rnbd.api.SizeWatch;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * A device that passes everything to {@link #next}: a test overrides what it breaks, delays or
 * watches (a filter in nbdkit's sense), or adds what a {@code RemoteBlockDevice} names.
 */
public class ForwardingBlockDevice implements BlockDevice {
    protected final BlockDevice next;

    public ForwardingBlockDevice(BlockDevice next) {
        this.next = next;
    }

    @Override
    public long size() {
        return next.size();
    }

    @Override
    public int logicalBlockSize() {
        return next.logicalBlockSize();
    }

    @Override
    public int physicalBlockSize() {
        return next.physicalBlockSize();
    }

    @Override
    public int maxIoSize() {
        return next.maxIoSize();
    }

    @Override
    public Capabilities capabilities() {
        return next.capabilities();
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        return next.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        return next.write(offset, src, fua);
    }

    @Override
    public CompletableFuture<Void> flush() {
        return next.flush();
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return next.trim(offset, length);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        return next.writeZeroes(offset, length, fua);
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua, boolean noUnmap) {
        return next.writeZeroes(offset, length, fua, noUnmap);
    }

    @Override
    public CompletableFuture<Void> secureErase(long offset, long length) {
        return next.secureErase(offset, length);
    }

    @Override
    public BlockPlug plug() {
        return next.plug();
    }

    @Override
    public SizeWatch watchSize(LongConsumer listener) {
        return next.watchSize(listener);
    }

    @Override
    public CompletableFuture<Void> resize(long bytes) {
        return next.resize(bytes);
    }

    @Override
    public void close() {
        next.close();
    }
}
