package io.rnbd.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The machine's baseline: copying one IO's worth of bytes between two direct buffers, at the
 * two sizes every comparison uses (4 KiB random IO, 128 KiB = one RTRS chunk). Every data path
 * copies at least once, so no transport figure can beat this; quote results as a fraction of it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MemcpyBaseline {

    @Param({"4096", "131072"})
    int size;

    private ByteBuffer src;
    private ByteBuffer dst;

    @Setup
    public void allocate() {
        src = ByteBuffer.allocateDirect(size);
        dst = ByteBuffer.allocateDirect(size);
        byte[] noise = new byte[size];
        ThreadLocalRandom.current().nextBytes(noise);
        src.put(noise).flip();
    }

    /** One copy of {@code size} bytes; bytes/s = ops/s × size. */
    @Benchmark
    public ByteBuffer copy() {
        dst.clear();
        dst.put(src.duplicate());
        return dst;
    }
}
