package org.example.rnbd.backend.simplefile;

import io.rnbd.common.Errno;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockIoException;
import io.rnbd.rnbd.api.Capabilities;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;

/**
 * One open file as a block device. Every call completes before it returns (positional reads and
 * writes are thread-safe on a FileChannel); rnbd-server has checked each request already (range,
 * alignment, read-only), so the device only moves bytes. Buffer positions are left as they were.
 */
final class SimpleFileDevice implements BlockDevice {
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final FileChannel file;
    private final long size;
    private final boolean readOnly;

    SimpleFileDevice(FileChannel file, long size, boolean readOnly) {
        this.file = file;
        this.size = size;
        this.readOnly = readOnly;
    }

    @Override
    public long size() {
        return size;
    }

    /** Writes and flushes (a write with FUA is a write and a flush); no trim, zeroes written as data. */
    @Override
    public Capabilities capabilities() {
        Capabilities caps = new Capabilities(true, true, true, false, false, true);
        return readOnly ? caps.readOnly() : caps;
    }

    @Override
    public CompletableFuture<Void> read(long offset, ByteBuffer dst) {
        ByteBuffer b = dst.duplicate();
        try {
            while (b.hasRemaining()) {
                if (file.read(b, offset + b.position() - dst.position()) < 0) {
                    b.put(new byte[b.remaining()]); // beyond the file's end: zeros
                }
            }
            return DONE;
        } catch (IOException e) {
            return failed(e);
        }
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
        ByteBuffer b = src.duplicate();
        try {
            while (b.hasRemaining()) {
                file.write(b, offset + b.position() - src.position());
            }
            if (fua) {
                file.force(false);
            }
            return DONE;
        } catch (IOException e) {
            return failed(e);
        }
    }

    @Override
    public CompletableFuture<Void> flush() {
        try {
            file.force(false);
            return DONE;
        } catch (IOException e) {
            return failed(e);
        }
    }

    @Override
    public CompletableFuture<Void> trim(long offset, long length) {
        return CompletableFuture.failedFuture(new BlockIoException(Errno.EOPNOTSUPP, "simple-file cannot trim"));
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(length, 1 << 20));
        for (long done = 0; done < length; done += zeros.capacity()) {
            CompletableFuture<Void> w = write(offset + done, zeros.duplicate().limit((int) Math.min(zeros.capacity(),
                    length - done)), false);
            if (w.isCompletedExceptionally()) {
                return w;
            }
        }
        return fua ? flush() : DONE;
    }

    @Override
    public void close() {
        try {
            file.close();
        } catch (IOException e) {
            // nothing left to do with it
        }
    }

    private static CompletableFuture<Void> failed(IOException e) {
        return CompletableFuture.failedFuture(new BlockIoException(Errno.EIO, e.getMessage(), e));
    }
}
