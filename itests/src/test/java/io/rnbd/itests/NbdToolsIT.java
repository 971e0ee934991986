package io.rnbd.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import org.junit.After;
import org.junit.Assume;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;

import io.rnbd.rnbd.api.RemoteBlockDevice;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.api.RtrsClientAdmin;

/**
 * The shipped default profile driven by the real NBD clients, the way a user meets it: each
 * tool talks to nbd-gateway on 127.0.0.1, which serves the mapped device rnbd0, which is export
 * mem0 (1 GiB in memory) over RNBD on the appliance's own two-path RTRS session on the soft RDMA
 * provider. Every test owns a region of the device, so they run in any order on one container:
 * nbdcopy [0, 256 MiB) (it always starts at 0), qemu-img [512, 576 MiB), fio [768, 896 MiB),
 * and [960, 968 MiB) stays unwritten. A tool that is not installed skips its test.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class NbdToolsIT extends KarafTestSupport {

    private static final long MIB = 1L << 20;
    private static final long DEVICE_SIZE = 1L << 30;
    private static final long COPY_SIZE = 256 * MIB;
    private static final long CONVERT_OFFSET = 512 * MIB;
    private static final long CONVERT_SIZE = 64 * MIB;
    private static final long FIO_OFFSET = 768 * MIB;
    private static final long UNWRITTEN_OFFSET = 960 * MIB;

    /** 256 MiB through the soft provider on a busy 2-core machine: room for a slow run. */
    private static final long BIG_TOOL_TIMEOUT_MS = 180_000;

    private Path dir;

    @Configuration
    public Option[] config() {
        // the shipped profile on ports of its own (the gateway's: nbdPort()), paths retrying after 1 s
        return new Option[] {applianceOnFreePorts()};
    }

    /**
     * rnbd0 mapped, both appliance paths connected and nbd-gateway using the device: the tools
     * then meet the whole data path, not a gateway that answers "no such export".
     */
    @Before
    public void settledAppliance() throws Exception {
        waitForDevice("rnbd0");
        RtrsClientAdmin client = waitForService(RtrsClientAdmin.class, null, TIMEOUT_MS);
        awaitCondition("both appliance paths connected", () -> connectedPaths(client, "appliance") == 2,
                3 * TIMEOUT_MS, () -> executeCommand("rtrs:paths appliance"));
        ServiceReference<RemoteBlockDevice> device =
                bundleContext.getServiceReferences(RemoteBlockDevice.class, "(rnbd.device=rnbd0)").iterator().next();
        // the gateway picks the device up through a dynamic reference
        awaitNoProblems("nbd-gateway serving rnbd0",
                () -> usedByGateway(device) ? "" : "rnbd0 not yet used by nbd-gateway", TIMEOUT_MS);
        dir = Files.createTempDirectory("nbd-tools-it");
    }

    @After
    public void deleteTempFiles() throws IOException {
        if (dir != null) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Files.delete(file);
                }
            }
            Files.delete(dir);
        }
    }

    @Test
    public void nbdinfoListsRnbd0WithItsSize() throws Exception {
        assumeInstalled("nbdinfo", "libnbd-bin");
        String json = run(TIMEOUT_MS, "nbdinfo", "--list", "--json", "nbd://127.0.0.1:" + nbdPort());
        // one object per export, each opening with its name: the size that follows is the export's
        Matcher export = Pattern.compile("\"export-name\":\\s*\"([^\"]*)\"[^}]*?\"export-size\":\\s*(\\d+)")
                .matcher(json);
        StringBuilder listed = new StringBuilder();
        Long size = null;
        while (export.find()) {
            listed.append(' ').append(export.group(1)).append('=').append(export.group(2));
            if (export.group(1).equals("rnbd0")) {
                size = Long.parseLong(export.group(2));
            }
        }
        assertNotNull("rnbd0 not among the exports listed:" + listed + "\n" + json, size);
        assertEquals("size of rnbd0 in the export list", DEVICE_SIZE, size.longValue());
    }

    /** Writes with nbdcopy from a file, reads the device back with nbdcopy to a pipe. */
    @Test
    public void nbdcopyRoundTrips256MiBOfRandomData() throws Exception {
        assumeInstalled("nbdcopy", "libnbd-bin");
        long seed = System.nanoTime();
        Path source = dir.resolve("source.bin");
        Digests written = writeRandom(source, COPY_SIZE, seed);

        run(BIG_TOOL_TIMEOUT_MS, "nbdcopy", "--flush", source.toString(), uri());
        Files.delete(source);

        // nbdcopy has no offset or length: it copies the whole 1 GiB, of which the first 256 MiB count
        ReadBack back = readBack(BIG_TOOL_TIMEOUT_MS, COPY_SIZE, "nbdcopy", uri(), "-");
        assertEquals("bytes nbdcopy read from rnbd0", DEVICE_SIZE, back.total);
        int firstBad = written.firstDifferentMiB(back.digests);
        assertEquals("256 MiB written with seed " + seed + " read back different, first in MiB " + firstBad,
                -1, firstBad);
        assertArrayEquals("SHA-256 of the 256 MiB (seed " + seed + ")", written.sha256(), back.digests.sha256());
    }

    /**
     * qemu's own NBD client, confined to the test's region by the raw driver's offset and size:
     * compare then sees two images of the same size and needs nothing about the rest of the disk.
     */
    @Test
    public void qemuImgConvertsIntoTheDeviceAndComparesEqual() throws Exception {
        assumeInstalled("qemu-img", "qemu-utils");
        Path source = dir.resolve("convert.bin");
        writeRandom(source, CONVERT_SIZE, System.nanoTime());
        String sourceOpts = "driver=raw,file.driver=file,file.filename=" + source;
        String region = "driver=raw,offset=" + CONVERT_OFFSET + ",size=" + CONVERT_SIZE
                + ",file.driver=nbd,file.server.type=inet,file.server.host=127.0.0.1,file.server.port=" + nbdPort()
                + ",file.export=rnbd0";

        run(BIG_TOOL_TIMEOUT_MS, "qemu-img", "convert", "-n", "-f", "raw", source.toString(),
                "--target-image-opts", region);
        String same = run(BIG_TOOL_TIMEOUT_MS, "qemu-img", "compare", "--image-opts", sourceOpts, region);
        assertTrue(same, same.contains("Images are identical"));

        // the same compare must see a single byte changed: otherwise the pass above proves nothing
        long flipped = CONVERT_SIZE / 2 + 12_345;
        try (RandomAccessFile file = new RandomAccessFile(source.toFile(), "rw")) {
            file.seek(flipped);
            int b = file.read();
            file.seek(flipped);
            file.write(b ^ 0x01);
        }
        Result differ = exec(BIG_TOOL_TIMEOUT_MS, "qemu-img", "compare", "--image-opts", sourceOpts, region);
        assertEquals("qemu-img compare with one byte flipped: " + differ.output, 1, differ.exit);
        // compare names the 512-byte sector it differs in
        assertTrue(differ.output, differ.output.contains("Content mismatch at offset " + (flipped & ~511L) + "!"));
    }

    /**
     * fio's libnbd engine: random writes with a CRC32C header in every block, then a verify
     * pass reading all of them back, at 4 KiB and at 128 KiB, 16 in flight.
     */
    @Test
    public void fioVerifiesCrc32cOverTheNbdEngine() throws Exception {
        assumeInstalled("fio", "fio");
        Result engine = exec(TIMEOUT_MS, "fio", "--enghelp=nbd");
        Assume.assumeTrue("this fio has no nbd engine (built without libnbd): " + engine.output,
                engine.exit == 0 && engine.output.contains("uri"));

        String output = run(BIG_TOOL_TIMEOUT_MS, "fio", "--ioengine=nbd", "--uri=" + uri(),
                "--rw=randwrite", "--iodepth=16", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1",
                "--name=rand4k", "--bs=4k", "--offset=" + FIO_OFFSET, "--size=" + 32 * MIB,
                "--name=rand128k", "--stonewall", "--bs=128k", "--offset=" + (FIO_OFFSET + 64 * MIB),
                "--size=" + 64 * MIB);
        for (String job : new String[] {"rand4k", "rand128k"}) {
            Matcher result = Pattern.compile("(?m)^" + job + ": \\(groupid=\\d+, jobs=1\\): err=\\s*(\\d+)")
                    .matcher(output);
            assertTrue("no result for job " + job + ":\n" + output, result.find());
            assertEquals("error of job " + job + ":\n" + output, "0", result.group(1));
        }
        // the verify pass read back every block written: as many reads as writes, per job
        Matcher issued = Pattern.compile("issued rwts: total=(\\d+),(\\d+),").matcher(output);
        int jobs = 0;
        while (issued.find()) {
            jobs++;
            assertNotEquals("no writes:\n" + output, "0", issued.group(2));
            assertEquals("reads (verify) against writes:\n" + output, issued.group(2), issued.group(1));
        }
        assertEquals("jobs that reported their IO:\n" + output, 2, jobs);
        assertFalse(output, output.contains("verify:"));

        // and the same verify finds what it did not write: otherwise the pass above proves nothing
        Result unwritten = exec(BIG_TOOL_TIMEOUT_MS, "fio", "--ioengine=nbd", "--uri=" + uri(),
                "--rw=randwrite", "--iodepth=16", "--verify=crc32c", "--verify_only", "--verify_fatal=1",
                "--name=unwritten", "--bs=4k", "--offset=" + UNWRITTEN_OFFSET, "--size=" + 8 * MIB);
        assertNotEquals("fio verified a region it never wrote:\n" + unwritten.output, 0, unwritten.exit);
        assertTrue(unwritten.output, unwritten.output.contains("verify: bad magic header"));
    }

    // ---- the device and the tools

    private static String uri() {
        return "nbd://127.0.0.1:" + nbdPort() + "/rnbd0";
    }

    private static int connectedPaths(RtrsClientAdmin client, String session) {
        return (int) client.session(session).map(s -> s.paths().stream()
                .filter(p -> p.state() == PathState.CONNECTED).count()).orElse(0L).longValue();
    }

    private static boolean usedByGateway(ServiceReference<?> reference) {
        Bundle[] users = reference.getUsingBundles();
        return users != null && Arrays.stream(users).anyMatch(b -> "nbd-gateway".equals(b.getSymbolicName()));
    }

    private static void assumeInstalled(String tool, String debianPackage) {
        boolean found = false;
        for (String path : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            found |= new File(path, tool).canExecute();
        }
        Assume.assumeTrue(tool + " is not installed (Debian package " + debianPackage + ")", found);
    }

    private static final class Result {
        final int exit;
        final String output;

        Result(int exit, String output) {
            this.exit = exit;
            this.output = output;
        }
    }

    /** Runs a tool to completion; fails on timeout. Output goes through a file: no pipe to fill. */
    private Result exec(long timeoutMs, String... command) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "tool", ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean done = process.waitFor(timeoutMs, TimeUnit.MILLISECONDS);
        if (!done) {
            process.destroyForcibly().waitFor();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        if (!done) {
            fail(String.join(" ", command) + " did not finish within " + timeoutMs + " ms: " + output);
        }
        return new Result(process.exitValue(), output);
    }

    /** {@link #exec}, and fails unless the tool exited 0; returns its output. */
    private String run(long timeoutMs, String... command) throws IOException, InterruptedException {
        Result result = exec(timeoutMs, command);
        assertEquals(String.join(" ", command) + ":\n" + result.output, 0, result.exit);
        return result.output;
    }

    /**
     * Runs a tool that writes the device to its standard output and digests the first
     * {@code digested} bytes as they stream by, counting the rest: 256 MiB never sit in the heap.
     */
    private ReadBack readBack(long timeoutMs, long digested, String... command) throws Exception {
        Path log = Files.createTempFile(dir, "tool", ".log");
        Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            Future<ReadBack> read = reader.submit(() -> {
                try (InputStream in = process.getInputStream()) {
                    return ReadBack.of(in, digested);
                }
            });
            ReadBack back;
            try {
                back = read.get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                process.destroyForcibly().waitFor();
                throw new AssertionError(String.join(" ", command) + " did not finish within " + timeoutMs
                        + " ms: " + Files.readString(log, StandardCharsets.UTF_8));
            }
            assertTrue(String.join(" ", command) + " still running after its output ended",
                    process.waitFor(TIMEOUT_MS, TimeUnit.MILLISECONDS));
            assertEquals(String.join(" ", command) + ":\n" + Files.readString(log, StandardCharsets.UTF_8),
                    0, process.exitValue());
            return back;
        } finally {
            reader.shutdownNow();
            process.destroyForcibly();
        }
    }

    /** Writes {@code size} bytes from {@code Random(seed)} to a file, digesting them on the way. */
    private static Digests writeRandom(Path file, long size, long seed) throws IOException {
        Random random = new Random(seed);
        Digests digests = new Digests(size);
        byte[] chunk = new byte[(int) MIB];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long done = 0; done < size; done += MIB) {
                random.nextBytes(chunk);
                digests.update(chunk, 0, chunk.length);
                out.write(chunk);
            }
        }
        return digests;
    }

    private static final class ReadBack {
        final Digests digests;
        final long total;

        private ReadBack(Digests digests, long total) {
            this.digests = digests;
            this.total = total;
        }

        static ReadBack of(InputStream in, long digested) throws IOException {
            Digests digests = new Digests(digested);
            byte[] buffer = new byte[(int) MIB];
            long total = 0;
            for (int n; (n = in.read(buffer)) > 0; total += n) {
                long wanted = Math.max(0, Math.min(n, digested - total));
                digests.update(buffer, 0, (int) wanted);
            }
            return new ReadBack(digests, total);
        }
    }

    /**
     * SHA-256 of the whole stream for identity, and a CRC32C per MiB to say where two streams
     * part.
     */
    private static final class Digests {
        private final MessageDigest sha256;
        private final long[] perMiB;
        private final CRC32C crc = new CRC32C();
        private long length;

        Digests(long size) {
            try {
                sha256 = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
            perMiB = new long[(int) ((size + MIB - 1) / MIB)];
        }

        void update(byte[] bytes, int offset, int count) {
            sha256.update(bytes, offset, count);
            while (count > 0) {
                int inThisMiB = (int) Math.min(count, MIB - length % MIB);
                crc.update(bytes, offset, inThisMiB);
                offset += inThisMiB;
                count -= inThisMiB;
                length += inThisMiB;
                if (length % MIB == 0) {
                    perMiB[(int) (length / MIB) - 1] = crc.getValue();
                    crc.reset();
                }
            }
        }

        byte[] sha256() {
            return sha256.digest();
        }

        /** The first MiB whose CRC differs, or -1. */
        int firstDifferentMiB(Digests other) {
            return Arrays.mismatch(perMiB, other.perMiB);
        }
    }
}
