package io.rnbd.loadgen;

import io.rnbd.rnbd.api.BlockBackend;
import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.BlockRequests;
import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

/**
 * The load generator outside Karaf, against a backend found with {@link ServiceLoader} (put
 * rnbd-backend-memory or rnbd-backend-file on the class path), for benchmarks:
 * <pre>
 * java -cp loadgen.jar:rnbd-api.jar:common.jar:HdrHistogram.jar:gson.jar:rnbd-backend-memory.jar \
 *     io.rnbd.loadgen.LoadGenMain --size 1g --rw randrw --bs 4k --qd 32 --runtime 10s --verify
 * </pre>
 * Progress goes to stderr once a second, the results (table or {@code --json}) to stdout.
 * Exit status: 0 clean, 1 IO errors or verification mismatches, 2 bad arguments or open failure.
 */
public final class LoadGenMain {
    private static final String USAGE = "usage: LoadGenMain [--backend memory|file] [--size 1g] [-o key=value]...\n"
            + "  [--rw randread|randwrite|randrw|read|write|rw] [--rwmixread 50] [--bs 4k] [--qd 32] [--batch 4]\n"
            + "  [--runtime 10s] [--ios N] [--verify] [--offset 0] [--length 0] [--seed 1] [--max-errors 100]\n"
            + "  [--json] [--quiet]";

    private LoadGenMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        String backendType = "memory";
        Map<String, String> params = new LinkedHashMap<>();
        LoadSpec.Builder b = LoadSpec.builder();
        boolean json = false;
        boolean quiet = false;
        long offset = 0;
        long length = 0;
        LoadSpec spec;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--json": json = true; continue;
                    case "--quiet": quiet = true; continue;
                    case "--verify": b.verify(true); continue;
                    case "-h": case "--help": out.println(USAGE); return 0;
                    default: break;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(a.startsWith("-") ? a + " needs a value" : "unexpected " + a);
                }
                String v = args[++i];
                switch (a) {
                    case "--backend": backendType = v; break;
                    case "--size": params.put("size", v); break;
                    case "-o": {
                        int eq = v.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException("-o takes key=value, not " + v);
                        }
                        params.put(v.substring(0, eq), v.substring(eq + 1));
                        break;
                    }
                    case "--rw": b.workload(v); break;
                    case "--rwmixread": b.mixRead(Integer.parseInt(v)); break;
                    case "--bs": b.blockSize(Math.toIntExact(Units.parseSize("block size", v))); break;
                    case "--qd": b.queueDepth(Integer.parseInt(v)); break;
                    case "--batch": b.batch(Integer.parseInt(v)); break;
                    case "--runtime": b.duration(Units.parseDuration("runtime", v)); break;
                    case "--ios": b.ioCount(Long.parseLong(v)); break;
                    case "--offset": offset = Units.parseSize("offset", v); break;
                    case "--length": length = Units.parseSize("length", v); break;
                    case "--seed": b.seed(Long.parseLong(v)); break;
                    case "--max-errors": b.maxErrors(Long.parseLong(v)); break;
                    default: throw new IllegalArgumentException("unknown option " + a);
                }
            }
            b.range(offset, length);
            if (backendType.equals("memory")) {
                params.putIfAbsent("size", "1g");
            }
            spec = b.build();
        } catch (IllegalArgumentException | ArithmeticException e) {
            err.println("Error: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        BlockBackend backend = find(backendType);
        if (backend == null) {
            err.println("Error: no '" + backendType + "' backend on the class path");
            return 2;
        }
        // through the check rnbd-server makes: the backend's device trusts its caller
        try (BlockDevice dev = BlockRequests.checked(backend.open(params, false))) {
            String name = backendType + params;
            LoadGenerator gen;
            try {
                gen = new LoadGenerator(dev, spec);
            } catch (IllegalArgumentException e) {
                err.println("Error: " + e.getMessage());
                return 2;
            }
            if (!quiet) {
                err.println(LoadReport.describe(name, spec));
            }
            LoadResult r = gen.start(quiet ? null : p -> err.println(LoadReport.progressLine(p)))
                    .get(spec.duration().toMillis() + TimeUnit.HOURS.toMillis(1), TimeUnit.MILLISECONDS);
            out.print(json ? LoadReport.json(name, r) + "\n" : LoadReport.table(name, r));
            return r.counters().errors() == 0 && r.counters().mismatches() == 0 ? 0 : 1;
        } catch (IOException e) {
            err.println("Error: " + e.getMessage());
            return 2;
        } catch (Exception e) {
            err.println("Error: " + e);
            return 1;
        } finally {
            if (backend instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception e) {
                    err.println("Error: closing the backend: " + e.getMessage());
                }
            }
        }
    }

    private static BlockBackend find(String type) {
        for (BlockBackend b : ServiceLoader.load(BlockBackend.class)) {
            if (b.type().equals(type)) {
                return b;
            }
        }
        return null;
    }
}
