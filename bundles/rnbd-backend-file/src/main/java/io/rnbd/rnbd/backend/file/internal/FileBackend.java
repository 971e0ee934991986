package io.rnbd.rnbd.backend.file.internal;

import com.sun.nio.file.ExtendedOpenOption;
import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code file} backend: a regular file or a block device, read and written with positional
 * IO on a small pool of threads this backend owns, so slow disks never block the caller.
 * Parameters: {@code path} (absolute, required), {@code size}, {@code create}, {@code direct}.
 */
public final class FileBackend implements BlockBackend, AutoCloseable {
    public static final String TYPE = "file";
    public static final int DEFAULT_IO_THREADS = 4;
    private static final Logger LOG = LoggerFactory.getLogger(FileBackend.class);
    private static final int SECTOR = 512;
    private static final int MAX_DIRECT_ALIGNMENT = 64 * 1024;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final ThreadPoolExecutor executor;
    private final Set<FileBlockDevice> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** For {@link java.util.ServiceLoader}: tools outside OSGi. */
    public FileBackend() {
        this(DEFAULT_IO_THREADS);
    }

    public FileBackend(int ioThreads) {
        if (ioThreads < 1 || ioThreads > 256) {
            throw new IllegalArgumentException("io.threads=" + ioThreads + " must be between 1 and 256");
        }
        AtomicInteger n = new AtomicInteger();
        String prefix = "rnbd-file-io-" + INSTANCES.incrementAndGet() + "-";
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.executor = new ThreadPoolExecutor(ioThreads, ioThreads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), threads);
        executor.allowCoreThreadTimeOut(true);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public BlockDevice open(Map<String, String> params, boolean readOnly) throws IOException {
        if (closed) {
            throw new IOException("file backend is stopped");
        }
        FileParams p = FileParams.parse(params);
        String where = "file backend: " + p.path();
        if (readOnly && p.create()) {
            throw new IOException(where + ": create=true needs a read-write open");
        }
        if (Files.isDirectory(p.path())) {
            throw new IOException(where + ": is a directory");
        }
        boolean exists = Files.exists(p.path());
        if (!exists && (readOnly || p.size() == FileParams.NO_SIZE)) {
            throw new IOException(where + ": no such file" + (readOnly ? "" : " (give size= to create it)"));
        }
        long size = prepare(p, where, readOnly, exists);
        int lbs;
        FileChannel ch;
        try {
            lbs = p.direct() ? directAlignment(p.path(), where) : SECTOR;
            size -= size % lbs;
            if (size == 0) {
                throw new IOException(where + ": smaller than one block of " + lbs + " bytes");
            }
            ch = openChannel(p, where, readOnly);
        } catch (IOException e) {
            if (!exists) {
                // a failed open leaves nothing behind, not even the file it just created
                Files.deleteIfExists(p.path());
            }
            throw e;
        }
        // without size= the export is the whole file and follows it when it grows (or shrinks)
        boolean follow = p.size() == FileParams.NO_SIZE && Files.isRegularFile(p.path());
        FileBlockDevice dev = new FileBlockDevice(ch, p.path().toString(), size, lbs, p.direct(), readOnly,
                Files.isRegularFile(p.path()), follow, executor, open::remove, fallocateFd(p, readOnly));
        open.add(dev);
        if (closed) {
            dev.close();
            throw new IOException("file backend is stopped");
        }
        LOG.info("opened {} ({} bytes{}{})", p.path(), size, p.direct() ? ", O_DIRECT" : "",
                readOnly ? ", read-only" : "");
        return dev;
    }

    /**
     * A descriptor of the file for fallocate (trim, write-zeroes), or -1: a read-only open needs
     * none, and without the JNI library (or when the open fails) the device writes zeros.
     */
    private static int fallocateFd(FileParams p, boolean readOnly) {
        if (readOnly) {
            return -1;
        }
        if (FileNative.UNAVAILABLE != null) {
            LOG.info("{}: trim and write-zeroes write zeros: {}", p.path(), FileNative.UNAVAILABLE);
            return -1;
        }
        int fd = FileNative.open(p.path().toString(), false);
        if (fd < 0) {
            LOG.warn("{}: no descriptor for fallocate ({}): trim and write-zeroes write zeros", p.path(),
                    io.rnbd.common.Errno.name(-fd));
            return -1;
        }
        return fd;
    }

    /** The parameters alone: a missing file (created later, or by create=true) is no reason to refuse. */
    @Override
    public void validate(Map<String, String> params, boolean readOnly) throws IOException {
        FileParams p = FileParams.parse(params);
        if (readOnly && p.create()) {
            throw new IOException("file backend: " + p.path() + ": create=true needs a read-write open");
        }
        if (Files.isDirectory(p.path())) {
            throw new IOException("file backend: " + p.path() + ": is a directory");
        }
    }

    /** Creates or extends the file as asked; returns the device size. */
    private static long prepare(FileParams p, String where, boolean readOnly, boolean exists) throws IOException {
        Set<OpenOption> opts = new HashSet<>();
        opts.add(StandardOpenOption.READ);
        if (!readOnly) {
            opts.add(StandardOpenOption.WRITE);
        }
        if (!exists) {
            opts.add(StandardOpenOption.CREATE_NEW);
        }
        try (FileChannel ch = FileChannel.open(p.path(), opts)) {
            long current = ch.size();
            if (p.size() == FileParams.NO_SIZE) {
                if (current == 0) {
                    throw new IOException(where + ": is empty (give size= and create=true to extend it)");
                }
                return current;
            }
            if (p.size() > current) {
                boolean mayGrow = Files.isRegularFile(p.path()) && (p.create() || !exists);
                if (!mayGrow) {
                    throw new IOException(where + ": is " + current + " bytes, smaller than size=" + p.size()
                            + (Files.isRegularFile(p.path()) ? " (create=true extends it)" : ""));
                }
                // one byte at the end extends sparsely: no data is written
                ch.write(ByteBuffer.allocate(1), p.size() - 1);
                ch.force(true);
                LOG.info("{} {} to {} bytes", exists ? "extended" : "created", p.path(), p.size());
            }
            return p.size();
        } catch (IOException e) {
            throw describe(where, e);
        }
    }

    private static int directAlignment(Path path, String where) throws IOException {
        long bs;
        try {
            bs = Files.getFileStore(path).getBlockSize();
        } catch (IOException | UnsupportedOperationException e) {
            throw new IOException(where + ": cannot learn the O_DIRECT alignment (" + e.getMessage() + ")");
        }
        bs = Math.max(SECTOR, bs);
        if (bs > MAX_DIRECT_ALIGNMENT || Long.bitCount(bs) != 1) {
            throw new IOException(where + ": unusable O_DIRECT alignment " + bs);
        }
        return (int) bs;
    }

    private static FileChannel openChannel(FileParams p, String where, boolean readOnly) throws IOException {
        Set<OpenOption> opts = new HashSet<>();
        opts.add(StandardOpenOption.READ);
        if (!readOnly) {
            opts.add(StandardOpenOption.WRITE);
        }
        if (!p.direct()) {
            try {
                return FileChannel.open(p.path(), opts);
            } catch (IOException e) {
                throw describe(where, e);
            }
        }
        opts.add(ExtendedOpenOption.DIRECT);
        FileChannel ch;
        try {
            ch = FileChannel.open(p.path(), opts);
        } catch (IOException | UnsupportedOperationException e) {
            throw new IOException(where + ": O_DIRECT is not supported on this filesystem (" + reason(e)
                    + "); use direct=false");
        }
        try {
            int a = directAlignment(p.path(), where);
            ch.read(ByteBuffer.allocateDirect(2 * a).alignedSlice(a).limit(a), 0);
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw new IOException(where + ": O_DIRECT IO fails on this filesystem (" + reason(e)
                    + "); use direct=false");
        }
    }

    private static IOException describe(String where, IOException e) {
        if (e instanceof NoSuchFileException) {
            return new IOException(where + ": no such file or directory");
        }
        if (e instanceof AccessDeniedException) {
            return new IOException(where + ": permission denied");
        }
        if (e.getMessage() != null && e.getMessage().startsWith(where)) {
            return e;
        }
        return new IOException(where + ": " + reason(e));
    }

    private static String reason(Exception e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    /** Closes every open device, then stops and awaits the IO threads. */
    @Override
    public void close() {
        closed = true;
        for (FileBlockDevice dev : open) {
            dev.close();
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("file backend IO threads still busy after 10 s; interrupting them");
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
