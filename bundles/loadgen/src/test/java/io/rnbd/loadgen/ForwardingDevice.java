package io.rnbd.loadgen;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockRequests;
import io.rnbd.rnbd.api.Capabilities;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;

/** A device that forwards to another; tests override what they break (like an nbdkit filter). */
class ForwardingDevice implements BlockDevice {
    final BlockDevice next;

    ForwardingDevice(BlockDevice next) {
        this.next = next;
    }

    /** A fresh memory-backend device, found and checked as LoadGenMain finds and checks it. */
    static BlockDevice memory(String size) {
        for (BlockBackend b : ServiceLoader.load(BlockBackend.class)) {
            if (b.type().equals("memory")) {
                try {
                    return BlockRequests.checked(b.open(Map.of("size", size), false));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("memory backend not on the test class path");
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
    public void close() {
        next.close();
    }
}
