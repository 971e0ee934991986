package io.rnbd.loadgen;

import io.rnbd.rnbd.api.BlockDevice;
import java.time.Duration;
import java.util.Locale;

/**
 * What to run: the mix (percentage of reads), random or sequential offsets, block size, queue
 * depth, the submission batch, how long (a duration, an IO count or both: whichever ends first), an optional
 * verification of every read of a block written in this run, and the device range to use.
 *
 * @param length    bytes from {@code offset} to use; 0 means to the end of the device
 * @param maxErrors stop after this many failed IOs; 0 means never stop for errors
 * @param batch     at most this many IOs that are ready at once are submitted under one
 *                  {@link io.rnbd.rnbd.api.BlockDevice#plug plug} (fio's {@code iodepth_batch_submit});
 *                  1 submits each alone
 */
public record LoadSpec(int readPercent, boolean random, int blockSize, int queueDepth, Duration duration,
                       long ioCount, boolean verify, long offset, long length, long seed, long maxErrors, int batch) {

    public LoadSpec {
        if (readPercent < 0 || readPercent > 100) {
            throw new IllegalArgumentException("read percentage " + readPercent + " must be 0-100");
        }
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive");
        }
        if (queueDepth < 1 || queueDepth > 1024) {
            throw new IllegalArgumentException("queue depth " + queueDepth + " must be 1-1024");
        }
        if (batch < 1 || batch > 1024) {
            throw new IllegalArgumentException("batch " + batch + " must be 1-1024");
        }
        if (duration == null) {
            duration = Duration.ZERO;
        }
        if (duration.isNegative() || ioCount < 0 || offset < 0 || length < 0 || maxErrors < 0) {
            throw new IllegalArgumentException("duration, IO count, offset, length and max errors must not be negative");
        }
        if (duration.isZero() && ioCount == 0) {
            throw new IllegalArgumentException("give a duration or an IO count");
        }
    }

    /** The fio name of the mix: randread, randwrite, randrw, read, write, rw. */
    public String workload() {
        String base = readPercent == 100 ? "read" : readPercent == 0 ? "write" : "rw";
        return random ? "rand" + base : base;
    }

    /** Checks the spec against the device; the message is fit for the console. */
    public void validateFor(BlockDevice dev) {
        int lbs = dev.logicalBlockSize();
        if (blockSize % lbs != 0) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a multiple of the device's "
                    + lbs + "-byte logical block");
        }
        if (blockSize > dev.maxIoSize()) {
            throw new IllegalArgumentException("block size " + Units.size(blockSize) + " exceeds the device's max IO "
                    + Units.size(dev.maxIoSize()));
        }
        if (offset % lbs != 0 || length % lbs != 0) {
            throw new IllegalArgumentException("offset and length must be multiples of " + lbs);
        }
        if (offset >= dev.size() || rangeLength(dev) > dev.size() - offset) {
            throw new IllegalArgumentException("range " + offset + "+" + rangeLength(dev) + " is beyond the device's "
                    + dev.size() + " bytes");
        }
        long blocks = rangeLength(dev) / blockSize;
        if (blocks == 0) {
            throw new IllegalArgumentException("the range holds no block of " + blockSize + " bytes");
        }
        if (readPercent < 100 && !dev.capabilities().write()) {
            throw new IllegalArgumentException("the device is read-only: use a read-only workload (randread, read)");
        }
        if (verify && readPercent == 100) {
            throw new IllegalArgumentException("verify needs writes: use randrw, rw or a write workload");
        }
        if (verify && blocks <= queueDepth) {
            throw new IllegalArgumentException("verify needs more blocks (" + blocks + ") than the queue depth ("
                    + queueDepth + ")");
        }
    }

    long rangeLength(BlockDevice dev) {
        return length == 0 ? dev.size() - offset : length;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Defaults: randread, 4k, queue depth 32, batch 4, 10 s, no verification, whole device, stop
     * after 100 errors. A batch never waits for IO to complete: it takes only what is ready. Four
     * is where batching paid most on two vCPUs ({@code docs/perf.md}); larger batches there
     * turned the threads into a convoy that takes turns instead of running side by side.
     */
    public static final class Builder {
        private int readPercent = 100;
        private boolean random = true;
        private int mixRead = 50;
        private boolean mixed;
        private int blockSize = 4096;
        private int queueDepth = 32;
        private Duration duration = Duration.ofSeconds(10);
        private long ioCount;
        private boolean verify;
        private long offset;
        private long length;
        private long seed = 1;
        private long maxErrors = 100;
        private int batch = 4;

        /** One of randread, randwrite, randrw, read, write, rw (as fio's {@code --rw}). */
        public Builder workload(String rw) {
            String w = rw.trim().toLowerCase(Locale.ROOT);
            random = w.startsWith("rand");
            String base = random ? w.substring(4) : w;
            switch (base) {
                case "read": readPercent = 100; mixed = false; break;
                case "write": readPercent = 0; mixed = false; break;
                case "rw": mixed = true; break;
                default: throw new IllegalArgumentException("unknown workload " + rw
                        + " (randread, randwrite, randrw, read, write, rw)");
            }
            return this;
        }

        /** Percentage of reads in a mixed (rw, randrw) workload; default 50. */
        public Builder mixRead(int percent) {
            this.mixRead = percent;
            return this;
        }

        public Builder blockSize(int bytes) {
            this.blockSize = bytes;
            return this;
        }

        public Builder queueDepth(int depth) {
            this.queueDepth = depth;
            return this;
        }

        /** Zero: no time limit (then an IO count is needed). */
        public Builder duration(Duration d) {
            this.duration = d;
            return this;
        }

        /** Zero: no count limit. */
        public Builder ioCount(long n) {
            this.ioCount = n;
            return this;
        }

        public Builder verify(boolean v) {
            this.verify = v;
            return this;
        }

        public Builder range(long offset, long length) {
            this.offset = offset;
            this.length = length;
            return this;
        }

        public Builder seed(long s) {
            this.seed = s;
            return this;
        }

        public Builder maxErrors(long n) {
            this.maxErrors = n;
            return this;
        }

        /** At most this many ready IOs per plug; 1: each alone. */
        public Builder batch(int n) {
            this.batch = n;
            return this;
        }

        public LoadSpec build() {
            return new LoadSpec(mixed ? mixRead : readPercent, random, blockSize, queueDepth, duration, ioCount,
                    verify, offset, length, seed, maxErrors, batch);
        }
    }
}
