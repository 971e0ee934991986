package io.rnbd.rnbd.command;

import io.rnbd.loadgen.LoadGenerator;
import io.rnbd.loadgen.LoadProgress;
import io.rnbd.loadgen.LoadReport;
import io.rnbd.loadgen.LoadResult;
import io.rnbd.loadgen.LoadSpec;
import io.rnbd.loadgen.Units;
import io.rnbd.rnbd.api.DeviceClaim;
import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rnbd.command.completers.DeviceNameCompleter;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.osgi.framework.BundleContext;

/**
 * {@code rnbd:bench rnbd0 --rw randrw --bs 4k --qd 32 --runtime 10s --verify}: the load generator
 * against a mapped device, with a live progress line and a results table (or {@code --json}).
 * Ctrl-C ends the run early and still prints the results.
 */
@Service
@Command(scope = "rnbd", name = "bench",
        description = "Run a load (fio-like) against a mapped device: IOPS, MiB/s, latency percentiles, verification")
public class BenchCommand implements Action {
    private static final long STOP_GRACE_SECONDS = 30;

    @Reference
    BundleContext bundleContext;

    @Argument(index = 0, name = "device", description = "Name of the mapped device (e.g. rnbd0)", required = true)
    @Completion(DeviceNameCompleter.class)
    String device;

    @Option(name = "--rw", description = "Workload: randread, randwrite, randrw, read, write, rw")
    String rw = "randread";

    @Option(name = "--rwmixread", description = "Percentage of reads in rw and randrw")
    int rwMixRead = 50;

    @Option(name = "--bs", description = "Block size (512, 4k, 64k, 128k)")
    String blockSize = "4k";

    @Option(name = "--qd", aliases = "--iodepth", description = "Queue depth: IOs kept in flight")
    int queueDepth = 32;

    @Option(name = "--batch", aliases = "--iodepth-batch",
            description = "At most this many ready IOs submitted together under one plug (1: each alone); default 4")
    int batch = 4;

    @Option(name = "--runtime", aliases = "-t", description = "How long (500ms, 10s, 2m); default 10s, or none with --ios")
    String runtime;

    @Option(name = "--ios", description = "Stop after this many IOs")
    long ios;

    @Option(name = "--verify", description = "Write a checked pattern and verify every read of a written block")
    boolean verify;

    @Option(name = "--offset", description = "Start of the range to use")
    String offset = "0";

    @Option(name = "--length", description = "Length of the range to use (default: to the end)")
    String length = "0";

    @Option(name = "--seed", description = "Seed of the random offsets")
    long seed = 1;

    @Option(name = "--max-errors", description = "Stop after this many failed IOs (0: never)")
    long maxErrors = 100;

    @Option(name = "--json", description = "Print the results as JSON (no progress line)")
    boolean json;

    /** Where to print; the console's System.out unless a test sets it. */
    PrintStream out;

    @Override
    public Object execute() {
        PrintStream o = out != null ? out : System.out;
        LoadSpec spec;
        try {
            spec = spec();
        } catch (IllegalArgumentException | ArithmeticException e) {
            o.println("Error: " + e.getMessage());
            return null;
        }
        try (DeviceLookup.Held held = DeviceLookup.hold(bundleContext, device)) {
            RemoteBlockDevice dev = held.device();
            try (DeviceClaim claim = dev.claim("rnbd:bench")) {
                run(o, dev, spec);
            }
        } catch (IllegalArgumentException | IllegalStateException e) {
            o.println("Error: " + e.getMessage());
        } catch (RuntimeException e) {
            o.println("Error: " + e);
        }
        return null;
    }

    private LoadSpec spec() {
        Duration d = runtime != null ? Units.parseDuration("runtime", runtime)
                : ios > 0 ? Duration.ZERO : Duration.ofSeconds(10);
        return LoadSpec.builder().workload(rw).mixRead(rwMixRead)
                .blockSize(Math.toIntExact(Units.parseSize("block size", blockSize)))
                .queueDepth(queueDepth).batch(batch).duration(d).ioCount(ios).verify(verify)
                .range(Units.parseSize("offset", offset), Units.parseSize("length", length))
                .seed(seed).maxErrors(maxErrors).build();
    }

    private void run(PrintStream o, RemoteBlockDevice dev, LoadSpec spec) {
        LoadGenerator gen = new LoadGenerator(dev, spec);
        // progress is printed by this thread: the console's System.out belongs to the command's thread
        BlockingQueue<LoadProgress> progress = new LinkedBlockingQueue<>();
        if (!json) {
            o.println(LoadReport.describe(device, spec));
        }
        CompletableFuture<LoadResult> done = gen.start(json ? null : progress::offer);
        boolean printed = false;
        try {
            while (!done.isDone()) {
                LoadProgress p = progress.poll(100, TimeUnit.MILLISECONDS);
                if (p != null) {
                    o.print("\r" + LoadReport.progressLine(p));
                    o.flush();
                    printed = true;
                }
            }
        } catch (InterruptedException e) {
            gen.stop();
            Thread.currentThread().interrupt();
        }
        if (printed) {
            o.println();
        }
        LoadResult r;
        try {
            r = waitUninterruptibly(done);
        } catch (TimeoutException e) {
            o.println("Error: IO still in flight " + STOP_GRACE_SECONDS + " s after the run was stopped");
            return;
        } catch (ExecutionException e) {
            o.println("Error: " + e.getCause().getMessage());
            return;
        }
        o.print(json ? LoadReport.json(device, r) + "\n" : LoadReport.table(device, r));
    }

    private static LoadResult waitUninterruptibly(CompletableFuture<LoadResult> done)
            throws TimeoutException, ExecutionException {
        boolean interrupted = Thread.interrupted();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STOP_GRACE_SECONDS);
        try {
            while (true) {
                try {
                    return done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
