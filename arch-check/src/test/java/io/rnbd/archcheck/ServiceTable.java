package io.rnbd.archcheck;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The service wiring of every bundle, rendered as the Markdown table of docs/architecture.md:
 * what it provides (by DS, or by hand and declared with {@code @Capability}), the property that
 * tells alternatives apart, and what it consumes (DS references with cardinality, policy and
 * target; {@code @Requirement}s for what it looks up outside DS).
 */
final class ServiceTable {
    /** The properties that tell the providers of one service apart (docs/architecture.md, "The hot-swap rule"). */
    static final List<String> DISCRIMINATORS = List.of("rdma.provider", "rtrs.auth", "rtrs.mp.policy", "rnbd.backend");

    private ServiceTable() {
    }

    static String render(List<BundleInfo> bundles) {
        List<BundleInfo> sorted = new ArrayList<>(bundles);
        sorted.sort(Comparator.comparing((BundleInfo b) -> Layers.of(b.bsn()).rank())
                .thenComparing(b -> Layers.of(b.bsn()).name()).thenComparing(BundleInfo::bsn));
        StringBuilder out = new StringBuilder();
        out.append("| layer | bundle | provides | discriminating property | consumes |\n");
        out.append("|---|---|---|---|---|\n");
        List<String> quiet = new ArrayList<>();
        for (BundleInfo b : sorted) {
            List<String> provides = provides(b);
            List<String> consumes = consumes(b);
            if (provides.isEmpty() && consumes.isEmpty()) {
                quiet.add("`" + b.bsn() + "`");
                continue;
            }
            out.append("| ").append(Layers.of(b.bsn()).name()).append(" | `").append(b.bsn()).append("` | ")
                    .append(cell(provides)).append(" | ").append(cell(discriminators(b))).append(" | ")
                    .append(cell(consumes)).append(" |\n");
        }
        out.append("\nNo service, provided or consumed: ").append(String.join(", ", quiet)).append(".\n");
        return out.toString();
    }

    /** One entry per DS component service set and per declared hand registration. */
    static List<String> provides(BundleInfo b) {
        Set<String> out = new LinkedHashSet<>();
        Set<Set<String>> ds = new HashSet<>();
        b.dsServiceSets().forEach(l -> ds.add(Set.copyOf(l)));
        for (BundleInfo.Component c : b.components()) {
            if (!c.services().isEmpty()) {
                out.add(names(c.services()) + ("require".equals(c.configPolicy()) ? " per config" : ""));
            }
        }
        for (BundleInfo.Service s : b.provides()) {
            if (!ds.contains(Set.copyOf(s.objectClass()))) {
                out.add(names(s.objectClass()) + " by hand");
            }
        }
        return new ArrayList<>(new TreeSet<>(out));
    }

    static List<String> discriminators(BundleInfo b) {
        Set<String> out = new TreeSet<>();
        for (BundleInfo.Component c : b.components()) {
            if (c.services().isEmpty()) {
                continue;
            }
            for (String key : DISCRIMINATORS) {
                List<String> v = c.properties().get(key);
                if (v != null) {
                    out.add("`" + key + "=" + String.join(",", v) + "`");
                }
            }
        }
        for (BundleInfo.Service s : b.provides()) {
            for (String key : DISCRIMINATORS) {
                String v = s.attrs().get(key);
                if (v != null) {
                    out.add("`" + key + "=" + v + "`");
                }
            }
        }
        return new ArrayList<>(out);
    }

    static List<String> consumes(BundleInfo b) {
        Set<String> out = new TreeSet<>();
        Set<String> byDs = new HashSet<>();
        for (BundleInfo.Component c : b.components()) {
            for (BundleInfo.Ref r : c.refs()) {
                byDs.add(r.iface());
                StringBuilder e = new StringBuilder(names(List.of(r.iface())));
                String card = switch (r.cardinality()) {
                    case "0..1" -> "optional";
                    case "0..n" -> "0..n";
                    case "1..n" -> "1..n";
                    default -> "";
                };
                List<String> how = new ArrayList<>();
                if (!card.isEmpty()) {
                    how.add(card);
                }
                if ("dynamic".equals(r.policy())) {
                    how.add("dynamic");
                }
                if ("greedy".equals(r.option())) {
                    how.add("greedy");
                }
                if (!how.isEmpty()) {
                    e.append(' ').append(String.join(" ", how));
                }
                if (!r.target().isEmpty()) {
                    e.append(" `").append(r.target()).append('`');
                }
                out.add(e.toString());
            }
        }
        for (BundleInfo.Need n : b.requires()) {
            if (n.objectClass().isEmpty() || byDs.containsAll(n.objectClass())) {
                continue;
            }
            String plain = "(objectClass=" + n.objectClass().get(0) + ")";
            out.add(names(n.objectClass()) + " outside DS" + (n.optional() ? ", optional" : "")
                    + (n.filter().equals(plain) ? "" : " `" + n.filter() + "`"));
        }
        return new ArrayList<>(out);
    }

    private static String names(List<String> types) {
        List<String> simple = new ArrayList<>();
        for (String t : types) {
            simple.add("`" + t.substring(t.lastIndexOf('.') + 1) + "`");
        }
        return String.join(" + ", simple);
    }

    private static String cell(List<String> entries) {
        // a '|' of a filter would end the cell
        return entries.isEmpty() ? "—" : String.join("<br>", entries).replace("|", "\\|");
    }

    /** The section between its markers in a document, or null. */
    static String section(String doc) {
        int from = doc.indexOf(BEGIN);
        int to = doc.indexOf(END);
        if (from < 0 || to < from) {
            return null;
        }
        return doc.substring(doc.indexOf('\n', from) + 1, to);
    }

    static String replaceSection(String doc, String table) {
        int from = doc.indexOf(BEGIN);
        int to = doc.indexOf(END);
        return doc.substring(0, doc.indexOf('\n', from) + 1) + table + doc.substring(to);
    }

    static final String BEGIN = "<!-- service table: begin";
    static final String END = "<!-- service table: end -->";

    /** For the failure message: the first line that differs. */
    static String firstDifference(String expected, String actual) {
        String[] e = expected.split("\n", -1);
        String[] a = actual.split("\n", -1);
        for (int i = 0; i < Math.max(e.length, a.length); i++) {
            String el = i < e.length ? e[i] : "(nothing)";
            String al = i < a.length ? a[i] : "(nothing)";
            if (!el.equals(al)) {
                return "line " + (i + 1) + " of the table:\n  built bundles: " + el + "\n  architecture.md: " + al;
            }
        }
        return "";
    }
}
