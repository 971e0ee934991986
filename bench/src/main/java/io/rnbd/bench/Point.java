package io.rnbd.bench;

import io.rnbd.loadgen.LoadSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** One measuring point: fio-style workload, block size and queue depth, e.g. {@code randread:4k:32}. */
record Point(String workload, int blockSize, int queueDepth) {
    static Point parse(String text) {
        String[] p = text.split(":");
        if (p.length != 3) {
            throw new IllegalArgumentException("point " + text + " is not workload:bs:qd");
        }
        String bs = p[1].toLowerCase(Locale.ROOT);
        int mult = bs.endsWith("k") ? 1024 : 1;
        int n = Integer.parseInt(mult == 1 ? bs : bs.substring(0, bs.length() - 1)) * mult;
        return new Point(p[0], n, Integer.parseInt(p[2]));
    }

    static List<Point> parseList(String text) {
        List<Point> l = new ArrayList<>();
        for (String s : text.split(",")) {
            l.add(parse(s.trim()));
        }
        return l;
    }

    /** The load generator's submission batch for every point and target; the generator's default unless set. */
    static final Integer BATCH = Integer.getInteger("rnbd.bench.batch");

    LoadSpec spec(Duration d, long seed) {
        LoadSpec.Builder b = LoadSpec.builder().workload(workload).blockSize(blockSize).queueDepth(queueDepth)
                .duration(d).seed(seed);
        if (BATCH != null) {
            b.batch(BATCH);
        }
        return b.build();
    }

    @Override
    public String toString() {
        return workload + ":" + (blockSize % 1024 == 0 ? blockSize / 1024 + "k" : Integer.toString(blockSize)) + ":"
                + queueDepth;
    }
}
